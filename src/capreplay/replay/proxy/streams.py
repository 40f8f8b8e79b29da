"""Event streams through the proxy: a loopback replay app that the proxy forwards them to, and streams back.

A mitmproxy addon can only answer a request with a whole response. An event stream must go out event by event
(:mod:`capreplay.replay.event_source`), so the proxy sends each request for one to this app, on a loopback port
of its own in the same loop and with the same store, and streams the answer back to the browser as it comes
(:class:`capreplay.replay.proxy.responder.SnapshotResponder`). It is the only server the proxy ever connects to.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from aiohttp import web

from capreplay.replay.answer import Served
from capreplay.replay.app import SERVED, make_app
from capreplay.replay.store import SnapshotStore

SHUTDOWN_S = 1.0
"""How long stopping waits for a stream to end (a cut stream ends when the app shuts down)."""


@contextlib.asynccontextmanager
async def stream_server(store: SnapshotStore, served: list[Served] | None = None) -> AsyncIterator[int]:
    """Serve ``store``'s event streams on a free 127.0.0.1 port (yielded) until the block ends; with ``served``,
    what it answers is logged there too."""
    app = make_app(store, keep_log=served is not None)
    if served is not None:
        app[SERVED] = served
    runner = web.AppRunner(app, access_log=None, shutdown_timeout=SHUTDOWN_S)
    await runner.setup()
    try:
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        yield int(runner.addresses[0][1])
    finally:
        await runner.cleanup()
