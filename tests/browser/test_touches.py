"""What the harness takes for a step that did nothing to the page: no input, no navigation, no new tab."""

from __future__ import annotations

from collections.abc import Awaitable
from datetime import UTC, datetime

import pytest
from playwright.async_api import Page

from capreplay.browser.launch import BrowserSettings, open_browser
from capreplay.browser.touches import WATCH_SCRIPT, Touches

pytestmark = pytest.mark.browser

PAGE = (
    "data:text/html,<!doctype html><body style='height:3000px'>"
    "<button id=b onclick=\"this.textContent='pressed'\">press</button><input id=i><p id=t>text</p></body>"
)


async def test_reading_leaves_a_page_untouched_and_input_scrolling_navigation_and_tabs_do_not() -> None:
    async with open_browser(BrowserSettings([], datetime(2024, 1, 1, tzinfo=UTC), 1)) as context:
        await context.add_init_script(WATCH_SCRIPT)
        page = context.pages[0]
        await page.goto(PAGE)
        touches = Touches(context)
        assert not await touches.untouched()  # never marked: unknown counts as touched

        async def after(action: Awaitable[object]) -> bool:
            await touches.mark()
            await action
            return await touches.untouched()

        assert await after(page.inner_text("#t"))
        assert await after(page.get_attribute("#b", "id"))
        assert not await after(page.click("#b"))
        assert not await after(page.hover("#i"))
        assert not await after(page.fill("#i", "x"))
        assert not await after(page.keyboard.press("Tab"))
        assert not await after(_scrolled(page))
        assert not await after(page.goto(PAGE + "<!-- again -->"))
        assert not await after(context.new_page())
        # The symbol is not among the window's own enumerable keys: the page's scripts do not come across it.
        assert "capreplay" not in " ".join(await page.evaluate("Object.keys(window)"))


async def _scrolled(page: Page) -> None:
    # A scroll event is dispatched in the next frame: let two pass.
    await page.evaluate("window.scrollBy(0, 500)")
    await page.evaluate("new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))")
