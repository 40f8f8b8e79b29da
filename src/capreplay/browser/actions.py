"""Loading a page and running a plan's actions on it, the same way in capture and in replay.

Capture and verify must do exactly the same steps, or the fidelity check compares different pages.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path

from playwright.async_api import Error as PlaywrightError, Page, Position

from capreplay.browser.settle import (
    SETTLE_TIMEOUT_MS,
    Quiet,
    frames,
    network_idle,
    page_network,
    settle,
    until_quiet,
)
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

STEP_QUIET_TIMEOUT_MS = 10_000
"""The longest an autoscroll step waits for the network to go quiet: a page that streams or polls never does."""

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
    page_network(page)  # from before the navigation, so that no request of the page goes unseen
    response = await page.goto(url, wait_until="load", timeout=timeout_ms)
    status = response.status if response is not None else None
    for action in actions:
        await run_action(page, action, quiet)
    await settle(page, quiet)
    return Loaded(url=url, final_url=page.url, status=status, title=await page.title())


async def run_action(page: Page, action: Action, quiet: Quiet | None = None) -> None:
    """Run one plan step. A click, drag, hover or scroll is followed by a bounded wait for the requests it
    started (a click that navigates: for the new document's load, then for its requests); with ``quiet``, that
    wait (and ``wait_fornetwork_idle``) is ``quiet``'s. Autoscroll follows the page's own requests either way."""
    match action:
        case WaitForNetworkIdle(timeout_ms=ms):
            if quiet is None:
                await network_idle(page, ms)
            else:
                await quiet(asyncio.get_running_loop().time())
        case Autoscroll():
            await _autoscroll(page, action)
        case Click(selector=sel, position=at):
            async with until_quiet(page, quiet):
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
            async with until_quiet(page, quiet):
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
    async with until_quiet(page, quiet):
        await page.mouse.move(x, y)
        await page.mouse.down()
        await page.mouse.move(x + dx, y + dy, steps=steps)
        await page.mouse.up()


async def _scroll(page: Page, selector: str | None, dy: float, quiet: Quiet | None) -> None:
    # Scrolling is what loads the next items of an infinite list: let those requests finish.
    async with until_quiet(page, quiet):
        if selector is None:
            await page.evaluate("dy => window.scrollBy(0, dy)", dy)
        else:
            await page.locator(selector).first.evaluate("(el, dy) => el.scrollBy(0, dy)", dy)
        await page.wait_for_timeout(200)


_SCROLL_STEP = "() => window.scrollBy(0, window.innerHeight)"
_SCROLL_BACK = "() => window.scrollBy(0, -window.innerHeight)"
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
    network = page_network(page)
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
            await frames(page)
        await page.evaluate(_SCROLL_STEP)
        await page.wait_for_timeout(plan.pause_ms)
        # An observer asks for the next batch in a rendering step after the scroll; on a busy machine
        # that can come after the pause, so let two frames pass before waiting for quiet.
        await frames(page)
        left_ms = (deadline - loop.time()) * 1000
        await network.quiet(since=scrolled_at, timeout_ms=min(STEP_QUIET_TIMEOUT_MS, left_ms))
        height, at_bottom = await page.evaluate(_EXTENT)
        # At the end twice in a row without growing, the second time after scrolling back and down.
        unchanged = unchanged + 1 if at_bottom and height == last else 0
        if unchanged >= 2 or loop.time() >= deadline:
            break
        last = height
    await network_idle(page, SETTLE_TIMEOUT_MS)
