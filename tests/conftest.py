"""Shared fixtures: the repository's paths, and one fresh capture of the fixture sites per test session."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from capreplay.capture.plan_file import parse_maps
from capreplay.capture.session import CaptureOptions, CaptureResult, capture
from capreplay.fixtures.plan import fixture_plan
from capreplay.fixtures.sites import FixtureSites, SentBody

ROOT = Path(__file__).resolve().parent.parent


@dataclass
class Captured:
    """A snapshot captured during this test session, and every response the origin sent for it."""

    path: Path
    result: CaptureResult
    sent: list[SentBody]


async def _capture(out: Path) -> Captured:
    sites = FixtureSites()
    await sites.start()
    try:
        result = await capture(
            CaptureOptions(out=out, plan=fixture_plan(), maps=parse_maps(sites.map_args()), progress=False)
        )
    finally:
        await sites.stop()
    return Captured(out, result, list(sites.sent))


@pytest.fixture(scope="session", autouse=True)
def private_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A cache folder of this session's own (verification records), so no test reads or fills the user's;
    in the environment, so command-line runs in subprocesses use it too."""
    folder = tmp_path_factory.mktemp("cache")
    before = os.environ.get("CAPREPLAY_CACHE_DIR")
    os.environ["CAPREPLAY_CACHE_DIR"] = str(folder)
    yield folder
    if before is None:
        del os.environ["CAPREPLAY_CACHE_DIR"]
    else:
        os.environ["CAPREPLAY_CACHE_DIR"] = before


@pytest.fixture(scope="session")
def captured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Captured]:
    """The fixture sites captured once (real mitmproxy, real Chromium); the origin is stopped afterwards."""
    yield asyncio.run(_capture(tmp_path_factory.mktemp("capture") / "snapshot"))


@pytest.fixture(scope="session")
def committed_snapshot() -> Path:
    """The snapshot of the fixture sites committed in the repository."""
    return ROOT / "snapshots" / "fixtures"
