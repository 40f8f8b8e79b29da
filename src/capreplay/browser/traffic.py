"""Requests in flight, counted outside the browser, and a wait for the moment they went quiet.

The replay server (:mod:`capreplay.replay.quiet`, per browser port) and the capture proxy
(:mod:`capreplay.capture.addon`, for its one browser) count every request they are answering; a page has
settled when none is in flight and none started or ended for :data:`SERVER_QUIET_MS`. Waiting for that instead
of Playwright's ``networkidle`` (500 ms without a request, counted in the browser) settles a page sooner, with
the same rule for every client of the browser.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from dataclasses import dataclass

SERVER_QUIET_MS = 200
"""How long a browser's ports (or, in capture, the proxy's flows) must have had no request in flight, and none
starting or ending, to be quiet.

Longer than the time a page takes to send the request that a response it has just received asks for (a
script's ``fetch``, a stylesheet's font), so a page that is still loading is not taken for a quiet one;
a page that fetches on a timer longer than this is settled before that fetch (Playwright's 500 ms has the
same limit, further out)."""

STEP_QUIET_MS = 100
"""The interval after an agent's step in the harness (:mod:`capreplay.agents.harness`), where the wait does not end
there: the page must then finish its animations and draw two frames with still no request starting or ending,
else the wait begins again. A request a response's script asks for is sent before the frames that follow it
(tasks run before a frame's rendering), so the frames stand in for the longer interval; a page that fetches on
a timer longer than this is settled before that fetch."""

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
