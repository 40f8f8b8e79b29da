"""A replay server with a Chromium on it, as the capture-replay, clock, scroll and scheme tests use them."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from playwright.async_api import BrowserContext

from capreplay.browser.launch import BrowserSettings, open_browser
from capreplay.replay.server import ReplayServer


@asynccontextmanager
async def replay(snapshot: Path) -> AsyncIterator[tuple[ReplayServer, BrowserContext]]:
    """A replay server and a browser launched on it through capreplay.browser (a test using it is ``browser``)."""
    server = ReplayServer(snapshot)
    info = await server.start()
    manifest = server.store.manifest
    try:
        async with open_browser(BrowserSettings(info.chromium_args, manifest.frozen_time, manifest.random_seed)) as ctx:
            yield server, ctx
    finally:
        await server.stop()
