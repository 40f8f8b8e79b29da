"""A capture stopped while a page's WebSocket is still pushing keeps every message that arrived: the connection is
archived cut (``WARC-Truncated: time``), counted in the manifest, and the manifest says the capture is incomplete.

The capture is stopped as ``capreplay capture`` stops on SIGTERM: its task is cancelled."""

from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path

import pytest

from capreplay.archive.warc.live import read_websocket_messages
from capreplay.archive.warc.read import iter_records
from capreplay.capture.plan_file import parse_maps
from capreplay.capture.session import CaptureOptions
from capreplay.models.capture_plan import CapturePlan
from capreplay.testing.fixtures.websocket_site import HOST, WebSocketSite
from tests.support.interrupt import capture_stopped_at

pytestmark = pytest.mark.browser


def test_an_interrupted_capture_keeps_the_messages_that_arrived(tmp_path: Path) -> None:
    out = tmp_path / "snap"

    async def run() -> int:
        async with WebSocketSite() as site:
            pages = [{"url": f"https://{HOST}/forever.html", "actions": [{"type": "wait", "ms": 20_000}]}]
            opts = CaptureOptions(
                out=out, plan=CapturePlan.model_validate({"pages": pages}), maps=parse_maps(site.map_args()),
                progress=False,
            )  # fmt: skip
            return await capture_stopped_at(opts, lambda: site.forever_sent, 8)

    sent = asyncio.run(run())
    assert sent >= 8
    (warc,) = sorted(out.glob("archive/*.warc.gz"))
    records = list(iter_records(io.BytesIO(warc.read_bytes()), name=str(warc)))
    (messages,) = [r for r in records if r.rec_type == "resource"]
    assert messages.warc_header("WARC-Truncated") == "time"
    log = read_websocket_messages(str(messages.url), messages.payload, truncated="time")
    assert log.ended == "cut" and all(m.type == "receive" for m in log.messages)
    texts = [m.text for m in log.messages]
    assert texts == [f"tick {n}" for n in range(1, len(texts) + 1)]
    assert len(texts) >= sent - 1  # every tick sent before the stop, but one the proxy may have had in hand
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["complete"] is False
    assert manifest["websockets"] == {"connections": 1, "messages": len(texts), "cut": 1}
