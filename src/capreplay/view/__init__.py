"""``capreplay view``: a local, read-only web viewer of runs, episodes, study runs, snapshots and review sheets.

The viewer is a :class:`~capreplay.view.site.Site`: a map from relative paths (``runs/demo/index.html``) to
what each path holds, built from a results folder. The aiohttp app serves that map on 127.0.0.1, and
``--export`` writes the same map to files, so a served page and an exported one are the same bytes and every
link between them is relative (they open from ``file://``). Every script and style is shipped in
``static/``; nothing is fetched from anywhere else.
"""
