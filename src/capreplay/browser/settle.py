"""Settling: when a page has finished what its load or an input started. One module that capture, verify, the
agents' harness and the study all wait with.

Two views of a page's requests: the page's own (Playwright's ``networkidle`` once per navigation, and
:class:`PageNetwork`, which follows every request across documents), and the one outside the browser (the replay
server per browser port, :mod:`capreplay.replay.quiet`, and the capture proxy, which count what they are answering
in a :class:`Traffic`). A :data:`Quiet` built on the outside view (:func:`traffic_quiet`, :func:`confirmed_quiet`)
settles a page sooner, with the same rule for every client of the browser; without one the waits fall back to the
page's own view. After the network, :func:`rendered` lets animations end and two frames pass.
"""

from __future__ import annotations

import asyncio
import contextlib
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from dataclasses import dataclass, field

from playwright.async_api import Error as PlaywrightError, Page, Request, TimeoutError as PlaywrightTimeout

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


SETTLE_TIMEOUT_MS = 5_000

QUIET_MS = 500
"""The network is quiet when no request has been in flight for this long (Playwright's ``networkidle``)."""

Quiet = Callable[[float], Awaitable[bool]]
"""Waits until the page's network is quiet as something outside the browser sees it (the replay server, which
knows each browser's requests by its ports), counting from ``since`` (a loop time: when the page was last
acted on); whether it went quiet. Given to :func:`settle` and :func:`run_action`, it replaces the waits for
Playwright's ``networkidle`` and the page's own request tracker; without it they work as before."""

# Fonts loaded and scrolled to the top, where the fidelity screenshot is taken.
_SETTLE_SCRIPT = "async () => { await document.fonts.ready; window.scrollTo(0, 0); }"


@contextlib.asynccontextmanager
async def until_quiet(page: Page, quiet: Quiet | None = None) -> AsyncIterator[None]:
    """After the input in the block, wait until the page's network has been quiet for ``QUIET_MS``, at
    most ``SETTLE_TIMEOUT_MS`` (with ``quiet``: until ``quiet`` says so).

    Playwright's ``networkidle`` has long passed by the second input on a page, so without this a "Load
    more" whose API answers in a few hundred ms would be captured (and replayed) without its batch.
    """
    network = page_network(page)
    since = asyncio.get_running_loop().time()
    yield
    if quiet is None:
        await network.quiet(since=since, timeout_ms=SETTLE_TIMEOUT_MS)
    else:
        await quiet(since)


async def network_settled(page: Page, quiet: Quiet | None = None, timeout_ms: float = SETTLE_TIMEOUT_MS) -> None:
    """Wait for ``quiet`` (the server's or the proxy's view of this browser's requests) when given, else for
    Playwright's ``networkidle``, at most ``timeout_ms``: a page that never goes quiet (polling, streaming) is
    taken as it is when the wait runs out."""
    if quiet is None:
        await network_idle(page, timeout_ms)
    else:
        await quiet(asyncio.get_running_loop().time())


async def settle(page: Page, quiet: Quiet | None = None) -> None:
    """Wait for the network (Playwright's ``networkidle``, or ``quiet`` when given) and fonts to go quiet, then
    scroll back to the top for the screenshot: 100 ms for the scroll to be drawn, or, with ``quiet``, two frames
    (what drawing it takes, without the margin)."""
    await network_settled(page, quiet)
    with contextlib.suppress(PlaywrightError):
        await page.evaluate(_SETTLE_SCRIPT)
    if quiet is None:
        await page.wait_for_timeout(100)
    else:
        await frames(page)


async def network_idle(page: Page, timeout_ms: float) -> None:
    # A page that never goes quiet (polling, streaming) is captured as it is when the wait runs out.
    with contextlib.suppress(PlaywrightTimeout):
        await page.wait_for_load_state("networkidle", timeout=timeout_ms)


@dataclass(eq=False)
class PageNetwork:
    """The requests of one page in flight, and when one last started or ended.

    Playwright's ``networkidle`` happens once per navigation, so waiting for it again after a scroll or
    a click returns at once; this follows every request of the page, across its documents, instead.
    """

    inflight: set[Request] = field(default_factory=set)
    changed: float = 0.0

    def started(self, request: Request) -> None:
        """A request left the page."""
        if request.resource_type == "eventsource":
            return  # a stream may never finish; the proxy or server counts it until its headers come
        self.inflight.add(request)
        self.changed = asyncio.get_running_loop().time()

    def ended(self, request: Request) -> None:
        """A request finished or failed."""
        self.inflight.discard(request)
        self.changed = asyncio.get_running_loop().time()

    async def quiet(self, *, since: float, timeout_ms: float) -> bool:
        """Wait until nothing has been in flight for ``QUIET_MS`` after ``since`` (a loop time), at most
        ``timeout_ms``; whether the network did go quiet."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + max(0.0, timeout_ms) / 1000
        while True:
            now = loop.time()
            if not self.inflight and now - max(since, self.changed) >= QUIET_MS / 1000:
                return True
            if now >= deadline:
                return False
            await asyncio.sleep(0.05)


_NETWORKS: weakref.WeakKeyDictionary[Page, PageNetwork] = weakref.WeakKeyDictionary()


def page_network(page: Page) -> PageNetwork:
    """The request tracker of ``page``, attached at the first call."""
    network = _NETWORKS.get(page)
    if network is None:
        network = _NETWORKS[page] = PageNetwork()
        page.on("request", network.started)
        page.on("requestfinished", network.ended)
        page.on("requestfailed", network.ended)
    return network


FRAMES_TIMEOUT_S = 1.0
_TWO_FRAMES = "() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(() => done(true))))"


async def frames(page: Page) -> None:
    """Let two frames pass, so that observers and scroll handlers of the last frame have run."""
    with contextlib.suppress(PlaywrightError, TimeoutError):  # a hidden tab draws no frames
        await asyncio.wait_for(page.evaluate(_TWO_FRAMES), FRAMES_TIMEOUT_S)


_ANIMATIONS_DONE = (
    "ms => Promise.race([new Promise((done) => setTimeout(done, ms)),"
    " Promise.all(document.getAnimations().filter((a) => a.effect && a.effect.getTiming().iterations !== Infinity)"
    ".map((a) => a.finished.catch(() => null)))])"
)
ANIMATIONS_TIMEOUT_MS = 1_000
"""The longest :func:`rendered` waits for the page's running animations and transitions to end."""


async def rendered(page: Page) -> None:
    """Let the animations and transitions running on the page end (endless ones excepted; at most
    :data:`ANIMATIONS_TIMEOUT_MS`), then two frames pass.

    A wait for the network alone does not cover an input that only moves things on the page (a carousel's
    slide): a short quiet interval can end before its transition does, where Playwright's 500 ms outlasted it.
    """
    with contextlib.suppress(PlaywrightError):
        await page.evaluate(_ANIMATIONS_DONE, ANIMATIONS_TIMEOUT_MS)
    await frames(page)


Signal = Callable[[float, float], Awaitable[bool]]
"""Waits until the network is quiet, counting from ``since`` (a loop time), at most ``timeout_ms``: ``(since,
timeout_ms) -> whether it went quiet``."""


def confirmed_quiet(
    signal: Signal,
    unchanged: Callable[[float], bool],
    page: Callable[[], Page | None],
    timeout_ms: float = QUIET_TIMEOUT_MS,
) -> Quiet:
    """A :data:`Quiet` that does not end when ``signal`` says so: the page (``page()``, None when there is none)
    must then let its animations end and draw two frames (:func:`rendered`) with no request starting or ending
    meanwhile (``unchanged(since)``: nothing in flight, nothing started or ended after a loop time), else the wait
    begins again from that moment; at most ``timeout_ms`` in all.

    A request that a response's script asks for after a long run of work (a large bundle parsed, a list built)
    starts later than a short quiet interval, but before the frames that follow that work, since a frame is
    drawn only between tasks: so the frames let a short interval stand for a long one.
    """

    async def quiet(since: float) -> bool:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_ms / 1000
        while True:
            went = await signal(since, max(0.0, deadline - loop.time()) * 1000)
            since = loop.time()
            current = page()
            if current is not None:
                await rendered(current)
            if unchanged(since):
                return went
            if not went or loop.time() >= deadline:
                return False

    return quiet


def traffic_quiet(traffic: Traffic, ports: tuple[int, ...], page: Page, quiet_ms: float = SERVER_QUIET_MS) -> Quiet:
    """The quiet signal of ``traffic`` (counted outside the browser, on ``ports``) for ``page``, confirmed by the page
    (:func:`confirmed_quiet`): it must also have no request of its own unfinished (Playwright's view, attached
    here, before the page is loaded) and draw two frames with nothing starting or ending.

    Counted outside the browser, an answer ends when it leaves the server or the proxy; on a busy machine the
    page may run the script that answer feeds well after ``quiet_ms``. A "Load more" that ignores presses while it
    loads then loses the next press, which the confirmation waits out.
    """
    network = page_network(page)

    async def signal(since: float, timeout_ms: float) -> bool:
        return await traffic.quiet(ports, since=since, quiet_ms=quiet_ms, timeout_ms=timeout_ms)

    def unchanged(since: float) -> bool:
        return traffic.inflight(ports) == 0 and traffic.changed(ports) <= since and not network.inflight

    return confirmed_quiet(signal, unchanged, lambda: page)
