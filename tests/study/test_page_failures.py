"""A page that cannot be studied costs that page alone: one line naming it, the other pages go on, exit 1,
and nothing half-written is left behind. Run as a user runs it: the ``capreplay`` command, a tasks file
of three pages of which one is not in the snapshot."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.support.cli import run
from tests.support.paths import ROOT

pytestmark = pytest.mark.browser

BUNDLED = ROOT / "src" / "capreplay" / "testing" / "fixtures" / "study" / "tasks.json"
MISSING = {"id": "gone", "kind": "article", "url": "https://not-in-the-snapshot.test/"}


@pytest.fixture(scope="module")
def tasks_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    bundled = json.loads(BUNDLED.read_text())
    keep = {"login", "article"}
    doc = {"pages": [p for p in bundled["pages"] if p["id"] in keep] + [MISSING],
           "tasks": [t for t in bundled["tasks"] if t["page"] in keep]}  # fmt: skip
    path = tmp_path_factory.mktemp("tasks") / "tasks.json"
    path.write_text(json.dumps(doc))
    return path


def _capreplay(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return run(list(args), cwd=cwd, timeout=600)


def _one_failure_line(stderr: str) -> str:
    assert "Traceback" not in stderr, stderr
    lines = [line for line in stderr.splitlines() if line.startswith("capreplay study:")]
    assert len(lines) == 1, stderr
    return lines[0]


def test_selftest_reports_the_page_that_failed_and_checks_the_others(tasks_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "views"
    done = _capreplay("study", "selftest", "--tasks", str(tasks_file), "--snapshot", str(ROOT / "snapshots/study"),
                      "--json", "-o", str(out), cwd=tmp_path)  # fmt: skip
    assert done.returncode == 1, done.stderr
    line = _one_failure_line(done.stderr)
    assert line.startswith("capreplay study: page gone (https://not-in-the-snapshot.test/): ")
    # Stagehand's browser loads the page at the same time and fails too; the study browser's error is the one said.
    assert "the page does not load offline: " in line and "ERR_CONNECTION_REFUSED" in line
    report = json.loads(done.stdout)
    assert {c["page"] for c in report["checks"]} == {"login", "article"}
    assert report["failures"] == 0  # the two pages that loaded pass
    assert [f["page"] for f in report["page_failures"]] == ["gone"]
    # The views of the two pages are written from the same loads, as `study views` writes them.
    assert sorted(p.name for p in out.iterdir()) == ["article", "login", "tokens.json"]
    assert [f["page"] for f in json.loads((out / "tokens.json").read_text())["failed_pages"]] == ["gone"]


def test_views_writes_the_pages_that_loaded_and_nothing_for_the_one_that_failed(tasks_file: Path,
                                                                                tmp_path: Path) -> None:
    out = tmp_path / "views"
    done = _capreplay("study", "views", "--tasks", str(tasks_file), "--snapshot", str(ROOT / "snapshots/study"),
                      "-o", str(out), cwd=tmp_path)  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert "page gone" in _one_failure_line(done.stderr)
    # The token table: pages down in the tasks file's order, the study's representations across.
    table = done.stdout.splitlines()
    assert table[0].split() == ["page", "raw_html", "markdown", "accessibility_tree", "screenshot", "indexed_dom",
                                "aria_ai", "stagehand_snapshot"]  # fmt: skip
    assert [line.split()[0] for line in table[1:]] == ["article", "login", "total", "wrote"]
    assert sorted(p.name for p in out.iterdir()) == ["article", "login", "tokens.json"]
    tokens = json.loads((out / "tokens.json").read_text())
    assert {row["page"] for row in tokens["rows"]} == {"article", "login"}
    assert [f["page"] for f in tokens["failed_pages"]] == ["gone"]


def test_views_that_read_no_page_leave_no_folder(tmp_path: Path) -> None:
    only_missing = tmp_path / "tasks.json"
    only_missing.write_text(json.dumps({"pages": [MISSING], "tasks": [
        {"id": "gone.read", "page": "gone", "kind": "READ", "question": "?", "answer": "x"}]}))
    out = tmp_path / "views"
    done = _capreplay("study", "views", "--tasks", str(only_missing), "--snapshot", str(ROOT / "snapshots/study"),
                      "-o", str(out), cwd=tmp_path)  # fmt: skip
    assert done.returncode == 1, done.stderr
    _one_failure_line(done.stderr)
    assert not out.exists()
