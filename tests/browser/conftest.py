"""One capture of the timing origin per test session (real mitmproxy, real Chromium)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from capreplay.capture.plan_file import parse_maps, parse_plan
from capreplay.capture.session import CaptureOptions, CaptureResult, capture
from capreplay.testing.fixtures.timing.sites import TimingSites
from tests.support.timing import PLAN


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
