"""The study's browser and page session: a served snapshot, one offline Chromium, one load per page.

A page session is the methodology's: viewport 1280x800, load, network idle, 500 ms, scrolled to the top.
Every representation of a page is captured from one session and every answer about it is resolved in
the same session, so inputs and ground truth come from one load.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from playwright.async_api import BrowserContext, Error as PlaywrightError, Page, TimeoutError as PlaywrightTimeout

from capreplay.browser.launch import BrowserSettings, open_browser
from capreplay.errors import BrowserError
from capreplay.replay.server import ReplayServer

NETWORK_IDLE_TIMEOUT_MS = 10_000
SETTLE_MS = 500


@asynccontextmanager
async def replay_browser(snapshot: Path, *, cdp: bool = False) -> AsyncIterator[BrowserContext]:
    """A browser (through :mod:`capreplay.browser`) on the snapshot served offline; both stop on exit.

    ``cdp`` also serves CDP on a free loopback port, for the browser-use adapter to attach to.
    """
    async with served_browser(snapshot, cdp=cdp) as (context, _):
        yield context


@asynccontextmanager
async def served_browser(snapshot: Path, *, cdp: bool = False) -> AsyncIterator[tuple[BrowserContext, BrowserSettings]]:
    """:func:`replay_browser`, with the settings it was launched with (for a second browser on the same server)."""
    server = ReplayServer(snapshot, keep_log=False)
    info = await server.start()
    manifest = server.store.manifest
    settings = BrowserSettings(info.chromium_args, manifest.frozen_time, manifest.random_seed,
                               cdp_port=0 if cdp else None)
    try:
        async with open_browser(settings) as context:
            yield context, settings
    finally:
        await server.stop()


async def open_page_session(context: BrowserContext, url: str, settle_ms: int = SETTLE_MS) -> Page:
    """A new tab with ``url`` loaded the way the study loads it (``settle_ms`` after network idle), scrolled to
    the top."""
    page = await context.new_page()
    try:
        try:
            await page.goto(url, wait_until="load")
        except PlaywrightError as e:
            # A page that cannot be loaded offline ends the run with one line naming it, not a traceback.
            raise BrowserError(f"the page does not load offline: {e.message.splitlines()[0]}", url) from e
        # A page that keeps polling is measured as it is when the wait runs out.
        with contextlib.suppress(PlaywrightTimeout):
            await page.wait_for_load_state("networkidle", timeout=NETWORK_IDLE_TIMEOUT_MS)
        await page.wait_for_timeout(settle_ms)
        await page.evaluate("window.scrollTo(0, 0)")
    except BaseException:
        await page.close()
        raise
    return page
