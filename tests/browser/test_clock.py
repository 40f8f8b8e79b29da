"""The deterministic clock in a real Chromium: it advances, every clock agrees, capture and replay match.

The expectations are the documented rule (determinism.py), written out here: the first read tells the
capture time, every read advances 1 ms, navigationStart lies 12 ms before the capture time with
responseStart 10 ms after it.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from itertools import pairwise
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from capreplay.archive.snapshot.manifest import checked_manifest
from capreplay.browser.actions import load_page
from capreplay.models.capture_plan import WaitForNetworkIdle
from capreplay.testing.fixtures.timing.pages import STATS, WAIT_MS, WWW
from tests.support.replay import replay
from tests.support.timing import captured_text

pytestmark = pytest.mark.browser

STEP_MS = 1
NAVIGATION_MS = 12
RESPONSE_START_MS = 10
IDLE = [WaitForNetworkIdle(type="wait_for_network_idle")]

# performance.timing's fields in the order the processing model sets them (unload aside).
ORDER = ("navigationStart", "redirectStart", "redirectEnd", "fetchStart", "domainLookupStart", "domainLookupEnd",
         "connectStart", "secureConnectionStart", "connectEnd", "requestStart", "responseStart", "responseEnd",
         "domLoading", "domInteractive", "domContentLoadedEventStart", "domContentLoadedEventEnd", "domComplete",
         "loadEventStart", "loadEventEnd")


async def _replayed_clocks(snapshot: Path) -> dict[str, Any]:
    async with replay(snapshot) as (_, ctx):
        page = ctx.pages[0]
        await load_page(page, f"{WWW}/clocks", list(IDLE))
        return dict(json.loads(await page.inner_text("#clocks")))


def test_a_page_that_waits_by_polling_the_clock_goes_on_in_capture(timing_snapshot: Path) -> None:
    text = captured_text(timing_snapshot, f"{WWW}/wait")
    assert f"waited {WAIT_MS} ms in a loop" in text
    assert f"waited {WAIT_MS} ms by timer" in text


async def test_a_page_that_waits_by_polling_the_clock_goes_on_in_replay(timing_snapshot: Path) -> None:
    async with replay(timing_snapshot) as (_, ctx):
        page = ctx.pages[0]
        await load_page(page, f"{WWW}/wait", list(IDLE))
        assert await page.inner_text("#busy") == f"waited {WAIT_MS} ms in a loop"
        assert await page.inner_text("#polled") == f"waited {WAIT_MS} ms by timer"


async def test_a_beacon_computed_from_performance_timing_is_an_exact_hit(timing_snapshot: Path) -> None:
    archived = [line for line in (timing_snapshot / "index.cdxj").read_text().splitlines() if "/b.gif?" in line]
    assert len(archived) == 1
    async with replay(timing_snapshot) as (server, ctx):
        page = ctx.pages[0]
        await load_page(page, f"{WWW}/beacon", list(IDLE))
        sent = await page.inner_text("#beacon")
    beacons = [s for s in server.served if s.url.startswith(f"{STATS}/b.gif")]
    assert [(s.url, s.result, s.rule) for s in beacons] == [(sent, "hit", None)]
    assert json.loads(archived[0].split(" ", 2)[2])["url"] == sent
    values = {k: int(v[0]) for k, v in parse_qs(urlsplit(sent).query).items()}
    assert values["ttfb"] == RESPONSE_START_MS
    assert values["nav"] == RESPONSE_START_MS + 1  # responseEnd, one phase later
    assert RESPONSE_START_MS < values["dom"] <= values["load"] <= values["since"]


def _check_clocks(seen: dict[str, Any], capture: datetime) -> None:
    capture_ms = int(capture.timestamp() * 1000)
    reads = [t for _, t in seen["reads"]]
    # The first read is the capture time, the next ones one step each, whichever clock is read.
    assert reads[:3] == [capture_ms, capture_ms + STEP_MS, capture_ms + 2 * STEP_MS]
    assert all(b > a for a, b in pairwise(reads)), seen["reads"]
    assert seen["origin"] == capture_ms - NAVIGATION_MS
    # Date() tells the same clock as a string, to the second (the capture time is a whole second).
    assert datetime.strptime(seen["dateString"][:24], "%a %b %d %Y %H:%M:%S").replace(tzinfo=UTC) == capture
    timing = seen["stamps"]["timing"]
    assert timing["navigationStart"] == seen["origin"]
    assert timing["responseStart"] == seen["origin"] + RESPONSE_START_MS
    assert timing["domLoading"] == capture_ms
    assert timing["unloadEventStart"] == timing["unloadEventEnd"] == 0
    happened = [timing[name] for name in ORDER if timing[name] != 0]
    assert happened == sorted(happened), timing
    assert timing["loadEventEnd"] <= reads[3]  # the read after load is not earlier than load
    nav = seen["stamps"]["navigation"]
    assert nav == {"start": timing["navigationStart"], "responseStart": timing["responseStart"],
                   "domInteractive": timing["domInteractive"], "loadEventStart": timing["loadEventStart"]}
    resource = seen["stamps"]["resource"]
    assert seen["origin"] <= resource["start"] <= resource["responseEnd"] <= reads[3]
    assert resource["duration"] >= 0
    assert reads[3] <= seen["stamps"]["click"] <= reads[4]
    frame = reads[5]
    assert reads[4] < frame < reads[6]
    assert seen["stamps"]["timeline"] == frame  # document.timeline.currentTime inside the frame


async def test_every_clock_agrees_and_two_loads_see_the_same_times(timing_snapshot: Path) -> None:
    capture = checked_manifest(timing_snapshot).frozen_time
    text = captured_text(timing_snapshot, f"{WWW}/clocks")
    in_capture = json.loads(next(line for line in text.splitlines() if line.startswith("{")))
    first = await _replayed_clocks(timing_snapshot)
    second = await _replayed_clocks(timing_snapshot)
    for seen in (in_capture, first, second):
        _check_clocks(seen, capture)
    assert first == second == in_capture
