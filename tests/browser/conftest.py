"""One capture of the timing origin per test session (real mitmproxy, real Chromium)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from capreplay.archive.snapshot.manifest import checked_manifest
from capreplay.capture.plan_file import parse_maps, parse_plan
from capreplay.capture.session import CaptureOptions, CaptureResult, capture
from capreplay.fixtures.timing.pages import WWW
from capreplay.fixtures.timing.sites import TimingSites

IDLE = {"type": "wait_for_network_idle"}
FEED_PLAN = [{"type": "autoscroll", "max_steps": 60, "pause_ms": 250}]
"""The feed's steps, in capture and in replay: far more steps than the feed needs, so only reaching its
end stops the scroll."""

PLAN = {
    "pages": [
        {"url": f"{WWW}/wait", "actions": [IDLE]},
        {"url": f"{WWW}/beacon", "actions": [IDLE]},
        {"url": f"{WWW}/clocks", "actions": [IDLE]},
        {"url": f"{WWW}/feed", "actions": FEED_PLAN},
    ]
}


async def _capture(out: Path) -> CaptureResult:
    async with TimingSites() as sites:
        options = CaptureOptions(out=out, plan=parse_plan(PLAN, "timing plan"), maps=parse_maps(sites.map_args()),
                                 progress=False)
        return await capture(options)


@pytest.fixture(scope="session")
def timing_snapshot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The timing origin's pages captured once; the origin is stopped afterwards, so replay is offline."""
    out = tmp_path_factory.mktemp("timing") / "snapshot"
    result = asyncio.run(_capture(out))
    assert not result.failed, result.failed
    return out


def captured_text(snapshot: Path, url: str) -> str:
    """The text of ``url`` as the capture saw it (its fidelity text file)."""
    entry = next(p for p in checked_manifest(snapshot).pages if p.url == url)
    assert entry.text is not None
    return (snapshot / entry.text).read_text(encoding="utf-8")
