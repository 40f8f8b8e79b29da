"""The replay server's side of :mod:`capreplay.replay.sequence`: a middleware that holds a ready response until
the page's responses captured before it are sent.

Both ways of answering go through it: the handler says which record it answers with
(:data:`CAPTURED`: the general path's match gives the ``seq``; for a ready response, sent without reading the
index, the ``seq`` is looked up only when a page is being ordered). Each browser has its own ports (see
:meth:`capreplay.replay.server.ReplayServer.listen`), and the HTTP and HTTPS port of one browser share one
page order (:meth:`Ordering.pair`): a page loads from both schemes. The wait itself is
:meth:`capreplay.replay.turns.Ordering.turn`, which the proxy's responder holds its answers in too.

A response is sent here, not by the traffic middleware around this one, so that "sent" means its last byte
is out; a response the handler already sent itself (a WebSocket, an event stream) is not ordered.
"""

from __future__ import annotations

from dataclasses import dataclass

from aiohttp import web

from capreplay.replay.quiet import Handler, request_port
from capreplay.replay.ready.send import ReadyResponse
from capreplay.replay.turns import PACED_DESTS, Ordering, fetch_dest

__all__ = ["CAPTURED", "ORDER", "PACED_DESTS", "Captured", "Ordering", "order_responses"]


@dataclass(frozen=True, slots=True)
class Captured:
    """The record a response answers with, as the handler knows it."""

    url: str
    """The absolute URL requested."""
    seq: int | None
    """The record's capture order; None for a miss, or for a ready response (looked up when needed)."""


ORDER = web.AppKey("order", Ordering)
CAPTURED = web.RequestKey("captured", Captured)


@web.middleware
async def order_responses(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Send the handler's response once the page's responses captured before it are sent (bounded)."""
    response = await handler(request)
    ordering = request.app[ORDER]
    captured: Captured | None = request.get(CAPTURED)
    if captured is None or response.prepared:
        return response

    def seq() -> int | None:
        if captured.seq is None and isinstance(response, ReadyResponse):
            return ordering.seq_of(captured.url)
        return captured.seq

    async with ordering.turn(request_port(request), fetch_dest(request.headers), seq):
        try:
            await response.prepare(request)
            await response.write_eof()
        except ConnectionError:
            pass  # the browser hung up; the traffic middleware sees the response finished and lets it go
    return response
