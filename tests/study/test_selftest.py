"""``capreplay study selftest`` and ``capreplay study views`` on the committed study snapshot: real replay
server, Chromium and browser-use adapter, through the command line's ``main()`` in this process.

The self-test and the views of every page come from one command, ``study selftest --json -o DIR``, which
checks and writes from the same page loads (``study views`` alone is run on pages in test_page_failures.py,
through the same pass)."""

from __future__ import annotations

import contextlib
import io
import json
import re
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from capreplay.cli import main
from tests.support.paths import ROOT

pytestmark = pytest.mark.browser  # study selftest and views load the pages in Chromium

SNAPSHOT = ROOT / "snapshots" / "study"
BUNDLED_TASKS = ROOT / "src" / "capreplay" / "testing" / "fixtures" / "study" / "tasks.json"

# Representable ACT targets per representation on the bundled pages (30 targets): 9 sit in iframes or
# closed shadow roots, 6 more are icon buttons named only by aria-label, and 10 lie below the fold. The
# AI-mode snapshot takes iframes in, so only the 3 targets in closed shadow roots have no ref; Stagehand's
# snapshot pierces closed shadow roots too.
REPRESENTABLE = {"raw_html": 21, "markdown": 15, "accessibility_tree": 21, "screenshot": 20, "indexed_dom": 30,
                 "aria_ai": 27, "stagehand_snapshot": 30}


PAGES = ["article", "docs", "listing", "product", "login", "form", "dashboard", "search", "table", "embed"]


@pytest.fixture(scope="module")
def selftest_and_views(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], Path]:
    """The JSON report of ``study selftest --json -o DIR`` on the committed snapshot, and DIR."""
    out = tmp_path_factory.mktemp("selftest") / "views"
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        status = main(["study", "selftest", "--snapshot", str(SNAPSHOT), "--json", "-o", str(out)])
    assert status == 0
    return json.loads(printed.getvalue()), out


def test_selftest_passes_every_pair(selftest_and_views: tuple[dict[str, Any], Path]) -> None:
    report, _ = selftest_and_views
    assert report["failures"] == 0 and report["page_failures"] == []
    assert list(dict.fromkeys(c["page"] for c in report["checks"])) == PAGES
    summary = {row["representation"]: row for row in report["summary"]}
    assert list(summary) == list(REPRESENTABLE)
    for name, row in summary.items():
        assert (row["act_pairs"], row["act_failed"], row["read_pairs"], row["read_failed"]) == (30, 0, 50, 0), name
        assert row["act_representable"] == REPRESENTABLE[name], name
    checks = report["checks"]
    # Every ACT pair was also scored with another target's perfect answer, and every READ pair with a wrong one.
    assert sum(c["check"] == "other_target" for c in checks) == 30 * len(REPRESENTABLE)
    assert sum(c["check"] == "wrong_answer" for c in checks) == 50 * len(REPRESENTABLE)
    assert all(not c["verdict"]["correct"] for c in checks if c["check"] in ("other_target", "wrong_answer"))
    reasons = {c["verdict"]["reason"] for c in checks if c["check"] == "other_target"}
    assert "wrong_element" in reasons
    perfect = [c for c in checks if c["check"] == "perfect"]
    assert all(c["verdict"]["correct"] == c["verdict"]["representable"] for c in perfect)
    assert {c["verdict"]["reason"] for c in perfect if not c["verdict"]["correct"]} == {"not_representable"}


def test_views_writes_every_representation_and_counts_tokens(selftest_and_views: tuple[dict[str, Any], Path]) -> None:
    _, out = selftest_and_views
    assert sorted(p.name for p in out.iterdir()) == sorted([*PAGES, "tokens.json"])  # no staging folder left
    written = json.loads((out / "tokens.json").read_text())
    rows = written["rows"]
    assert len(rows) == 70 and written["failed_pages"] == []
    # Pages in the tasks file's order, each with the representations in the study's order.
    assert list(dict.fromkeys(r["page"] for r in rows)) == PAGES
    assert [r["representation"] for r in rows[:7]] == list(REPRESENTABLE)
    tokens = {(r["page"], r["representation"]): r["tokens"] for r in rows}
    assert {tokens[page, "screenshot"] for page, _ in tokens} == {1334}
    # The 500-row table is the largest page in every text representation.
    for name in ("raw_html", "markdown", "accessibility_tree", "indexed_dom", "aria_ai", "stagehand_snapshot"):
        assert max(tokens, key=lambda key: tokens[key] if key[1] == name else -1) == ("table", name)
    embed = out / "embed"
    assert {p.name for p in embed.iterdir()} == {
        "raw_html.txt", "markdown.txt", "accessibility_tree.txt", "screenshot.png", "indexed_dom.txt", "aria_ai.txt",
        "stagehand_snapshot.txt",
        "indexed_dom.agent_default.audit_only.txt", "page.json"}
    assert Image.open(embed / "screenshot.png").size == (1280, 800)
    assert "Subscribe to alerts" in (embed / "indexed_dom.txt").read_text()
    # Stagehand's tree reaches into the cross-site frame and the closed shadow root, each element with an id.
    assert re.search(r"\[\d+-\d+\] button: Subscribe to alerts", (embed / "stagehand_snapshot.txt").read_text())
    assert re.search(r"\[\d+-\d+\] button: Apply code", (embed / "stagehand_snapshot.txt").read_text())
    page = json.loads((embed / "page.json").read_text())
    assert page["url"] == "https://www.study.test/embed" and page["browser_use_changed_html"] is False
    assert json.loads((out / "table" / "page.json").read_text())["agent_would_truncate"] is True


def test_selftest_with_an_output_folder_prints_both_tables(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = json.loads(BUNDLED_TASKS.read_text())
    one = {"pages": [p for p in doc["pages"] if p["id"] == "login"], "tasks": [t for t in doc["tasks"]
                                                                               if t["page"] == "login"]}  # fmt: skip
    tasks = tmp_path / "tasks.json"
    tasks.write_text(json.dumps(one))
    out = tmp_path / "views"
    assert main(["study", "selftest", "--snapshot", str(SNAPSHOT), "--tasks", str(tasks),
                 "--representations", "raw_html,screenshot", "-o", str(out)]) == 0  # fmt: skip
    printed = capsys.readouterr().out.splitlines()
    pairs = 2 * len(one["tasks"])
    at = printed.index(f"{pairs} of {pairs} task x representation pairs pass")
    assert [line.split()[0] for line in printed[:at]] == ["representation", "raw_html", "screenshot"]
    assert [line.split()[0] for line in printed[at + 1 :]] == ["page", "login", "total", "wrote"]
    assert printed[at + 1].split() == ["page", "raw_html", "screenshot"]
    assert sorted(p.name for p in (out / "login").iterdir()) == [
        "indexed_dom.agent_default.audit_only.txt", "page.json", "raw_html.txt", "screenshot.png"]  # fmt: skip


def test_bad_input_exits_2_with_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "tasks.json"
    bad.write_text('{"pages": []}')
    assert main(["study", "selftest", "--tasks", str(bad)]) == 2
    assert capsys.readouterr().err == (
        f"capreplay study: {bad}: invalid task file: pages: List should have at least 1 item after validation, "
        "not 0 (and 1 more problem)\n")
    assert main(["study", "views", "--snapshot", str(tmp_path / "none"), "-o", str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err == f"capreplay study: {tmp_path / 'none'}: not a snapshot: no such folder\n"
    assert not (tmp_path / "out").exists()
    with pytest.raises(SystemExit) as caught:
        main(["study", "nope"])
    assert caught.value.code == 2


def test_a_task_file_without_measured_records_exits_2_naming_the_task(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    doc = json.loads(BUNDLED_TASKS.read_text())
    for task in doc["tasks"]:
        task.pop("measured", None)
    bare = tmp_path / "tasks.json"
    bare.write_text(json.dumps(doc))
    assert main(["study", "selftest", "--snapshot", str(SNAPSHOT), "--tasks", str(bare)]) == 2
    assert capsys.readouterr().err == (
        f"capreplay study: {bare}: task article.act.1 has no measured record (30 ACT tasks have none): run "
        "`capreplay study measure` on it first\n")
