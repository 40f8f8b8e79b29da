"""The replay server's view of each browser's traffic: what is in flight on its ports, and when it went quiet.

Every browser that shares a server has its own ports (:meth:`ReplayServer.listen`), so the server can tell,
for one browser, that none of its requests is being answered and none has started or ended for
:data:`SERVER_QUIET_MS`. Waiting for that instead of Playwright's ``networkidle`` (500 ms without a request,
counted in the browser) lets the harness settle a page sooner, with the same rule for every agent.

A request counts from the moment the server receives it until its response has been written out in full (or
the writing failed because the browser went away: a cancelled request never leaves the count stuck). A
request the browser never sends to the server (a blocked host fails in the browser's resolver) does not
count: it ends at once and starts nothing that the server would not see.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass

from aiohttp import web

SERVER_QUIET_MS = 200
"""How long a browser's ports must have had no request in flight, and none starting or ending, to be quiet.

Longer than the time a page takes to send the request that a response it has just received asks for (a
script's ``fetch``, a stylesheet's font), so a page that is still loading is not taken for a quiet one;
a page that fetches on a timer longer than this is settled before that fetch (Playwright's 500 ms has the
same limit, further out)."""

QUIET_TIMEOUT_MS = 5_000
"""The longest a wait for quiet lasts: a page that polls or streams never goes quiet."""

_POLL_S = 0.01
"""How often a wait looks again while requests are in flight."""


@dataclass
class _Port:
    inflight: int = 0
    changed: float = 0.0
    """The loop time a request last started or ended on this port."""


class Traffic:
    """Requests in flight per server port, and when each port last saw one start or end (loop time)."""

    def __init__(self) -> None:
        self._ports: dict[int, _Port] = {}

    def started(self, port: int) -> None:
        """The server received a request on ``port``."""
        state = self._ports.setdefault(port, _Port())
        state.inflight += 1
        state.changed = asyncio.get_running_loop().time()

    def ended(self, port: int) -> None:
        """The server has written (or given up writing) the response to a request on ``port``."""
        state = self._ports.setdefault(port, _Port())
        state.inflight = max(0, state.inflight - 1)
        state.changed = asyncio.get_running_loop().time()

    def inflight(self, ports: Iterable[int]) -> int:
        """How many requests on ``ports`` are being answered now."""
        return sum(self._ports[p].inflight for p in ports if p in self._ports)

    def changed(self, ports: Iterable[int]) -> float:
        """The loop time a request on ``ports`` last started or ended (0.0: never)."""
        return max((self._ports[p].changed for p in ports if p in self._ports), default=0.0)

    def forget(self, ports: Iterable[int]) -> None:
        """Drop what is known of ``ports`` (closed after an episode), so a long-running server does not grow."""
        for port in ports:
            self._ports.pop(port, None)

    async def quiet(
        self,
        ports: Iterable[int],
        *,
        since: float,
        quiet_ms: float = SERVER_QUIET_MS,
        timeout_ms: float = QUIET_TIMEOUT_MS,
    ) -> bool:
        """Wait until nothing is in flight on ``ports`` and nothing started or ended there for ``quiet_ms``
        after ``since`` (a loop time: when the browser was last told to act), at most ``timeout_ms``;
        whether they did go quiet."""
        ports = tuple(ports)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + max(0.0, timeout_ms) / 1000
        while True:
            now = loop.time()
            if self.inflight(ports):
                left = _POLL_S
            else:
                left = max(since, self.changed(ports)) + quiet_ms / 1000 - now
                if left <= 0:
                    return True
            if now >= deadline:
                return False
            # Sleep until the window would close (a request arriving meanwhile moves it on) or the deadline.
            await asyncio.sleep(max(0.0, min(left, deadline - now)))


TRAFFIC = web.AppKey("traffic", Traffic)


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
        traffic.ended(port)
