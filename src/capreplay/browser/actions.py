"""Loading a page and running a plan's actions on it, the same way in capture and in replay.

Capture and verify must do exactly the same steps, or the fidelity check compares different pages.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

from playwright.async_api import Error as PlaywrightError, Page, Position, TimeoutError as PlaywrightTimeout

from capreplay.models.plan import (
    Action,
    Autoscroll,
    Click,
    Drag,
    Fill,
    Hover,
    Point,
    Scroll,
    Select,
    Wait,
    WaitForNetworkIdle,
)

SETTLE_TIMEOUT_MS = 5_000

# Fonts loaded and scrolled to the top, where the fidelity screenshot is taken.
_SETTLE_SCRIPT = "async () => { await document.fonts.ready; window.scrollTo(0, 0); }"


@dataclass(frozen=True)
class Loaded:
    """What a page load ended with."""

    url: str
    final_url: str
    status: int | None
    title: str


async def load_page(page: Page, url: str, actions: list[Action], *, timeout_ms: int = 30_000) -> Loaded:
    """Navigate to ``url``, run ``actions`` in order, and let the page settle at the top."""
    response = await page.goto(url, wait_until="load", timeout=timeout_ms)
    status = response.status if response is not None else None
    for action in actions:
        await run_action(page, action)
    await settle(page)
    return Loaded(url=url, final_url=page.url, status=status, title=await page.title())


async def run_action(page: Page, action: Action) -> None:
    """Run one plan step. A click that navigates is waited for."""
    match action:
        case WaitForNetworkIdle(timeout_ms=ms):
            await _network_idle(page, ms)
        case Autoscroll(max_steps=steps, pause_ms=pause):
            await _autoscroll(page, steps, pause)
        case Click(selector=sel, position=at):
            await page.click(sel, position=_position(at))
            await page.wait_for_load_state("load")
            await _network_idle(page, SETTLE_TIMEOUT_MS)
        case Fill(selector=sel, value=value):
            await page.fill(sel, value)
        case Select(selector=sel, value=value):
            await page.select_option(sel, value)
        case Hover(selector=sel, position=at):
            await page.hover(sel, position=_position(at))
        case Drag(selector=sel, dx=dx, dy=dy, steps=steps):
            await _drag(page, sel, dx, dy, steps)
        case Scroll(selector=sel, dy=dy):
            await _scroll(page, sel, dy)
        case Wait(ms=ms):
            await page.wait_for_timeout(ms)


def _position(at: Point | None) -> Position | None:
    return None if at is None else {"x": at.x, "y": at.y}


async def _drag(page: Page, selector: str, dx: float, dy: float, steps: int) -> None:
    handle = page.locator(selector).first
    await handle.scroll_into_view_if_needed()
    box = await handle.bounding_box()
    if box is None:
        raise PlaywrightError(f"cannot drag {selector!r}: it is not visible")
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    await page.mouse.move(x, y)
    await page.mouse.down()
    await page.mouse.move(x + dx, y + dy, steps=steps)
    await page.mouse.up()
    await _network_idle(page, SETTLE_TIMEOUT_MS)


async def _scroll(page: Page, selector: str | None, dy: float) -> None:
    if selector is None:
        await page.evaluate("dy => window.scrollBy(0, dy)", dy)
    else:
        await page.locator(selector).first.evaluate("(el, dy) => el.scrollBy(0, dy)", dy)
    # Scrolling is what loads the next items of an infinite list: let those requests finish.
    await page.wait_for_timeout(200)
    await _network_idle(page, SETTLE_TIMEOUT_MS)


async def settle(page: Page) -> None:
    """Wait for the network and fonts to go quiet, then scroll back to the top for the screenshot."""
    await _network_idle(page, SETTLE_TIMEOUT_MS)
    with contextlib.suppress(PlaywrightError):
        await page.evaluate(_SETTLE_SCRIPT)
    await page.wait_for_timeout(100)


async def _network_idle(page: Page, timeout_ms: int) -> None:
    # A page that never goes quiet (polling, streaming) is captured as it is when the wait runs out.
    with contextlib.suppress(PlaywrightTimeout):
        await page.wait_for_load_state("networkidle", timeout=timeout_ms)


async def _autoscroll(page: Page, max_steps: int, pause_ms: int) -> None:
    """Scroll a viewport at a time until the bottom stops moving (or ``max_steps`` is reached)."""
    last = -1
    for _ in range(max_steps):
        height = await page.evaluate(
            "() => { window.scrollBy(0, window.innerHeight); return document.documentElement.scrollHeight; }"
        )
        at_bottom = await page.evaluate(
            "() => window.scrollY + window.innerHeight >= document.documentElement.scrollHeight - 2"
        )
        await page.wait_for_timeout(pause_ms)
        if at_bottom and height == last:
            break
        last = height
    await _network_idle(page, SETTLE_TIMEOUT_MS)
