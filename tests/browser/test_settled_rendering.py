"""Settled rendering in every browser capreplay launches: an animated image shows the same frame however long
the page has been open, a CSS transition has ended by the time anyone looks (in the first page and in pages
opened later), and an endless CSS animation is held at its first frame, so two screenshots of them are
equal; the benchmark's switch turns it off."""

from __future__ import annotations

import dataclasses
import io
from collections.abc import AsyncIterator
from datetime import UTC, datetime

import pytest
from aiohttp import web
from PIL import Image

from capreplay.browser.launch import BrowserSettings, open_browser
from capreplay.util.local_server import LocalServer

pytestmark = pytest.mark.browser

RED, BLUE = (255, 0, 0), (0, 0, 255)
# A two-second fade from black to white, started once the page has painted.
FADE = """<style>#box { width: 100px; height: 100px; background: rgb(0, 0, 0); transition: background-color 2s linear; }
#box.on { background: rgb(255, 255, 255); }</style><div id=box></div>
<script>requestAnimationFrame(() => requestAnimationFrame(() => { box.className = 'on'; }));</script>"""
# A spinner: an endless rotation, as loading indicators are.
SPINNER = """<style>@keyframes spin { from { transform: rotate(0deg); } to { transform: rotate(360deg); } }
#spinner { width: 100px; height: 20px; background: red; animation: spin 1s linear infinite; }</style>
<div id=spinner></div>"""


def _animated_gif() -> bytes:
    frames = [Image.new("RGB", (100, 100), colour) for colour in (RED, BLUE)]
    out = io.BytesIO()
    frames[0].save(out, format="GIF", save_all=True, append_images=frames[1:], duration=100, loop=0)
    return out.getvalue()


class GifPage(LocalServer):
    """A page that shows one animated image, red then blue every 100 ms."""

    def application(self) -> web.Application:
        gif = _animated_gif()

        async def page(_: web.Request) -> web.Response:
            return web.Response(text='<body style="margin:0"><img src="/a.gif">', content_type="text/html")

        async def image(_: web.Request) -> web.Response:
            return web.Response(body=gif, content_type="image/gif")

        async def fade(_: web.Request) -> web.Response:
            return web.Response(text=FADE, content_type="text/html")

        async def spinner(_: web.Request) -> web.Response:
            return web.Response(text=SPINNER, content_type="text/html")

        app = web.Application()
        app.router.add_get("/", page)
        app.router.add_get("/a.gif", image)
        app.router.add_get("/fade", fade)
        app.router.add_get("/spinner", spinner)
        return app


@pytest.fixture
async def origin() -> AsyncIterator[GifPage]:
    server = GifPage()
    await server.start()
    try:
        yield server
    finally:
        await server.stop()


# Pauses between screenshots, in ms: unequal, so that a screenshot's own time (longer on a busy machine) cannot
# bring every sample to the same phase of the 200 ms animation and show one frame of a moving image.
PAUSES = (130, 55, 170, 95, 20, 145, 75, 110)


async def _colours(
    settings: BrowserSettings, port: int, *, samples: int = len(PAUSES), enough: int = 3
) -> set[tuple[int, int, int]]:
    """The image's colour in screenshots taken over about a second (more than the animation's period), and up to
    ``samples`` of them until ``enough`` colours were seen."""
    seen: set[tuple[int, int, int]] = set()
    async with open_browser(settings) as context:
        page = context.pages[0] if context.pages else await context.new_page()
        await page.goto(f"http://127.0.0.1:{port}/")
        for n in range(samples):
            await page.wait_for_timeout(PAUSES[n % len(PAUSES)])
            shot = Image.open(io.BytesIO(await page.screenshot())).convert("RGB")
            seen.add(shot.getpixel((50, 50)))  # type: ignore[arg-type]
            if len(seen) >= enough:
                break
    return seen


SETTINGS = BrowserSettings([], datetime(2020, 1, 1, tzinfo=UTC), 1)


async def test_an_animated_image_stays_on_its_first_frame(origin: GifPage) -> None:
    assert await _colours(SETTINGS, origin.port) == {RED}


async def test_without_settled_rendering_the_image_animates(origin: GifPage) -> None:
    # the control: the same page animates when the setting is off, so the test above can fail
    animating = dataclasses.replace(SETTINGS, settle_rendering=False)
    assert await _colours(animating, origin.port, samples=40, enough=2) == {RED, BLUE}


async def _fade_colours(settings: BrowserSettings, port: int) -> list[str]:
    """The box's colour 300 ms into the fade, in the browser's first page, after a navigation, in a new page."""
    seen = []
    async with open_browser(settings) as context:
        first = context.pages[0] if context.pages else await context.new_page()
        later = await context.new_page()
        for page in (first, first, later):
            await page.goto(f"http://127.0.0.1:{port}/fade?{len(seen)}")
            await page.wait_for_timeout(300)
            seen.append(await page.evaluate("getComputedStyle(document.getElementById('box')).backgroundColor"))
    return seen


async def test_a_transition_has_ended_when_the_page_is_looked_at(origin: GifPage) -> None:
    assert await _fade_colours(SETTINGS, origin.port) == ["rgb(255, 255, 255)"] * 3


async def test_without_settled_rendering_the_transition_is_caught_half_way(origin: GifPage) -> None:
    colours = await _fade_colours(dataclasses.replace(SETTINGS, settle_rendering=False), origin.port)
    assert all(c != "rgb(255, 255, 255)" for c in colours)


async def _spinner_transforms(settings: BrowserSettings, port: int) -> set[str]:
    """The spinner's transform at a few moments after the page loaded."""
    seen = set()
    async with open_browser(settings) as context:
        page = context.pages[0] if context.pages else await context.new_page()
        await page.goto(f"http://127.0.0.1:{port}/spinner")
        for _ in range(4):
            await page.wait_for_timeout(110)
            seen.add(await page.evaluate("getComputedStyle(document.getElementById('spinner')).transform"))
    return seen


async def test_an_endless_animation_is_held_at_its_first_frame(origin: GifPage) -> None:
    assert await _spinner_transforms(SETTINGS, origin.port) == {"matrix(1, 0, 0, 1, 0, 0)"}


async def test_without_settled_rendering_the_spinner_turns(origin: GifPage) -> None:
    assert len(await _spinner_transforms(dataclasses.replace(SETTINGS, settle_rendering=False), origin.port)) > 1

