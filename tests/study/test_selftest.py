"""``capreplay study selftest`` and ``capreplay study views`` on the committed study snapshot: real replay
server, Chromium and browser-use adapter, through the command line's ``main()`` in this process."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from PIL import Image

from capreplay.cli import main
from tests.support.paths import ROOT

pytestmark = pytest.mark.browser  # study selftest and views load the pages in Chromium

SNAPSHOT = ROOT / "snapshots" / "study"

# Representable ACT targets per representation on the bundled pages (30 targets): 9 sit in iframes or
# closed shadow roots, 6 more are icon buttons named only by aria-label, and 10 lie below the fold. The
# AI-mode snapshot takes iframes in, so only the 3 targets in closed shadow roots have no ref; Stagehand's
# snapshot pierces closed shadow roots too.
REPRESENTABLE = {"raw_html": 21, "markdown": 15, "accessibility_tree": 21, "screenshot": 20, "indexed_dom": 30,
                 "aria_ai": 27, "stagehand_snapshot": 30}


def test_selftest_passes_every_pair(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["study", "selftest", "--snapshot", str(SNAPSHOT), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["failures"] == 0
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


def test_views_writes_every_representation_and_counts_tokens(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "views"
    assert main(["study", "views", "--snapshot", str(SNAPSHOT), "-o", str(out)]) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[0].split() == ["page", "raw_html", "markdown", "accessibility_tree", "screenshot", "indexed_dom",
                                "aria_ai", "stagehand_snapshot"]
    assert [line.split()[0] for line in table[1:12]] == [
        "article", "docs", "listing", "product", "login", "form", "dashboard", "search", "table", "embed", "total"]
    rows = json.loads((out / "tokens.json").read_text())["rows"]
    assert len(rows) == 70
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
    doc = json.loads((ROOT / "src" / "capreplay" / "fixtures" / "study" / "tasks.json").read_text())
    for task in doc["tasks"]:
        task.pop("measured", None)
    bare = tmp_path / "tasks.json"
    bare.write_text(json.dumps(doc))
    assert main(["study", "selftest", "--snapshot", str(SNAPSHOT), "--tasks", str(bare)]) == 2
    assert capsys.readouterr().err == (
        f"capreplay study: {bare}: task article.act.1 has no measured record (30 ACT tasks have none): run "
        "`capreplay study measure` on it first\n")
