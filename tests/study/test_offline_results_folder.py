"""The offline study's results folder, as ``capreplay demo`` and ``scripts/study_offline.py`` write it: a
``selftest.json`` that reads back as the report written, tables with hand-counted cells, and a page in the
viewer beside a run."""

from __future__ import annotations

import json
import re
from html import unescape
from pathlib import Path

from capreplay.study.offline.results_folder import tokens_md, write_offline_results
from capreplay.study.offline.selftest import SelftestReport
from capreplay.study.tokens.view_tokens import ViewTokens
from capreplay.view.assemble import ViewInputs, assemble
from tests.support.paths import ROOT

COMMITTED = ROOT / "results" / "study-offline" / "selftest.json"
COUNTS = [
    ViewTokens(page="home", representation="raw_html", tokens=1200, characters=4000, image=None),
    ViewTokens(page="home", representation="markdown", tokens=300, characters=1100, image=None),
    ViewTokens(page="list", representation="raw_html", tokens=2500, characters=9000, image=None),
    ViewTokens(page="list", representation="markdown", tokens=700, characters=2600, image=None),
]


def _committed_report() -> SelftestReport:
    doc = json.loads(COMMITTED.read_text(encoding="utf-8"))
    return SelftestReport.model_validate({k: v for k, v in doc.items() if k not in ("summary", "failures")})


def test_the_written_selftest_file_is_the_committed_one_and_the_tokens_table_adds_up(tmp_path: Path) -> None:
    out = tmp_path / "study-offline"
    write_offline_results(out, _committed_report(), COUNTS)
    written = json.loads((out / "selftest.json").read_text())
    report = _committed_report()
    assert (
        SelftestReport.model_validate({k: v for k, v in written.items() if k not in ("summary", "failures")}) == report
    )
    assert written["failures"] == 0  # every committed check scored as expected
    assert [s["representation"] for s in written["summary"]] == list(
        dict.fromkeys(c.representation for c in report.checks)
    )
    assert sorted(p.name for p in out.iterdir()) == ["coverage.md", "selftest.json", "tokens.md"]
    lines = tokens_md(COUNTS).splitlines()
    assert "| home | 1,200 | 300 |" in lines
    assert "| total | 3,700 | 1,000 |" in lines


def test_the_viewer_shows_the_study_the_demo_writes_beside_its_run(tmp_path: Path) -> None:
    results = tmp_path / "demo"
    write_offline_results(results / "study-offline", _committed_report(), COUNTS)
    site = assemble(ViewInputs(results))
    assert "offline/study-offline/index.html" in site.paths()
    front = site.get("index.html")
    assert front is not None
    checks = len(_committed_report().checks)
    assert f"all {checks} checks as expected" in " ".join(
        unescape(re.sub(r"<[^>]+>", " ", front.body().decode())).split()
    )
