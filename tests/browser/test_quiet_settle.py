"""Settling on a server's quiet signal: a page that fetches on a timer is settled only once that fetch is answered.

Real Chromium on a real aiohttp server counted as the replay server counts (:mod:`capreplay.replay.quiet`).
"""

from __future__ import annotations

import asyncio
import io
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime

import pytest
from aiohttp import web
from PIL import Image

from capreplay.browser.actions import settle
from capreplay.browser.launch import BrowserSettings, open_browser
from capreplay.replay.quiet import SERVER_QUIET_MS, TRAFFIC, Traffic, count_traffic

pytestmark = pytest.mark.browser

TIMER_MS = SERVER_QUIET_MS * 3 // 4
"""The page fetches this long after its script runs: within the quiet interval."""
ANSWER_MS = 150
"""How long the server takes to answer that fetch (longer than ``settle``'s own pause after the network)."""
BEFORE, AFTER = (255, 255, 255), (0, 128, 0)
"""The page's colour before the late answer arrives, and the colour the answer paints it."""

PAGE = f"""<!doctype html><html><head><title>late</title></head>
<body style="margin:0;height:100vh;background:rgb{BEFORE}">
<script>
setTimeout(() => fetch("/late").then((r) => r.text()).then((colour) => {{
  document.body.style.background = colour; document.title = "arrived";
}}), {TIMER_MS});
</script></body></html>"""


async def _page(request: web.Request) -> web.Response:
    return web.Response(text=PAGE, content_type="text/html")


async def _late(request: web.Request) -> web.Response:
    await asyncio.sleep(ANSWER_MS / 1000)
    return web.Response(text=f"rgb{AFTER}")


@asynccontextmanager
async def _origin() -> AsyncIterator[tuple[Traffic, int]]:
    app = web.Application(middlewares=[count_traffic])
    app[TRAFFIC] = Traffic()
    app.router.add_get("/", _page)
    app.router.add_get("/late", _late)
    runner = web.AppRunner(app, access_log=None, handle_signals=False)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    try:
        yield app[TRAFFIC], site.port
    finally:
        await runner.cleanup()


def test_settling_on_the_servers_quiet_waits_for_a_fetch_the_page_makes_on_a_timer() -> None:
    async def scenario() -> tuple[str, tuple[int, ...], list[bool]]:
        async with _origin() as (traffic, port):
            asked: list[bool] = []

            async def quiet(since: float) -> bool:
                went = await traffic.quiet([port], since=since)
                asked.append(went)
                return went

            settings = BrowserSettings([], datetime(2024, 6, 1, tzinfo=UTC), 7)
            async with open_browser(settings) as context:
                page = context.pages[0] if context.pages else await context.new_page()
                await page.goto(f"http://127.0.0.1:{port}/", wait_until="load")
                await settle(page, quiet)
                title = await page.title()
                shot = Image.open(io.BytesIO(await page.screenshot())).convert("RGB")
                return title, shot.getpixel((10, 10)), asked  # type: ignore[return-value]

    title, pixel, asked = asyncio.run(scenario())
    assert asked == [True]
    assert title == "arrived"
    assert pixel == AFTER
