"""One capture of the fixture sites (real mitmproxy, real Chromium), as the session's ``captured`` fixture holds it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from capreplay.capture.plan_file import parse_maps
from capreplay.capture.session import CaptureOptions, CaptureResult, capture
from capreplay.testing.fixtures.plan import fixture_plan
from capreplay.testing.fixtures.sites import FixtureSites, SentBody


@dataclass
class Captured:
    """A snapshot captured during this test session, and every response the origin sent for it."""

    path: Path
    result: CaptureResult
    sent: list[SentBody]


async def capture_fixture_sites(out: Path) -> Captured:
    """Start the fixture sites, capture their plan into ``out``, stop them."""
    sites = FixtureSites()
    await sites.start()
    try:
        result = await capture(
            CaptureOptions(out=out, plan=fixture_plan(), maps=parse_maps(sites.map_args()), progress=False)
        )
    finally:
        await sites.stop()
    return Captured(out, result, list(sites.sent))
