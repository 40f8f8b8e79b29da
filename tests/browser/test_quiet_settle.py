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

from capreplay.browser.launch import BrowserSettings, open_browser
from capreplay.browser.settle import confirmed_quiet, settle, traffic_quiet
from capreplay.replay.quiet import SERVER_QUIET_MS, STEP_QUIET_MS, TRAFFIC, Handler, Traffic, count_traffic

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
async def _origin(*routes: tuple[str, Handler], asked: list[str] | None = None) -> AsyncIterator[tuple[Traffic, int]]:
    """A counted origin on 127.0.0.1; ``asked`` collects the path and query of every request, as it arrives."""

    @web.middleware
    async def note(request: web.Request, handler: Handler) -> web.StreamResponse:
        if asked is not None:
            asked.append(request.path_qs)
        return await handler(request)

    app = web.Application(middlewares=[note, count_traffic])
    app[TRAFFIC] = Traffic()
    app.router.add_get("/", _page)
    app.router.add_get("/late", _late)
    for path, handler in routes:
        app.router.add_get(path, handler)
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


BUSY_LOOPS = 80_000_000
"""How long the second page's script works on its first answer before it asks for the next: counted in loops (the
page's clock is frozen), about 0.3-0.6 s on this kind of machine and longer when it is busy, so past the interval."""

BUSY_PAGE = f"""<!doctype html><html><head><title>loading</title></head>
<body style="margin:0;height:100vh;background:rgb{BEFORE}">
<script>
addEventListener("load", () => fetch("/first").then((r) => r.text()).then(() => {{
  let x = 0;
  for (let i = 0; i < {BUSY_LOOPS}; i++) x = (x * 31 + i) | 0;
  return fetch("/late?" + (x & 1)).then((r) => r.text()).then((colour) => {{
    document.body.style.background = colour; document.title = "arrived";
  }});
}}));
</script></body></html>"""


async def _busy_page(request: web.Request) -> web.Response:
    return web.Response(text=BUSY_PAGE, content_type="text/html")


async def _first(request: web.Request) -> web.Response:
    await asyncio.sleep(ANSWER_MS / 1000)  # answered after the load event, when the waits have begun
    return web.Response(text="ok")


def test_a_short_interval_confirmed_by_two_frames_waits_for_a_request_sent_after_a_long_script() -> None:
    """A script that works longer than the interval before its next fetch: the bare signal ends between its two
    requests (the mechanism), the confirmed one only once the second is answered."""

    async def scenario(confirm: bool) -> tuple[str, tuple[int, ...], list[str]]:
        asked: list[str] = []
        async with _origin(("/busy", _busy_page), ("/first", _first), asked=asked) as (traffic, port):

            def unchanged(since: float) -> bool:
                return traffic.inflight([port]) == 0 and traffic.changed([port]) <= since

            async def signal(since: float, timeout_ms: float) -> bool:
                return await traffic.quiet([port], since=since, quiet_ms=STEP_QUIET_MS, timeout_ms=timeout_ms)

            settings = BrowserSettings([], datetime(2024, 6, 1, tzinfo=UTC), 7)
            async with open_browser(settings) as context:
                page = context.pages[0] if context.pages else await context.new_page()
                quiet = confirmed_quiet(signal, unchanged, lambda: page) if confirm else None
                told = asyncio.get_running_loop().time()
                await page.goto(f"http://127.0.0.1:{port}/busy", wait_until="load")
                if quiet is not None:
                    assert await quiet(told)
                else:
                    assert await signal(told, 5_000)
                settled_after = list(asked)
                # The title is read once the script's work is done (it holds the page's thread): still loading.
                title = await page.title()
                shot = Image.open(io.BytesIO(await page.screenshot())).convert("RGB")
                return title, shot.getpixel((10, 10)), settled_after  # type: ignore[return-value]

    # Bare: settled before the second request was sent. The pixel is not compared: the screenshot may come after
    # the answer on a busy machine.
    title, _, settled_after = asyncio.run(scenario(confirm=False))
    assert title == "loading"
    assert "/first" in settled_after and not [p for p in settled_after if p.startswith("/late")]
    title, pixel, settled_after = asyncio.run(scenario(confirm=True))
    assert (title, pixel) == ("arrived", AFTER)
    assert [p for p in settled_after if p.startswith("/late")] in (["/late?0"], ["/late?1"])


SLOW_MS = 600
"""How long the third page's one request takes: three times the quiet interval."""

UNSEEN_PAGE = f"""<!doctype html><html><head><title>loading</title></head>
<body style="margin:0;height:100vh;background:rgb{BEFORE}">
<script>
fetch("/slow").then((r) => r.text()).then((colour) => {{
  document.body.style.background = colour; document.title = "arrived";
}});
</script></body></html>"""


async def _unseen_page(request: web.Request) -> web.Response:
    return web.Response(text=UNSEEN_PAGE, content_type="text/html")


async def _slow(request: web.Request) -> web.Response:
    await asyncio.sleep(SLOW_MS / 1000)
    return web.Response(text=f"rgb{AFTER}")


def test_the_count_outside_the_browser_is_confirmed_by_the_pages_own_requests() -> None:
    """An answer the outside count has seen end may not yet have reached the page (a busy machine: the proxy has
    sent it, the browser has yet to read it). Counted by a tally that sees none of the page's requests, the page's
    own view holds the wait until its request is answered."""

    async def scenario() -> tuple[str, tuple[int, ...], float]:
        async with _origin(("/unseen", _unseen_page), ("/slow", _slow)) as (_, port):
            settings = BrowserSettings([], datetime(2024, 6, 1, tzinfo=UTC), 7)
            async with open_browser(settings) as context:
                page = context.pages[0] if context.pages else await context.new_page()
                quiet = traffic_quiet(Traffic(), (port,), page)  # a tally that sees nothing
                loop = asyncio.get_running_loop()
                told = loop.time()
                await page.goto(f"http://127.0.0.1:{port}/unseen", wait_until="load")
                assert await quiet(told)
                waited = loop.time() - told
                shot = Image.open(io.BytesIO(await page.screenshot())).convert("RGB")
                return await page.title(), shot.getpixel((10, 10)), waited  # type: ignore[return-value]

    title, pixel, waited = asyncio.run(scenario())
    assert (title, pixel) == ("arrived", AFTER)
    assert waited >= SLOW_MS / 1000
