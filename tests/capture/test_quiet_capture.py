"""Capture settles each page when the proxy has seen the browser's requests go quiet (the addon counts them in
flight), and archives what it archived with Playwright's network idle: the same URLs, the same pages."""

from __future__ import annotations

import asyncio
import re
import time
from collections import Counter
from pathlib import Path

import pytest
from mitmproxy import http
from mitmproxy.test import tflow

from capreplay.archive.index.cdxj import build_index
from capreplay.capture.addon import CaptureAddon, HostPolicy
from capreplay.capture.plan_file import parse_maps
from capreplay.capture.session import CaptureOptions, capture
from capreplay.testing.fixtures.plan import fixture_plan
from capreplay.testing.fixtures.sites import FixtureSites

_CLOCK = re.compile(r"([?&])_=\d{13}\b")


async def test_the_addon_counts_a_flow_from_its_headers_to_its_response_or_error() -> None:
    recorder = CaptureAddon(HostPolicy(), lambda exchange: None)
    first, second, tunnel = tflow.tflow(), tflow.tflow(), tflow.tflow()
    tunnel.request.method = "CONNECT"
    for flow in (first, second, tunnel):
        recorder.requestheaders(flow)
    assert recorder.traffic.inflight((0,)) == 2
    first.response = http.Response.make(200, b"ok")
    recorder.response(first)
    recorder.response(first)  # a second event for the same flow must not count it twice
    assert recorder.traffic.inflight((0,)) == 1
    loop = asyncio.get_running_loop()
    assert not await recorder.traffic.quiet((0,), since=loop.time(), timeout_ms=300)
    recorder.error(second)
    began = loop.time()
    assert await recorder.traffic.quiet((0,), since=began)
    assert loop.time() - began >= 0.19


async def test_a_flow_is_in_flight_until_its_record_is_written() -> None:
    """Writing the record holds the response back from the browser, so the flow ends after the sink returns."""
    during: list[int] = []
    recorder = CaptureAddon(HostPolicy(), lambda exchange: during.append(recorder.traffic.inflight((0,))))
    flow = tflow.tflow()
    recorder.requestheaders(flow)
    flow.response = http.Response.make(200, b"ok")
    recorder.response(flow)
    assert during == [1]
    assert recorder.traffic.inflight((0,)) == 0


def _archived(snapshot: Path) -> Counter[tuple[str, str]]:
    """The snapshot's archived requests. A cache buster is the page's frozen clock, which is the capture's start
    (``Date.now()`` in ``?_=``): it differs between any two captures, so it is compared as ``_=<clock>``."""
    files = [p.relative_to(snapshot).as_posix() for p in sorted(snapshot.glob("archive/*.warc.gz"))]
    return Counter((e.method, _CLOCK.sub(r"\1_=<clock>", e.url)) for e in build_index(snapshot, files, workers=1))


@pytest.mark.browser
def test_capture_archives_the_same_urls_and_pages_settling_on_the_proxy(tmp_path: Path) -> None:
    async def run(out: Path, proxy_quiet: bool) -> tuple[list[tuple[str, str | None, str | None]], float]:
        sites = FixtureSites()
        await sites.start()
        began = time.perf_counter()
        try:
            result = await capture(CaptureOptions(out=out, plan=fixture_plan(), maps=parse_maps(sites.map_args()),
                                                  progress=False, proxy_quiet=proxy_quiet))
        finally:
            await sites.stop()
        assert not result.failed, result.failed
        pages = [(p.url, p.final_url, p.title) for p in result.manifest.pages]
        return pages, time.perf_counter() - began

    idle_pages, idle_s = asyncio.run(run(tmp_path / "idle", False))
    quiet_pages, quiet_s = asyncio.run(run(tmp_path / "quiet", True))
    assert quiet_pages == idle_pages
    idle, quiet = _archived(tmp_path / "idle"), _archived(tmp_path / "quiet")
    assert len(idle) > 20
    assert quiet == idle, {"only network idle": idle - quiet, "only proxy quiet": quiet - idle}
    print(f"capture of the fixture sites: network idle {idle_s:.1f} s, proxy quiet {quiet_s:.1f} s")
