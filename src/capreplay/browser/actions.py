"""Loading a page and running a plan's actions on it, the same way in capture and in replay.

Capture and verify must do exactly the same steps, or the fidelity check compares different pages.
"""

from __future__ import annotations

import asyncio
import contextlib
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

from playwright.async_api import Error as PlaywrightError, Page, Position, Request, TimeoutError as PlaywrightTimeout

from capreplay.browser.traffic import QUIET_TIMEOUT_MS, SERVER_QUIET_MS, Traffic
from capreplay.errors import InputError
from capreplay.models.capture_plan import (
    Action,
    Autoscroll,
    Click,
    Drag,
    Fill,
    Hover,
    Point,
    Press,
    Scroll,
    Select,
    TypeText,
    Upload,
    Wait,
    WaitForNetworkIdle,
)

SETTLE_TIMEOUT_MS = 5_000

QUIET_MS = 500
"""The network is quiet when no request has been in flight for this long (Playwright's ``networkidle``)."""

STEP_QUIET_TIMEOUT_MS = 10_000
"""The longest an autoscroll step waits for the network to go quiet: a page that streams or polls never does."""

Quiet = Callable[[float], Awaitable[bool]]
"""Waits until the page's network is quiet as something outside the browser sees it (the replay server, which
knows each browser's requests by its ports), counting from ``since`` (a loop time: when the page was last
acted on); whether it went quiet. Given to :func:`settle` and :func:`run_action`, it replaces the waits for
Playwright's ``networkidle`` and the page's own request tracker; without it they work as before."""

# Fonts loaded and scrolled to the top, where the fidelity screenshot is taken.
_SETTLE_SCRIPT = "async () => { await document.fonts.ready; window.scrollTo(0, 0); }"


@dataclass(frozen=True)
class Loaded:
    """What a page load ended with."""

    url: str
    final_url: str
    status: int | None
    title: str


async def load_page(
    page: Page, url: str, actions: list[Action], *, timeout_ms: int = 30_000, quiet: Quiet | None = None
) -> Loaded:
    """Navigate to ``url``, run ``actions`` in order, and let the page settle at the top; ``quiet`` (the server's
    or the proxy's view of this browser's requests) replaces the waits for the network, as in :func:`run_action`
    and :func:`settle`."""
    _network(page)  # from before the navigation, so that no request of the page goes unseen
    response = await page.goto(url, wait_until="load", timeout=timeout_ms)
    status = response.status if response is not None else None
    for action in actions:
        await run_action(page, action, quiet)
    await settle(page, quiet)
    return Loaded(url=url, final_url=page.url, status=status, title=await page.title())


async def run_action(page: Page, action: Action, quiet: Quiet | None = None) -> None:
    """Run one plan step. A click, drag, hover or scroll is followed by a bounded wait for the requests it
    started (a click that navigates: for the new document's load, then for its requests); with ``quiet``, that
    wait (and ``wait_for_network_idle``) is ``quiet``'s. Autoscroll follows the page's own requests either way."""
    match action:
        case WaitForNetworkIdle(timeout_ms=ms):
            if quiet is None:
                await _network_idle(page, ms)
            else:
                await quiet(asyncio.get_running_loop().time())
        case Autoscroll():
            await _autoscroll(page, action)
        case Click(selector=sel, position=at):
            async with _until_quiet(page, quiet):
                await page.click(sel, position=_position(at))
                await page.wait_for_load_state("load")
        case Fill(selector=sel, value=value):
            await page.fill(sel, value)
        case TypeText(selector=sel, value=value):
            await page.locator(sel).first.press_sequentially(value)
        case Press(selector=sel, key=key):
            await page.locator(sel).first.press(key)
        case Upload(selector=sel, file=file):
            await page.set_input_files(sel, upload_file(file))
        case Select(selector=sel, value=value):
            await page.select_option(sel, value)
        case Hover(selector=sel, position=at):
            # Menus, link previews and tooltips fetch what they show when the mouse comes over them.
            async with _until_quiet(page, quiet):
                await page.hover(sel, position=_position(at))
        case Drag(selector=sel, dx=dx, dy=dy, steps=steps):
            await _drag(page, sel, dx, dy, steps, quiet)
        case Scroll(selector=sel, dy=dy):
            await _scroll(page, sel, dy, quiet)
        case Wait(ms=ms):
            await page.wait_for_timeout(ms)


def upload_file(file: str) -> Path:
    """The file an ``upload`` step names (relative to the working directory, see
    :data:`~capreplay.models.capture_plan.UPLOADS_FROM`); InputError if there is none, before the browser is asked."""
    path = Path(file)
    if not path.is_file():
        raise InputError(f"no file to upload at {file!r} (relative paths are from the working directory)",
                         where=path.absolute())  # fmt: skip
    return path


def _position(at: Point | None) -> Position | None:
    return None if at is None else {"x": at.x, "y": at.y}


async def _drag(page: Page, selector: str, dx: float, dy: float, steps: int, quiet: Quiet | None) -> None:
    handle = page.locator(selector).first
    await handle.scroll_into_view_if_needed()
    box = await handle.bounding_box()
    if box is None:
        raise PlaywrightError(f"cannot drag {selector!r}: it is not visible")
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    # A slider or a pull handle asks for its data when it is released.
    async with _until_quiet(page, quiet):
        await page.mouse.move(x, y)
        await page.mouse.down()
        await page.mouse.move(x + dx, y + dy, steps=steps)
        await page.mouse.up()


async def _scroll(page: Page, selector: str | None, dy: float, quiet: Quiet | None) -> None:
    # Scrolling is what loads the next items of an infinite list: let those requests finish.
    async with _until_quiet(page, quiet):
        if selector is None:
            await page.evaluate("dy => window.scrollBy(0, dy)", dy)
        else:
            await page.locator(selector).first.evaluate("(el, dy) => el.scrollBy(0, dy)", dy)
        await page.wait_for_timeout(200)


@contextlib.asynccontextmanager
async def _until_quiet(page: Page, quiet: Quiet | None = None) -> AsyncIterator[None]:
    """After the input in the block, wait until the page's network has been quiet for ``QUIET_MS``, at
    most ``SETTLE_TIMEOUT_MS`` (with ``quiet``: until ``quiet`` says so).

    Playwright's ``networkidle`` has long passed by the second input on a page, so without this a "Load
    more" whose API answers in a few hundred ms would be captured (and replayed) without its batch.
    """
    network = _network(page)
    since = asyncio.get_running_loop().time()
    yield
    if quiet is None:
        await network.quiet(since=since, timeout_ms=SETTLE_TIMEOUT_MS)
    else:
        await quiet(since)


async def settle(page: Page, quiet: Quiet | None = None) -> None:
    """Wait for the network (Playwright's ``networkidle``, or ``quiet`` when given) and fonts to go quiet, then
    scroll back to the top for the screenshot: 100 ms for the scroll to be drawn, or, with ``quiet``, two frames
    (what drawing it takes, without the margin)."""
    if quiet is None:
        await _network_idle(page, SETTLE_TIMEOUT_MS)
    else:
        await quiet(asyncio.get_running_loop().time())
    with contextlib.suppress(PlaywrightError):
        await page.evaluate(_SETTLE_SCRIPT)
    if quiet is None:
        await page.wait_for_timeout(100)
    else:
        await _frames(page)


async def _network_idle(page: Page, timeout_ms: int) -> None:
    # A page that never goes quiet (polling, streaming) is captured as it is when the wait runs out.
    with contextlib.suppress(PlaywrightTimeout):
        await page.wait_for_load_state("networkidle", timeout=timeout_ms)


@dataclass(eq=False)
class _Network:
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


_NETWORKS: weakref.WeakKeyDictionary[Page, _Network] = weakref.WeakKeyDictionary()


def _network(page: Page) -> _Network:
    """The request tracker of ``page``, attached at the first call."""
    network = _NETWORKS.get(page)
    if network is None:
        network = _NETWORKS[page] = _Network()
        page.on("request", network.started)
        page.on("requestfinished", network.ended)
        page.on("requestfailed", network.ended)
    return network


FRAMES_TIMEOUT_S = 1.0
_SCROLL_STEP = "() => window.scrollBy(0, window.innerHeight)"
_SCROLL_BACK = "() => window.scrollBy(0, -window.innerHeight)"
_TWO_FRAMES = "() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(() => done(true))))"


async def _frames(page: Page) -> None:
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
    await _frames(page)


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
    network = _network(page)

    async def signal(since: float, timeout_ms: float) -> bool:
        return await traffic.quiet(ports, since=since, quiet_ms=quiet_ms, timeout_ms=timeout_ms)

    def unchanged(since: float) -> bool:
        return traffic.inflight(ports) == 0 and traffic.changed(ports) <= since and not network.inflight

    return confirmed_quiet(signal, unchanged, lambda: page)


_EXTENT = (
    "() => [document.documentElement.scrollHeight,"
    " window.scrollY + window.innerHeight >= document.documentElement.scrollHeight - 2]"
)


async def _autoscroll(page: Page, plan: Autoscroll) -> None:
    """Scroll a screen at a time; after each step wait for the network to go quiet (bounded), and stop
    when the page, scrolled to its end, has not grown for two steps in a row (the second after scrolling a
    screen back first), or at ``max_steps`` or ``timeout_ms``.

    An infinite list asks for its next batch when its end comes into view and grows when the batch
    arrives, which may take far longer than ``pause_ms``; only a page that stays the same once its
    requests have finished is at its end.
    """
    network = _network(page)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + plan.timeout_ms / 1000
    last = (await page.evaluate(_EXTENT))[0]
    unchanged = 0
    for _ in range(plan.max_steps):
        scrolled_at = loop.time()
        if unchanged:
            # At the end and not grown: an IntersectionObserver that never saw its sentinel leave the
            # view (the batch came before the next frame) will not fire again. Scrolling a screen back
            # and down again shows it leave and come back, as a reader's scrolling would.
            await page.evaluate(_SCROLL_BACK)
            await _frames(page)
        await page.evaluate(_SCROLL_STEP)
        await page.wait_for_timeout(plan.pause_ms)
        # An observer asks for the next batch in a rendering step after the scroll; on a busy machine
        # that can come after the pause, so let two frames pass before waiting for quiet.
        await _frames(page)
        left_ms = (deadline - loop.time()) * 1000
        await network.quiet(since=scrolled_at, timeout_ms=min(STEP_QUIET_TIMEOUT_MS, left_ms))
        height, at_bottom = await page.evaluate(_EXTENT)
        # At the end twice in a row without growing, the second time after scrolling back and down.
        unchanged = unchanged + 1 if at_bottom and height == last else 0
        if unchanged >= 2 or loop.time() >= deadline:
            break
        last = height
    await _network_idle(page, SETTLE_TIMEOUT_MS)
