"""The aiohttp application that answers every request from the snapshot, and logs how it matched."""

from __future__ import annotations

import dataclasses
import functools

from aiohttp import web
from multidict import CIMultiDict

from capreplay.replay.answer import Served, answer
from capreplay.replay.event_source import end_streams, send_stream, stream_answer
from capreplay.replay.nearest import is_beacon
from capreplay.replay.page_order import CAPTURED, ORDER, Captured, Ordering, order_responses
from capreplay.replay.quiet import TRAFFIC, Traffic, count_traffic, request_port
from capreplay.replay.ready.send import ReadyResponse, ready_for
from capreplay.replay.ready.slot import ReadySlot
from capreplay.replay.response import Outgoing
from capreplay.replay.store import SnapshotStore
from capreplay.replay.websocket import CONNECTIONS, is_websocket_upgrade, serve_websocket

__all__ = ["KEEP_LOG", "ORDER", "READY", "SERVED", "STORE", "TRAFFIC", "Served", "handle", "make_app", "request_url"]

STORE = web.AppKey("store", SnapshotStore)
READY = web.AppKey("ready", ReadySlot)
SERVED = web.AppKey("served", list[Served])
KEEP_LOG = web.AppKey("keep_log", bool)


def _note(request: web.Request, served: Served) -> None:
    # A long-running server must not grow with every request: only bounded sessions (verify, open,
    # tests, agent runs that take their episode's records out) keep the log. Misses are logged through
    # ``logging`` either way.
    if request.app[KEEP_LOG]:
        request.app[SERVED].append(dataclasses.replace(served, port=request_port(request)))


def _browser(request: web.Request) -> int:
    """Which browser sent ``request``, for the repeat rule: its port's pair (looked up only off the ready path,
    since a ready response has one recording and nothing to count)."""
    return request.app[ORDER].browser_of(request_port(request))


def request_url(request: web.Request) -> str:
    """The absolute URL the browser asked for: its scheme, its ``Host`` header, the raw path and query."""
    scheme = "https" if request.secure else "http"
    return f"{scheme}://{request.host}{request.raw_path}"


async def handle(request: web.Request) -> web.StreamResponse:
    """Answer from the archive: exact match, then fuzzy rules, else a 404 that names the nearest URL.

    A plain ``GET`` of an archived URL with one recording is sent ready-made (:mod:`capreplay.replay.ready.send`):
    the same bytes as the general path's, without reading the WARC."""
    url = request_url(request)
    if is_websocket_upgrade(request):
        store, keep = request.app[STORE], request.app[KEEP_LOG]
        note = functools.partial(_note, request)
        return await serve_websocket(request, store, url, note, keep, _browser(request))
    ready = request.app[READY].current
    if ready is not None:
        found = ready_for(ready, request, url)
        if found is not None:
            if request.app[KEEP_LOG]:
                _note(request, Served("GET", url, "hit", None, None, found.status))
            request[CAPTURED] = Captured(url, None)
            return ReadyResponse(ready, found)
    streamed = stream_answer(request.app[STORE], request.method, url, request.headers.get("Last-Event-ID"))
    if streamed is not None:
        _note(request, streamed.served)
        return await send_stream(request, streamed)
    body = await request.read() if request.can_read_body else None
    out, served = answer(
        request.app[STORE],
        request.method,
        url,
        body,
        request.headers.get("Range"),
        beacon=is_beacon(request.headers),
        browser=_browser(request),
    )
    _note(request, served)
    request[CAPTURED] = Captured(url, served.seq)
    return _send(out)


def _send(out: Outgoing) -> web.Response:
    headers: CIMultiDict[str] = CIMultiDict(out.headers)
    response = web.Response(status=out.status, reason=out.reason or None, headers=headers, body=out.body)
    return response


def make_app(
    store: SnapshotStore, *, keep_log: bool = True, ready: ReadySlot | None = None, order: bool = True
) -> web.Application:
    """The replay application for ``store``: one catch-all route; ``keep_log`` keeps every Served record;
    ``ready``: where the snapshot's ready responses are, once there (:mod:`capreplay.replay.ready.slot`). It
    counts every browser port's requests in flight (:mod:`capreplay.replay.quiet`), whatever ``keep_log``, and
    with ``order`` completes each page's responses in the capture's order (:mod:`capreplay.replay.page_order`)."""
    app = web.Application(client_max_size=64 * 1024 * 1024, middlewares=[count_traffic, order_responses])
    app[ORDER] = Ordering(store, enabled=order)
    app[TRAFFIC] = Traffic()
    app[STORE] = store
    app[READY] = ready if ready is not None else ReadySlot()
    app[SERVED] = []
    app[KEEP_LOG] = keep_log
    app[CONNECTIONS] = []
    app.on_shutdown.append(end_streams)
    app.router.add_route("*", "/{tail:.*}", handle)
    return app
