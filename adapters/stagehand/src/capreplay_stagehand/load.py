"""The ``open`` and ``close`` commands: a page loaded in a fresh Stagehand browser, as the study loads pages.

The viewport is set on the page before ``goto`` (the launch viewport only sizes the window); the page then
waits for network idle, settles for ``settle_ms``, and is scrolled to the top, so a snapshot starts where
the study's other representations start. capreplay's init scripts (the frozen clock, seeded randomness) are
added to the context before the page loads, so the page runs as it does in capreplay's own browser.
"""

from __future__ import annotations

from capreplay_jsonlines.protocol import Emit, Json, RequestError, int_param, param, str_list_param
from stagehand.page import Page

from capreplay_stagehand.offline import check_args
from capreplay_stagehand.session import close_current, install, launch

GOTO_TIMEOUT_MS = 30_000
SETTLE_MS = 500
_LAYOUT = """(() => ({inner_width: innerWidth, inner_height: innerHeight, device_pixel_ratio: devicePixelRatio,
  scroll_x: scrollX, scroll_y: scrollY}))()"""


def _preferences(request: Json) -> dict[str, object] | None:
    value = request.get("preferences")
    if value is not None and not isinstance(value, dict):
        raise RequestError("'preferences' must be a JSON object")
    return value


async def load(page: Page, url: str, width: int, height: int, settle_ms: int) -> Json:
    """Go to ``url`` at the given viewport and let it settle at the top; its layout."""
    await page.set_viewport_size(width, height)
    await page.goto(url, wait_until="networkidle", timeout=GOTO_TIMEOUT_MS)
    await page.wait_for_timeout(settle_ms)
    await page.evaluate("window.scrollTo(0, 0)")
    layout = await page.evaluate(_LAYOUT)
    assert isinstance(layout, dict)
    return layout


async def open_page(request: Json, emit: Emit) -> Json:
    """Handle ``{"cmd": "open", "executable_path": .., "args": [..], "url": .., "width": .., "height": ..}``."""
    executable, args, url = param(request, "executable_path"), str_list_param(request, "args"), param(request, "url")
    width, height = int_param(request, "width", 1280), int_param(request, "height", 800)
    settle_ms = int_param(request, "settle_ms", SETTLE_MS, minimum=0)
    init_scripts = str_list_param(request, "init_scripts") if "init_scripts" in request else []
    preferences = _preferences(request)
    check_args(args)  # a bad request leaves the open page alone
    await close_current()
    session = await launch(executable, args, width, height, preferences)
    await install(session)
    for script in init_scripts:
        await session.browser.context.add_init_script(script)
    layout = await load(session.page, url, width, height, settle_ms)
    return {
        "url": await session.page.url(),
        "title": await session.page.title(),
        "page_id": session.page.page_id,
        "cdp_url": f"http://127.0.0.1:{session.cdp_port}",
        "chromium_args": session.args,
        "layout": layout,
    }


async def close_page(request: Json, emit: Emit) -> Json:
    """Handle ``{"cmd": "close"}``: the open browser, if any, is closed."""
    await close_current()
    return {}
