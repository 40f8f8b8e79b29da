"""Four browsers replaying the same snapshot at the same time see the same pages, to the byte and the pixel.

One replay server, four Chromiums launched through ``open_browser`` at once, each loading every page of
the committed fixture snapshot (with the page's recorded actions) in capture order. The server's
matcher is shared between them, so this is where requests of one browser could change what another gets
(a repeated request's turn, a cache, a half-written response under concurrency).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path

import pytest

from capreplay.browser.actions import load_page
from capreplay.browser.launch import BrowserSettings, open_browser
from capreplay.browser.observe import observe
from capreplay.models.capture_plan import Action, CapturePlan
from capreplay.models.manifest import Manifest, PageEntry
from capreplay.replay.server import ReplayServer, ServeInfo

pytestmark = [pytest.mark.browser, pytest.mark.slow]

BROWSERS = 4


@dataclass(frozen=True)
class Seen:
    """One page as one browser ended up with it."""

    final_url: str
    dom: str
    """``page.content()``: the serialised DOM after the page's actions and settling."""
    screenshot: bytes
    """PNG of the viewport once it stopped changing."""


def _actions(entry: PageEntry) -> list[Action]:
    return list(CapturePlan.model_validate({"pages": [{"url": entry.url, "actions": entry.actions}]}).pages[0].actions)


async def _browse(info: ServeInfo, manifest: Manifest) -> dict[str, Seen]:
    settings = BrowserSettings(info.chromium_args, manifest.frozen_time, manifest.random_seed)
    seen = {}
    async with open_browser(settings) as context:
        page = context.pages[0]
        for entry in manifest.pages:
            loaded = await load_page(page, entry.url, _actions(entry))
            view = await observe(page)
            seen[entry.url] = Seen(loaded.final_url, await page.content(), view.screenshot)
    return seen


async def test_four_browsers_at_once_see_identical_pages(committed_snapshot: Path) -> None:
    server = ReplayServer(committed_snapshot)
    info = await server.start()
    manifest = server.store.manifest
    try:
        runs = await asyncio.gather(*(_browse(info, manifest) for _ in range(BROWSERS)))
    finally:
        await server.stop()
    first = runs[0]
    assert list(first) == [p.url for p in manifest.pages]
    for entry in manifest.pages:
        assert first[entry.url].final_url == entry.final_url
        for n, other in enumerate(runs[1:], start=2):
            mine, theirs = first[entry.url], other[entry.url]
            assert theirs.dom == mine.dom, f"browser {n} got another DOM for {entry.url}"
            assert theirs.screenshot == mine.screenshot, f"browser {n} got other pixels for {entry.url}"
    # Nothing was missed while four browsers shared the server.
    misses = [s for s in server.served if s.result == "miss"]
    assert misses == [], misses[:5]
