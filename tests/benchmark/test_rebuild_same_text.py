"""Rebuilding an application and capturing it again gives pages with the same text as the committed snapshot.

Two applications fast enough to build in the suite (the dashboard and the map, both from npm) are installed,
filled and started afresh, then captured with four of their own plan's pages (plain pages and pages whose
plan clicks, hovers, drags, fills or selects); every page is paired with the same plan page of
``benchmark/snapshot`` and their visible texts must be the same. ``scripts/bench_rebuild.py`` does it for every
page of every application.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from capreplay.archive.snapshot.manifest import load_manifest
from capreplay.benchmark.freeze import freeze_application
from capreplay.benchmark.rebuild import pair_pages
from capreplay.benchmark.roster import application

pytestmark = pytest.mark.browser

BENCHMARK = Path(__file__).resolve().parents[2] / "benchmark"
SAMPLE = {
    "dashboard": [0, 1, 2, 18, 34],  # home, charts (the release timeline) and table; a chart hovered, a length chosen
    "maps": [2, 27, 35, 41],  # the map zoomed and dragged, searched; a sorted list; a country by its hash
}
"""Which of each plan's pages are captured again (indexes into ``benchmark/plans/NAME.json``)."""


def _texts(folder: Path, pages: list) -> dict[str, str]:  # type: ignore[type-arg]
    return {p.text: (folder / p.text).read_text(encoding="utf-8") for p in pages if p.text}


@pytest.mark.parametrize("name", sorted(SAMPLE))
def test_a_rebuilt_application_says_what_the_committed_snapshot_says(name: str, tmp_path: Path) -> None:
    plan = json.loads((BENCHMARK / "plans" / f"{name}.json").read_text())
    sample = [plan["pages"][i] for i in SAMPLE[name]]
    (tmp_path / "plans").mkdir()
    (tmp_path / "plans" / f"{name}.json").write_text(json.dumps({"pages": sample}))

    part = freeze_application(name, tmp_path, tmp_path / "part")

    assert part.failed == []
    committed = BENCHMARK / "snapshot"
    host = application(name).host
    old = [p for p in load_manifest(committed).pages if p.url.split("/")[2] == host]
    pairs, _ = pair_pages(part.manifest.pages, old, _texts(part.folder, part.manifest.pages),
                              _texts(committed, old))  # fmt: skip
    assert len(pairs) == len(sample)  # every page captured again is the same plan page as one committed
    assert [(p.url, p.first_difference) for p in pairs if not p.same] == []
