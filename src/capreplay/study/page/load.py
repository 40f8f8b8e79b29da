"""The study's browser and page session: a served snapshot, one offline Chromium, one load per page.

A page session is the methodology's: viewport 1280x800, load, network quiet, 500 ms, scrolled to the top. The
network is quiet when the replay server says this browser has had no request in flight for
:data:`~capreplay.replay.quiet.SERVER_QUIET_MS` (its quiet signal, :mod:`capreplay.replay.quiet`); a browser not
launched by :func:`served_browser` (or with ``server_quiet=False``) waits for Playwright's network idle (500 ms).
Every representation of a page is captured from one session and every answer about it is resolved in
the same session, so inputs and ground truth come from one load.
"""

from __future__ import annotations

import weakref
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from playwright.async_api import BrowserContext, Error as PlaywrightError, Page

from capreplay.browser.launch import BrowserSettings, open_browser
from capreplay.browser.settle import Quiet, network_settled
from capreplay.errors import BrowserError
from capreplay.replay.server import ReplayServer

NETWORK_IDLE_TIMEOUT_MS = 10_000
SETTLE_MS = 500

# The replay server's quiet signal for each browser served_browser launched; weak, so a closed one is forgotten.
_QUIET: weakref.WeakKeyDictionary[BrowserContext, Quiet] = weakref.WeakKeyDictionary()


@asynccontextmanager
async def replay_browser(snapshot: Path, *, cdp: bool = False) -> AsyncIterator[BrowserContext]:
    """A browser (through :mod:`capreplay.browser`) on the snapshot served offline; both stop on exit.

    ``cdp`` also serves CDP on a free loopback port, for the browser-use adapter to attach to.
    """
    async with served_browser(snapshot, cdp=cdp) as (context, _):
        yield context


@asynccontextmanager
async def served_browser(
    snapshot: Path, *, cdp: bool = False, server_quiet: bool = True
) -> AsyncIterator[tuple[BrowserContext, BrowserSettings]]:
    """:func:`replay_browser`, with the settings it was launched with (for a second browser on the same server,
    whose requests then count towards the quiet signal too). ``server_quiet``: page sessions in this browser
    wait for the server's quiet signal (else for Playwright's network idle)."""
    server = ReplayServer(snapshot, keep_log=False)
    info = await server.start()
    manifest = server.store.manifest
    settings = BrowserSettings(info.chromium_args, manifest.frozen_time, manifest.random_seed,
                               cdp_port=0 if cdp else None)
    try:
        async with open_browser(settings) as context:
            if server_quiet:

                async def quiet(since: float) -> bool:
                    return await server.quiet(info, since=since)

                _QUIET[context] = quiet
            yield context, settings
    finally:
        await server.stop()


async def open_page_session(context: BrowserContext, url: str, settle_ms: int = SETTLE_MS) -> Page:
    """A new tab with ``url`` loaded the way the study loads it (``settle_ms`` after the network is quiet),
    scrolled to the top."""
    page = await context.new_page()
    try:
        try:
            await page.goto(url, wait_until="load")
        except PlaywrightError as e:
            # A page that cannot be loaded offline ends the run with one line naming it, not a traceback.
            raise BrowserError(f"the page does not load offline: {e.message.splitlines()[0]}", url) from e
        # A page that keeps polling is measured as it is when the wait runs out.
        await network_settled(page, _QUIET.get(context), NETWORK_IDLE_TIMEOUT_MS)
        await page.wait_for_timeout(settle_ms)
        await page.evaluate("window.scrollTo(0, 0)")
    except BaseException:
        await page.close()
        raise
    return page
