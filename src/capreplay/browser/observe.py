"""What the fidelity check keeps of a page: a viewport screenshot and the visible text."""

from __future__ import annotations

from dataclasses import dataclass

from playwright.async_api import Page

STABLE_TRIES = 12
STABLE_PAUSE_MS = 150


@dataclass(frozen=True)
class View:
    """A page as a person sees it: the pixels of the viewport and the text of the body."""

    screenshot: bytes
    """PNG of the viewport at the top of the page."""
    text: str
    """``document.body.innerText``: the text that is rendered, in layout order."""
    stable: bool
    """Whether two screenshots in a row were identical (an endless animation never is)."""


async def observe(page: Page) -> View:
    """Take the view of a settled page (call :func:`capreplay.browser.settle.settle` first).

    The screenshot is taken once the viewport stops changing: the browser's own animations (a media
    player's loading spinner, a fading scrollbar) run outside the page's frozen clock and would make two
    loads of the same bytes look different.
    """
    shot = await _shot(page)
    stable = False
    for _ in range(STABLE_TRIES):
        await page.wait_for_timeout(STABLE_PAUSE_MS)
        again = await _shot(page)
        stable, shot = again == shot, again
        if stable:
            break
    text = await page.evaluate("() => document.body ? document.body.innerText : ''")
    return View(screenshot=shot, text=str(text), stable=stable)


async def _shot(page: Page) -> bytes:
    return await page.screenshot(type="png", animations="disabled", caret="hide")
