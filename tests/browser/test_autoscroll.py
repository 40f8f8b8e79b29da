"""Autoscroll finishes an infinite feed whose API answers slowly, in capture and in replay."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from warcio.archiveiterator import ArchiveIterator

from capreplay.browser.actions import load_page, run_action
from capreplay.browser.launch import BrowserSettings, open_browser
from capreplay.models.capture_plan import CapturePlan, Scroll
from capreplay.testing.fixtures.timing.pages import API, FEED_BATCH_SIZE, FEED_BATCHES, WWW, feed_delay_ms
from capreplay.testing.fixtures.timing.sites import TimingSites
from tests.support.replay import replay
from tests.support.timing import FEED_PLAN

pytestmark = pytest.mark.browser

FEED = f"{WWW}/feed"


def test_the_feed_is_slow_and_long_enough_to_need_waiting() -> None:
    delays = [feed_delay_ms(n) for n in range(1, FEED_BATCHES + 1)]
    assert FEED_BATCHES >= 6
    assert min(delays) >= 300 and max(delays) <= 800 and len(set(delays)) > 3


def test_the_capture_holds_every_batch(timing_snapshot: Path) -> None:
    batches = []
    for path in sorted(timing_snapshot.glob("archive/*.warc.gz")):
        with path.open("rb") as stream:
            for record in ArchiveIterator(stream):
                uri = record.rec_headers.get_header("WARC-Target-URI") or ""
                if record.rec_type == "response" and uri.startswith(f"{API}/feed?batch="):
                    batches.append(int(uri.rsplit("=", 1)[1]))
    assert sorted(batches) == list(range(1, FEED_BATCHES + 1))


async def test_the_replay_of_the_same_plan_shows_every_item_with_no_miss(timing_snapshot: Path) -> None:
    actions = CapturePlan.model_validate({"pages": [{"url": FEED, "actions": FEED_PLAN}]}).pages[0].actions
    async with replay(timing_snapshot) as (server, ctx):
        page = ctx.pages[0]
        await load_page(page, FEED, list(actions))
        ids = await page.eval_on_selector_all("li.item", "items => items.map(i => Number(i.dataset.id))")
        end = await page.locator("#end").all_inner_texts()
    assert ids == list(range(1, FEED_BATCHES * FEED_BATCH_SIZE + 1))
    assert end == ["End of feed"]
    assert [s.url for s in server.served if s.result != "hit"] == []
    fetched = [s.url for s in server.served if s.url.startswith(f"{API}/feed")]
    assert fetched == [f"{API}/feed?batch={n}" for n in range(1, FEED_BATCHES + 1)]


async def test_a_scroll_step_waits_for_the_batch_it_asked_for() -> None:
    # Batch 2 takes longer than the old fixed 200 ms pause: only waiting for the network shows it.
    assert feed_delay_ms(2) > 200
    async with TimingSites() as sites:
        settings = BrowserSettings(sites.chromium_args(), datetime.now(UTC), 1)
        async with open_browser(settings) as ctx:
            page = ctx.pages[0]
            await page.goto(FEED, wait_until="load")
            await page.wait_for_function(f"document.querySelectorAll('li.item').length === {FEED_BATCH_SIZE}")
            # Playwright's networkidle happens once per document: waiting for it again returns at once.
            await page.wait_for_load_state("networkidle")
            await run_action(page, Scroll(type="scroll", dy=FEED_BATCH_SIZE * 150))
            assert await page.locator("li.item").count() == 2 * FEED_BATCH_SIZE
