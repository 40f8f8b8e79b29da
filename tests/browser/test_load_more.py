"""A click, a hover and a drag wait for the batch they asked for from a slow API, in capture and in replay."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path

import pytest
from playwright.async_api import Page

from capreplay.archive.index.cdxj import build_index
from capreplay.browser.actions import load_page, run_action
from capreplay.browser.launch import BrowserSettings, open_browser
from capreplay.capture.plan_file import parse_maps, parse_plan
from capreplay.capture.session import CaptureOptions, capture
from capreplay.models.capture_plan import Action, CapturePlan, Click, Drag, Hover
from capreplay.testing.fixtures.timing.pages import API, MORE_BATCH_SIZE, MORE_BATCHES, WWW, feed_delay_ms
from capreplay.testing.fixtures.timing.sites import TimingSites
from tests.support.replay import replay

pytestmark = pytest.mark.browser

MORE = f"{WWW}/more"
PRESS = {"type": "click", "selector": "#more"}
PLAN = {"pages": [{"url": MORE, "actions": [PRESS] * MORE_BATCHES}]}
"""One press of "Load more" per batch, in capture and in replay: the last press gets the last batch."""

_ITEM_IDS = "items => items.map(i => Number(i.dataset.id))"


@pytest.fixture(scope="module")
def more_snapshot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The "Load more" page captured with its plan; the origin is stopped afterwards, so replay is offline."""
    out = tmp_path_factory.mktemp("more") / "snapshot"

    async def run() -> None:
        async with TimingSites() as sites:
            options = CaptureOptions(out=out, plan=parse_plan(PLAN, "load more plan"),
                                     maps=parse_maps(sites.map_args()), progress=False)
            result = await capture(options)
        assert not result.failed, result.failed

    asyncio.run(run())
    return out


def _archived_batches(snapshot: Path) -> list[tuple[str, int | None]]:
    """The "Load more" API's responses in the snapshot's WARC files, in capture order, with their status."""
    files = [path.relative_to(snapshot).as_posix() for path in sorted(snapshot.glob("archive/*.warc.gz"))]
    entries = build_index(snapshot, files, workers=1)
    return [(e.url, e.status) for e in entries if e.url.startswith(f"{API}/more")]


def test_every_batch_is_slower_than_the_documents_one_networkidle_wait() -> None:
    delays = [feed_delay_ms(n) for n in range(1, MORE_BATCHES + 1)]
    assert MORE_BATCHES >= 3
    assert min(delays) >= 300 and max(delays) <= 800 and len(set(delays)) == MORE_BATCHES


def test_the_capture_holds_every_batch_the_plan_asked_for(more_snapshot: Path) -> None:
    assert _archived_batches(more_snapshot) == [(f"{API}/more?batch={n}", 200) for n in range(1, MORE_BATCHES + 1)]


async def test_the_replay_of_the_same_plan_shows_every_item_with_no_miss(more_snapshot: Path) -> None:
    actions = CapturePlan.model_validate(PLAN).pages[0].actions
    async with replay(more_snapshot) as (server, ctx):
        page = ctx.pages[0]
        await load_page(page, MORE, list(actions))
        ids = await page.eval_on_selector_all("li.item", _ITEM_IDS)
        button = await page.locator("#more").inner_text()
    assert ids == list(range(1, MORE_BATCHES * MORE_BATCH_SIZE + 1))
    assert button == "No more items"
    assert [s.url for s in server.served if s.result != "hit"] == []
    fetched = [s.url for s in server.served if s.url.startswith(f"{API}/more")]
    assert fetched == [f"{API}/more?batch={n}" for n in range(1, MORE_BATCHES + 1)]


async def _items_after(page: Page, action: Action) -> int:
    await run_action(page, action)
    return await page.locator("li.item").count()


async def test_a_click_a_hover_and_a_drag_each_wait_for_their_batch() -> None:
    inputs: list[Action] = [
        Click(type="click", selector="#more"),
        Hover(type="hover", selector="#peek"),
        Drag(type="drag", selector="#pull", dx=80),
    ]
    assert len(inputs) == MORE_BATCHES
    async with TimingSites() as sites:
        settings = BrowserSettings(sites.chromium_args(), datetime.now(UTC), 1)
        async with open_browser(settings) as ctx:
            page = ctx.pages[0]
            await page.goto(MORE, wait_until="load")
            # Playwright's networkidle happens once per document: waiting for it again returns at once.
            await page.wait_for_load_state("networkidle")
            counts = [await _items_after(page, action) for action in inputs]
    assert counts == [n * MORE_BATCH_SIZE for n in range(1, MORE_BATCHES + 1)]
