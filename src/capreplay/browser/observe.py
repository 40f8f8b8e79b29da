"""What the fidelity check keeps of a page: a viewport screenshot and the visible text."""

from __future__ import annotations

from dataclasses import dataclass

from playwright.async_api import Page


@dataclass(frozen=True)
class View:
    """A page as a person sees it: the pixels of the viewport and the text of the body."""

    screenshot: bytes
    """PNG of the viewport at the top of the page."""
    text: str
    """``document.body.innerText``: the text that is rendered, in layout order."""


async def observe(page: Page) -> View:
    """Take the view of a settled page (call :func:`capreplay.browser.actions.settle` first)."""
    text = await page.evaluate("() => document.body ? document.body.innerText : ''")
    png = await page.screenshot(type="png", animations="disabled", caret="hide")
    return View(screenshot=png, text=str(text))
