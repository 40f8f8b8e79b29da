"""A capture stopped while a page's event stream is still sending keeps every event that arrived: the stream is
archived cut (``WARC-Truncated: time`` on its response and its timeline), and the manifest says the capture is
incomplete.

The capture is stopped as ``capreplay capture`` stops on SIGTERM: its task is cancelled, long before the page's
wait is over, so the stream is written by the interruption (the open streams cut as the capture ends, or the
browser's connection broken as it closes), never by a settled page."""

from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path

import pytest

from capreplay.archive.warc.live import read_stream_timeline
from capreplay.archive.warc.read import iter_records
from capreplay.capture.plan_file import parse_maps
from capreplay.capture.session import CaptureOptions
from capreplay.models.capture_plan import CapturePlan
from capreplay.testing.fixtures.streams import PAGE_URL, StreamSites, tick
from tests.support.interrupt import capture_stopped_at

pytestmark = pytest.mark.browser


def test_an_interrupted_capture_keeps_the_events_that_arrived(tmp_path: Path) -> None:
    out = tmp_path / "snap"

    async def run() -> int:
        async with StreamSites() as sites:
            pages = [{"url": PAGE_URL, "actions": [{"type": "wait", "ms": 20_000}]}]
            opts = CaptureOptions(
                out=out, plan=CapturePlan.model_validate({"pages": pages}), maps=parse_maps(sites.map_args()),
                progress=False,
            )  # fmt: skip
            return await capture_stopped_at(opts, lambda: sites.ticks_sent, 8)

    sent = asyncio.run(run())
    assert sent >= 8
    (warc,) = sorted(out.glob("archive/*.warc.gz"))
    records = list(iter_records(io.BytesIO(warc.read_bytes()), name=str(warc)))
    (ticker,) = [r for r in records if r.rec_type == "response" and str(r.url).endswith("/ticker")]
    assert ticker.warc_header("WARC-Truncated") == "time"
    (timeline_record,) = [
        r for r in records if r.rec_type == "metadata" and r.warc_header("WARC-Concurrent-To") == ticker.record_id
    ]
    timeline = read_stream_timeline(str(timeline_record.url), timeline_record.payload, truncated="time")
    count = len(timeline.events)
    # every tick written before the stop, but one the proxy may have had in hand
    assert count >= sent - 1
    assert ticker.payload.startswith(b"".join(tick(n) for n in range(1, count + 1)))
    assert [e.id for e in timeline.events] == [f"t{n}" for n in range(1, count + 1)] and timeline.ended == "cut"
    assert json.loads((out / "manifest.json").read_text())["complete"] is False
