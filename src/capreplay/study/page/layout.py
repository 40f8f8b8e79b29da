"""The layout a page session is read in: viewport size, device scale and scroll offset, one record per moment.

Every view and every ground-truth box of a session must be taken in the layout the screenshot shows, or a
click where the screenshot shows a button is scored against a box somewhere else. browser-use's attachment
over CDP drops the viewport emulation (``innerHeight`` goes from 800 to the window's 713 on this machine),
so the session puts it back (:func:`restore_layout`) and checks every later moment against the screenshot's
(:func:`check_layout`): a difference stops the session with both layouts named.
"""

from __future__ import annotations

from playwright.async_api import Page

from capreplay.errors import BrowserError
from capreplay.models.geometry import Layout

_READ = "() => [innerWidth, innerHeight, devicePixelRatio, scrollX, scrollY]"


async def read_layout(page: Page) -> Layout:
    """The page's layout now."""
    width, height, ratio, x, y = await page.evaluate(_READ)
    return Layout(inner_width=width, inner_height=height, device_pixel_ratio=ratio, scroll_x=x, scroll_y=y)


async def restore_layout(page: Page, layout: Layout) -> None:
    """Emulate ``layout``'s viewport again through Playwright's own CDP session, and scroll back to its offset.

    Playwright still believes its emulation holds, so setting the same size again sends nothing: the size is
    set one pixel taller first. (An override sent from a CDP session of our own would end when that session
    detaches, as browser-use's did.)
    """
    await page.set_viewport_size({"width": layout.inner_width, "height": layout.inner_height + 1})
    await page.set_viewport_size({"width": layout.inner_width, "height": layout.inner_height})
    await page.evaluate("([x, y]) => window.scrollTo(x, y)", [layout.scroll_x, layout.scroll_y])


def check_layout(expected: Layout, found: Layout, moment: str, url: str) -> None:
    """A ``BrowserError`` if the layout at ``moment`` is not the screenshot's."""
    if found != expected:
        raise BrowserError(f"the layout changed {moment}: {found}, not the screenshot's {expected}", url)
