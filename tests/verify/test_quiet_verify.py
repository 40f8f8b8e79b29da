"""verify settles each page on the replay server's quiet signal and reports what it reported with Playwright's
network idle: the same requests, the same pixel and text comparisons, on the committed fixture snapshots."""

from __future__ import annotations

import time
from dataclasses import replace

import pytest

from capreplay.verify.page_loads import PageReport, verify_pages
from tests.support.paths import ROOT

pytestmark = pytest.mark.browser


def _sorted(report: PageReport) -> PageReport:
    return replace(report, requests=sorted(report.requests, key=lambda r: (r.url, r.method, r.result)))


@pytest.mark.parametrize("name", ["fixtures", "study"])
async def test_verify_reports_the_same_with_the_servers_quiet_signal(name: str) -> None:
    snapshot = ROOT / "snapshots" / name
    began = time.perf_counter()
    idle = await verify_pages(snapshot, server_quiet=False)
    middle = time.perf_counter()
    quiet = await verify_pages(snapshot)
    ended = time.perf_counter()
    # Every captured page was compared, so the equality below covers pixels and text, not only requests.
    assert len(idle) == len(list((snapshot / "captures").glob("*.png")))
    assert all(r.pixels is not None and r.text is not None for r in idle)
    assert [r.status for r in idle] == ["ok"] * len(idle)
    # The requests in the order the server received them: concurrent ones arrive in any order, run after run.
    assert [_sorted(r) for r in quiet] == [_sorted(r) for r in idle]
    print(f"{name}: network idle {middle - began:.1f} s, server quiet {ended - middle:.1f} s")
