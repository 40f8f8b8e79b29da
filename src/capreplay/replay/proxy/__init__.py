"""The snapshot as an HTTP and HTTPS proxy, for clients that cannot take Chromium's resolver rules.

``capreplay serve --proxy-port N`` runs mitmproxy in-process next to the replay server. Every request is
answered from the archive, through the same decision as the replay server's (``replay.answer``), or
refused when its host is outside the snapshot; the proxy never opens a connection of its own. HTTPS is
terminated with the snapshot's own CA (``ca``), kept in the user's cache folder so it is trusted once.
"""
