"""The replay server's view of each browser's traffic: what is in flight on its ports, and when it went quiet.

Every browser that shares a server has its own ports (:meth:`ReplayServer.listen`), so the server can tell,
for one browser, that none of its requests is being answered and none has started or ended for
:data:`~capreplay.browser.settle.SERVER_QUIET_MS` (counted by :class:`~capreplay.browser.settle.Traffic`).
Waiting for that instead of Playwright's ``networkidle`` (500 ms without a request, counted in the browser) lets
the harness settle a page sooner, with the same rule for every agent.

A request counts from the moment the server receives it until its response has been written out in full (or
the writing failed because the browser went away: a cancelled request never leaves the count stuck); an event
stream counts until its head is out (:func:`release`). A
request the browser never sends to the server (a blocked host fails in the browser's resolver) does not
count: it ends at once and starts nothing that the server would not see.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from aiohttp import web

from capreplay.browser.settle import (
    QUIET_TIMEOUT_MS as QUIET_TIMEOUT_MS,
    SERVER_QUIET_MS as SERVER_QUIET_MS,
    STEP_QUIET_MS as STEP_QUIET_MS,
    Traffic as Traffic,
)

TRAFFIC = web.AppKey("traffic", Traffic)
_COUNTED = web.RequestKey("traffic_counted", int)
"""The port a request is counted on, while it is."""


def request_port(request: web.Request) -> int:
    """The server port ``request`` came in on (0 if the connection is already gone)."""
    sockname = request.transport.get_extra_info("sockname") if request.transport else None
    return int(sockname[1]) if sockname else 0


Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@web.middleware
async def count_traffic(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Count ``request`` in flight on its port until its response is written out."""
    traffic = request.app[TRAFFIC]
    port = request_port(request)
    traffic.started(port)
    request[_COUNTED] = port
    try:
        response = await handler(request)
        # Written here rather than by aiohttp after the middleware returns, so that the request ends only once
        # its last byte is out; aiohttp then finds the response sent and writes nothing more.
        try:
            await response.prepare(request)
            await response.write_eof()
        except ConnectionError:
            # The client hung up: nothing more to count. aiohttp finishes the response and lets a lost
            # connection go quietly, as it does when it writes the response itself.
            pass
        return response
    finally:
        release(request)


def release(request: web.Request) -> None:
    """Stop counting ``request`` in flight now, though its response goes on (an event stream whose head is out:
    it may never end, and must not keep its page from settling); later calls do nothing."""
    port = request.pop(_COUNTED, None)
    if port is not None:
        request.app[TRAFFIC].ended(port)
