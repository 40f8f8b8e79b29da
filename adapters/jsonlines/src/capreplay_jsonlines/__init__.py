"""What every capreplay adapter speaks and does first: the JSON-lines protocol on stdin/stdout
(:mod:`.protocol`), and a process whose stdout carries protocol lines only and whose temporary files stay in
one folder (:mod:`.process`). Its own uv project, a path dependency of each adapter, so the adapters share
one copy and still import nothing of capreplay's."""
