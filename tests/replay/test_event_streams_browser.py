"""Server-sent events end to end: the event-stream origin captured by capreplay's capture, replayed to Chromium by
``capreplay serve`` directly and through its proxy.

The closing stream closes twice and is resumed with ``Last-Event-ID``, then stopped with a 204; the ticker never
ends, so the capture cuts it at the page's settle point. The page lists what its ``EventSource``s received.
"""

from __future__ import annotations

import asyncio
import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser

from capreplay.archive.warc.live import read_stream_timeline
from capreplay.archive.warc.read import iter_records
from capreplay.archive.warc.stored import StoredRecord
from capreplay.capture.plan_file import parse_maps
from capreplay.capture.session import CaptureOptions, capture
from capreplay.models.capture_plan import CapturePlan, PagePlan, Wait
from capreplay.testing.fixtures.streams import GAP_MS, PAGE_URL, SETTLE_WAIT_MS, StreamSites, closing_event, tick
from tests.support.both_doors import browser_for_both, serving_with_proxy

pytestmark = pytest.mark.browser

CLOSING_SEEN = ["open", "1 chapter event 1", "2 chapter event 2", "3 chapter event 3", "reconnecting", "open",
                "4 chapter event 4", "5 chapter event 5", "reconnecting", "stopped"]  # fmt: skip
"""What the page lists for the closing stream, live: two connections, then the 204 that stops it."""


def _records(snapshot: Path) -> list[StoredRecord]:
    (warc,) = sorted(snapshot.glob("archive/*.warc.gz"))
    with warc.open("rb") as f:
        return list(iter_records(io.BytesIO(f.read()), name=str(warc)))


@pytest.fixture(scope="module")
def snapshot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The stream page captured once: it waits on the page, then settles with the ticker still going."""
    out = tmp_path_factory.mktemp("streams") / "snap"

    async def run() -> None:
        async with StreamSites() as sites:
            plan = CapturePlan(pages=[PagePlan(url=PAGE_URL, actions=[Wait(type="wait", ms=SETTLE_WAIT_MS)])])
            opts = CaptureOptions(out=out, plan=plan, maps=parse_maps(sites.map_args()), progress=False)
            result = await capture(opts)
        assert not result.failed, result.failed

    asyncio.run(run())
    return out


@pytest.fixture(scope="module")
def served(snapshot: Path) -> Iterator[dict[str, Any]]:
    """``capreplay serve --proxy-port 0`` on the snapshot: its first line."""
    with serving_with_proxy(snapshot) as first_line:
        yield first_line


@pytest.fixture(scope="module")
def browser(served: dict[str, Any]) -> Iterator[Browser]:
    """One Chromium that browses the snapshot directly and through the proxy (a context picks the proxy)."""
    with browser_for_both(served) as launched:
        yield launched


def _listed(browser: Browser, proxy_port: int | None, *, ticks: int) -> tuple[list[str], list[str]]:
    """Load the page (through the proxy on ``proxy_port``, or directly) and return both lists once the closing
    stream has stopped and the ticker has listed ``ticks`` events."""
    proxy = {"server": f"http://127.0.0.1:{proxy_port}"} if proxy_port else None
    context = browser.new_context(proxy=proxy)  # type: ignore[arg-type]
    try:
        page = context.new_page()
        page.goto(PAGE_URL)
        page.wait_for_function(
            "n => document.querySelectorAll('#closing li').length >= 10"
            " && document.querySelectorAll('#ticker li').length >= n",
            arg=ticks + 1,
            timeout=20_000,
        )
        page.wait_for_timeout(1500)  # anything that would come after (a reconnect, a repeat) comes now
        read = "id => [...document.querySelectorAll('#' + id + ' li')].map(li => li.textContent)"
        return page.evaluate(read, "closing"), page.evaluate(read, "ticker")
    finally:
        context.close()


def test_capture_keeps_both_closed_connections_and_cuts_the_ticker(snapshot: Path) -> None:
    records = _records(snapshot)
    responses = {r.record_id: r for r in records if r.rec_type == "response"}
    timelines = [r for r in records if r.rec_type == "metadata"]
    closing = [r for r in responses.values() if r.url and r.url.endswith("/closing")]
    assert [r.status for r in closing] == [200, 200, 204]
    assert closing[0].payload == b"retry: 50\n\n" + b"".join(closing_event(n) for n in (1, 2, 3))
    assert closing[1].payload == b"retry: 50\n\n" + b"".join(closing_event(n) for n in (4, 5))
    (ticker,) = [r for r in responses.values() if r.url and r.url.endswith("/ticker")]
    assert ticker.warc_header("WARC-Truncated") == "time"
    by_response = {}
    for record in timelines:
        (target,) = record.warc_header_values("WARC-Concurrent-To")
        by_response[target] = read_stream_timeline(
            str(record.url), record.payload, truncated=record.warc_header("WARC-Truncated")
        )
    first, second = by_response[closing[0].record_id], by_response[closing[1].record_id]
    assert [e.id for e in first.events] == [None, "1", "2", "3"] and first.ended == "closed"
    assert [e.id for e in second.events] == [None, "4", "5"] and second.ended == "closed"
    # timed as they arrived, not all at once: the origin waits GAP_MS before each of the three events (120 ms in
    # all); on a busy machine the headers may reach the proxy late and events early, so only one gap is asked for
    assert first.events[-1].ts - first.events[0].ts >= GAP_MS / 1000
    cut = by_response[ticker.record_id]
    assert cut.ended == "cut"
    count = len(cut.events)
    assert count >= 5, "the ticker runs for the whole wait"
    assert ticker.payload.startswith(b"".join(tick(n) for n in range(1, count + 1)))
    assert [e.id for e in cut.events] == [f"t{n}" for n in range(1, count + 1)]
    # events that came in one chunk share its time
    assert all(b.ts >= a.ts for a, b in zip(cut.events, cut.events[1:], strict=False))
    # each timeline record sits right after its response
    order = [r.record_id for r in records]
    for response_id in by_response:
        assert records[order.index(response_id) + 1].rec_type == "metadata"


@pytest.mark.parametrize("through", ["server", "proxy"])
def test_replay_sends_the_same_events_twice_resumes_and_keeps_the_cut_stream_open(
    snapshot: Path, served: dict[str, Any], browser: Browser, through: str
) -> None:
    records = _records(snapshot)
    (ticker,) = [r for r in records if r.rec_type == "response" and str(r.url).endswith("/ticker")]
    ticks = ticker.payload.count(b"data: tick")
    proxy_port = served["proxy_port"] if through == "proxy" else None
    first = _listed(browser, proxy_port, ticks=ticks)
    second = _listed(browser, proxy_port, ticks=ticks)
    assert first == second
    closing, ticker_list = first
    assert closing == CLOSING_SEEN
    # every event that arrived before the cut, once, and the stream stays open: no reconnect, no repeat
    assert ticker_list == ["open", *(f"t{n} tick {n}" for n in range(1, ticks + 1))]
