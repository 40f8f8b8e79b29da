"""Real web applications, installed from their packages and started on 127.0.0.1, to capture and replay.

Each application is one that nobody on the project wrote and that speaks the traffic the replay has to keep:
JupyterLab (its kernel's WebSocket channels), Gradio (a queue whose results arrive as server-sent events,
joined by JSON POSTs), and Strawberry's GraphiQL page (GraphQL queries sent as JSON POSTs). Each is installed
into a virtual environment of its own under ``.cache/`` (:mod:`.env`), never into capreplay's locked one, and
started with every call to the internet switched off (:mod:`.process` runs and stops it). :mod:`.catalog`
names them with the host name each is captured under and the capture plan that exercises its traffic.
"""
