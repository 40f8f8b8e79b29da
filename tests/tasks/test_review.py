"""Review sheets: written from a batch folder of the world's tasks, filled by text edits, accepted, compared.

The batch folders are built here by hand from the committed world tasks (``tasks.json``, ``snapshots/world``),
with a gold run's episodes and step screenshots placed in ``proof-run/``; every expectation below is written
from that hand-made content, not from what the code computed.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest

from capreplay.errors import InputError
from capreplay.models.task import parse_tasks_file
from capreplay.tasks.review import accept_sheet, sheet_agreement, write_sheet
from tests.support.paths import ROOT

WORLD = ROOT / "snapshots" / "world"
WORLD_ID = "760e9b22324f9de7046603ea9921111405553abf184e882ee6b6939306ee4475"
"""The committed world snapshot's id, as its manifest.json states it."""
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 24
CHECKS = ("gold_run", "on_snapshot", "values_on_pages", "evidence_on_pages", "gold_scores_1", "mutations")
TWO = ["budget-tent", "cold-bag-delivery"]

EXPECTED = {"budget-tent": {"tent_name": "Fellside 2 Lite", "tent_price": "215"}}
ANSWERS = {
    "budget-tent": {
        "tent_name": "Fellside 2 Lite",
        "tent_price": "215",
        "listing_url": "https://www.fellgear.test/c/tents?min=100&max=250",
        "tent_score": "8.4",
        "compare_url": "https://www.trailverdict.test/compare/tents?sort=score&dir=desc",
    }
}
FELLGEAR = "https://www.fellgear.test/c/tents"
COMPARE = "https://www.trailverdict.test/compare/tents"
STEP_URLS = {
    "budget-tent": [FELLGEAR, FELLGEAR, FELLGEAR, f"{FELLGEAR}?min=100&max=250", f"{FELLGEAR}?min=100&max=250",
                    f"{FELLGEAR}?min=100&max=250", COMPARE, f"{COMPARE}?sort=score&dir=asc",
                    f"{COMPARE}?sort=score&dir=desc", f"{COMPARE}?sort=score&dir=desc",
                    f"{COMPARE}?sort=score&dir=desc", f"{COMPARE}?sort=score&dir=desc"],
}  # fmt: skip
"""Where the tab was after each gold step; other tasks stay on the URL of their last goto."""


# ---------------------------------------------------------------------------------------------- a batch by hand


def _world() -> dict[str, Any]:
    workflows: dict[str, Any] = json.loads((ROOT / "tasks.json").read_text(encoding="utf-8"))["workflows"]
    return workflows


def _lines(path: Path, items: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(item) + "\n" for item in items), encoding="utf-8")


def _episode(task: dict[str, Any], run: Path) -> dict[str, Any]:
    urls = STEP_URLS.get(task["id"])
    url = task["start_url"]
    steps = []
    for n, step in enumerate(task["gold_path"], start=1):
        url = step["url"] if step["type"] == "goto" else url
        shot = f"gold/0/{task['id']}/step-{n:03d}.png"
        (run / shot).parent.mkdir(parents=True, exist_ok=True)
        (run / shot).write_bytes(PNG)
        args = {k: v for k, v in step.items() if k != "type"}
        steps.append({"n": n, "action": step["type"], "args": args, "url": urls[n - 1] if urls else url,
                      "screenshot": shot, "at_s": 0.5 * n})  # fmt: skip
    return {"key": {"repeat": 0, "task": task["id"], "agent": "gold"}, "started_at": "2026-12-01T04:00:00Z",
            "duration_s": 6.0, "status": "answered", "answer": json.dumps(ANSWERS.get(task["id"], {})),
            "steps": steps, "requests": [], "start_url": task["start_url"], "final_url": url}  # fmt: skip


def make_batch(root: Path, task_ids: list[str], name: str = "wf-review", edit: dict[str, str] | None = None) -> Path:
    """A batch folder ``root/name`` whose proven tasks are the world's ``task_ids`` (descriptions as in ``edit``)."""
    folder = root / name
    run = folder / "proof-run"
    run.mkdir(parents=True)
    world = _world()
    by_id = {task["id"]: task for task in world["tasks"]}
    tasks = []
    for task_id in task_ids:
        task = dict(by_id[task_id])
        if task_id in EXPECTED:
            task["expected"] = EXPECTED[task_id]
        if edit and task_id in edit:
            task["description"] = edit[task_id]
        tasks.append(task)
    header = {key: value for key, value in world.items() if key != "tasks"} | {"snapshot": "snapshot", "repeats": 1}
    doc = {"schema_version": 1, "description": f"Tasks generated and proven on the snapshot, batch {name}.",
           "snapshots": {"snapshot": os.path.relpath(WORLD, folder)},
           "workflows": {**header, "tasks": tasks}}  # fmt: skip
    (folder / "tasks.json").write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    info = {"schema_version": 1, "kind": "batch", "batch": name, "generator": "workflows", "snapshot": str(WORLD),
            "made": {"snapshot_id": WORLD_ID, "model": {"model": "claude-test"}, "prompts": {}},
            "candidates": len(task_ids) + 1, "proven": task_ids, "rejected": {"proof": 1}, "proof_s": 3.5}  # fmt: skip
    (folder / "batch.json").write_text(json.dumps(info, indent=1), encoding="utf-8")
    proofs = [{"task": t["id"], "passed": True, "checks": [{"name": c, "passed": True, "detail": f"{c} held"}
               for c in CHECKS], "reached": [t["start_url"]], "answer": ANSWERS.get(t["id"], {}), "score": 1.0}
              for t in tasks]  # fmt: skip
    lost = "tent_price 199 is on no page the path reached"
    proofs.append({"task": "lost-tent", "passed": False, "reached": [], "answer": None, "score": None,
                   "checks": [{"name": "values_on_pages", "passed": False, "detail": lost}]})  # fmt: skip
    _lines(folder / "proofs.jsonl", proofs)
    rejection = {"candidate": "lost-tent", "stage": "proof", "reason": f"values_on_pages: {lost}"}
    _lines(folder / "rejected.jsonl", [rejection])
    _lines(run / "episodes.jsonl", [_episode(task, run) for task in tasks])
    return folder


def task_sha(folder: Path, task_id: str) -> str:
    """sha256 of the task's object in the batch's tasks.json, as canonical JSON (sorted keys, no spaces)."""
    doc = json.loads((folder / "tasks.json").read_text(encoding="utf-8"))
    task = next(t for t in doc["workflows"]["tasks"] if t["id"] == task_id)
    text = json.dumps(task, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# ---------------------------------------------------------------------------------------------- filling by hand


def _section(lines: list[str], task_id: str) -> range:
    start = next(i for i, line in enumerate(lines) if re.fullmatch(rf"## Task \d+: {re.escape(task_id)}", line))
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    return range(start, end)


def decide(text: str, task_id: str, box: str | None = None, reason: str | None = None) -> str:
    """``text`` with ``box`` (accept/reject) ticked in ``task_id``'s section and ``reason`` written."""
    lines = text.split("\n")
    for i in _section(lines, task_id):
        if box and lines[i] == f"- [ ] {box}":
            lines[i] = f"- [x] {box}"
        if reason is not None and lines[i] == "Reason:":
            lines[i] = f"Reason: {reason}"
    return "\n".join(lines)


def sign(text: str, name: str) -> str:
    assert "\nReviewer: \n" in text
    return text.replace("\nReviewer: \n", f"\nReviewer: {name}\n", 1)


def line_no(text: str, line: str, task_id: str | None = None) -> int:
    """The 1-based number of the first line equal to ``line`` (within ``task_id``'s section if given)."""
    lines = text.split("\n")
    span = _section(lines, task_id) if task_id else range(len(lines))
    return next(i for i in span if lines[i] == line) + 1


def filled(sheet: Path, decisions: dict[str, tuple[str | None, str | None]], reviewer: str = "Ada Lindqvist") -> Path:
    text = sign(sheet.read_text(encoding="utf-8"), reviewer)
    for task_id, (box, reason) in decisions.items():
        text = decide(text, task_id, box, reason)
    sheet.write_text(text, encoding="utf-8")
    return sheet


# ---------------------------------------------------------------------------------------------- the sheet


def test_sheet_shows_each_task_its_gold_path_pages_and_a_decision_block(tmp_path: Path) -> None:
    batch = make_batch(tmp_path, TWO)
    before = sorted(p.relative_to(batch) for p in batch.rglob("*"))
    assert write_sheet(batch) == 2
    sheet = batch / "review.md"
    text = sheet.read_text(encoding="utf-8")
    lines = text.split("\n")

    assert lines[0] == "<!-- capreplay review sheet 1 -->"
    assert lines[1] == "# Review of batch `wf-review`"
    tasks_sha = hashlib.sha256((batch / "tasks.json").read_bytes()).hexdigest()
    for line in ["Reviewer: ", "- Batch: wf-review", "- Batch folder: .", f"- Snapshot id: {WORLD_ID}",
                 f"- Tasks file sha256: {tasks_sha}", "- Proven: 2 of 3 candidates (rejected: proof 1)"]:  # fmt: skip
        assert line in lines, line
    headings = [line for line in lines if line.startswith("## ")]
    assert headings == ["## Task 1: budget-tent", "## Task 2: cold-bag-delivery", "## Rejected before review"]

    tent = [lines[i] for i in _section(lines, "budget-tent")]
    for line in [
        f"- Task sha256: {task_sha(batch, 'budget-tent')}",
        "- Flow: sequential",
        "- Sites: www.fellgear.test → www.trailverdict.test",
        "- Start: <https://www.fellgear.test/>",
        "- `slider` action AT21 *Slider: Range Selection* on www.fellgear.test: Drag the two price handles to £100 "
        "and £250 and apply the range.",
        "- `sort-state` perception PT22 *Table: Sort State Awareness* on www.trailverdict.test: Tell from the sorted "
        "table which budget tent scores best.",
        "| `tent_name` | text | user_value | `Fellside 2 Lite` | `Fellside 2 Lite` | The best-scoring tent within the "
        "budget. |",
        "| `tent_score` | number | user_value | — | `8.4` | Its TrailVerdict score out of 10. |",
        "1. goto `https://www.fellgear.test/c/tents` ([after](proof-run/gold/0/budget-tent/step-001.png))",
        '2. drag `.range-handle[data-handle="min"]` (dx `100`, dy `0`, steps `10`) '
        "([after](proof-run/gold/0/budget-tent/step-002.png))",
        "5. read `listing_url`: the page's URL ([after](proof-run/gold/0/budget-tent/step-005.png))",
        '6. read `tent_price`: attribute `data-value` of `.product-card[data-slug="fellside-2-lite"] .price` '
        "([after](proof-run/gold/0/budget-tent/step-006.png))",
        "Started at <https://www.fellgear.test/>.",
        "1. <https://www.fellgear.test/c/tents> (after step 3)",
        "   ![budget-tent, step 3](proof-run/gold/0/budget-tent/step-003.png)",
        "2. <https://www.fellgear.test/c/tents?min=100&max=250> (after step 6)",
        "4. <https://www.trailverdict.test/compare/tents?sort=score&dir=asc> (after step 8)",
        "5. <https://www.trailverdict.test/compare/tents?sort=score&dir=desc> (after step 12)",
        "   ![budget-tent, step 12](proof-run/gold/0/budget-tent/step-012.png)",
        "Passed: yes; the judge's score of the gold answer: 1.00.",
        "- mutations: passed: mutations held",
    ]:
        assert line in tent, line
    assert sum(line.startswith("> I have between £100 and £250") for line in tent) == 1
    # the decision block a person edits, once per task
    block = ["### Decision", "", "- [ ] accept", "- [ ] reject", "", "Reason:", "", "---"]
    for task_id in TWO:
        section = [lines[i] for i in _section(lines, task_id)]
        at = section.index("### Decision")
        assert section[at : at + len(block)] == block
    assert "- `lost-tent` (proof): values_on_pages: tent_price 199 is on no page the path reached" in lines

    # every link resolves to a screenshot placed in proof-run: 12 + 9 gold steps, 5 + 2 pages; nothing copied
    targets = re.findall(r"\]\(([^)]+)\)", text)
    assert len(targets) == 12 + 9 + 5 + 2
    assert all((sheet.parent / unquote(target)).is_file() for target in targets)
    assert all(unquote(target).startswith("proof-run/gold/0/") for target in targets)
    assert sorted(p.relative_to(batch) for p in batch.rglob("*")) == sorted([*before, Path("review.md")])


def test_a_sheet_elsewhere_links_back_into_the_batch_and_says_what_has_no_screenshot(tmp_path: Path) -> None:
    batch = make_batch(tmp_path / "batches", ["cold-bag-delivery"])
    (batch / "proof-run/gold/0/cold-bag-delivery/step-002.png").unlink()
    (tmp_path / "sheets").mkdir()
    sheet = tmp_path / "sheets" / "ada.md"
    write_sheet(batch, sheet)
    lines = sheet.read_text(encoding="utf-8").split("\n")
    assert "- Batch folder: ../batches/wf-review" in lines
    assert "1. goto `https://www.trailverdict.test/reviews` " \
           "([after](../batches/wf-review/proof-run/gold/0/cold-bag-delivery/step-001.png))" in lines  # fmt: skip
    assert '2. click `.pagination a.page-num[href="/reviews?page=3"]`' in lines
    # the run stayed on /reviews for steps 1-4 (this batch's URLs follow the gotos): its last screenshot is 4
    assert "1. <https://www.trailverdict.test/reviews> (after step 4)" in lines
    shot = "../batches/wf-review/proof-run/gold/0/cold-bag-delivery/step-004.png"
    assert f"   ![cold-bag-delivery, step 4]({shot})" in lines
    targets = re.findall(r"\]\(([^)]+)\)", "\n".join(lines))
    assert len(targets) == 8 + 2
    assert all((sheet.parent / unquote(target)).is_file() for target in targets)

    filled(sheet, {"cold-bag-delivery": ("accept", None)})
    summary = accept_sheet(sheet, tmp_path / "bench.json")
    assert summary.accepted == ["cold-bag-delivery"]


def test_a_filled_sheet_is_never_written_over(tmp_path: Path) -> None:
    batch = make_batch(tmp_path, TWO)
    write_sheet(batch)
    write_sheet(batch)  # untouched: replaced
    sheet = filled(batch / "review.md", {"budget-tent": ("accept", None)})
    text = sheet.read_text(encoding="utf-8")
    with pytest.raises(InputError) as caught:
        write_sheet(batch)
    assert caught.value.line() == f"{sheet}: holds a review already: give another -o, or move it away"
    assert sheet.read_text(encoding="utf-8") == text


# ---------------------------------------------------------------------------------------------- accept


def _tasks_in(path: Path) -> list[str]:
    workflows = parse_tasks_file(path.read_bytes(), path).workflows
    assert workflows is not None
    return [task.id for task in workflows.tasks]


def _log(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_accept_merges_the_accepted_task_and_logs_the_rejected_one(tmp_path: Path) -> None:
    batch = make_batch(tmp_path, TWO)
    write_sheet(batch)
    reason = "The delivery tab is on a page the review list links to anyway; too easy."
    sheet = filled(batch / "review.md", {"budget-tent": ("accept", None), "cold-bag-delivery": ("reject", reason)})
    into = tmp_path / "bench.json"

    summary = accept_sheet(sheet, into)

    assert (summary.accepted, summary.added, summary.rejected, summary.undecided) == (
        ["budget-tent"], ["budget-tent"], ["cold-bag-delivery"], [])  # fmt: skip
    assert summary.created and summary.reviewer == "Ada Lindqvist"
    merged = parse_tasks_file(into.read_bytes(), into)
    assert merged.workflows is not None
    assert [t.id for t in merged.workflows.tasks] == ["budget-tent"]
    assert merged.workflows.tasks[0].expected == {"tent_name": "Fellside 2 Lite", "tent_price": "215"}
    # the snapshot is named relative to the new file, and it is the world
    assert not Path(merged.snapshots["snapshot"]).is_absolute()
    assert (into.parent / merged.snapshots["snapshot"]).resolve() == WORLD.resolve()
    assert merged.workflows.judge.model.model == "claude-sonnet-5"
    log = tmp_path / "bench.rejections.jsonl"
    assert _log(log) == [{"task": "cold-bag-delivery", "task_sha256": task_sha(batch, "cold-bag-delivery"),
                          "reviewer": "Ada Lindqvist", "reason": reason, "sheet": "wf-review/review.md",
                          "batch": "wf-review", "snapshot_id": WORLD_ID}]  # fmt: skip

    # the same sheet again changes nothing
    before = (into.read_bytes(), log.read_bytes())
    again = accept_sheet(sheet, into)
    assert again.added == [] and again.accepted == ["budget-tent"] and not again.created
    assert (into.read_bytes(), log.read_bytes()) == before


def test_undecided_tasks_are_neither_merged_nor_logged(tmp_path: Path) -> None:
    batch = make_batch(tmp_path, TWO)
    write_sheet(batch)
    sheet = filled(batch / "review.md", {"cold-bag-delivery": ("accept", "Clear, and both sites are needed.")})
    summary = accept_sheet(sheet, tmp_path / "bench.json")
    assert (summary.accepted, summary.rejected, summary.undecided) == (["cold-bag-delivery"], [], ["budget-tent"])
    assert _tasks_in(tmp_path / "bench.json") == ["cold-bag-delivery"]
    assert not (tmp_path / "bench.rejections.jsonl").exists()

    # nothing decided at all: nothing is written, and no reviewer is needed
    other = make_batch(tmp_path, TWO, name="wf-other")
    write_sheet(other)
    empty = accept_sheet(other / "review.md", tmp_path / "fresh.json")
    assert empty.undecided == TWO and not empty.created
    assert not (tmp_path / "fresh.json").exists() and not (tmp_path / "fresh.rejections.jsonl").exists()


def test_accept_into_an_existing_file_adds_new_tasks_and_refuses_conflicts(tmp_path: Path) -> None:
    into = tmp_path / "bench.json"
    first = make_batch(tmp_path, TWO, name="wf-one")
    write_sheet(first)
    accept_sheet(filled(first / "review.md", {"budget-tent": ("accept", None)}), into)

    second = make_batch(tmp_path, ["budget-tent", "trail-hut-stay"], name="wf-two")
    write_sheet(second)
    summary = accept_sheet(filled(second / "review.md", {"budget-tent": ("accept", None),
                                                          "trail-hut-stay": ("accept", None)}), into)  # fmt: skip
    assert summary.added == ["trail-hut-stay"] and not summary.created
    assert _tasks_in(into) == ["budget-tent", "trail-hut-stay"]

    # a batch whose budget-tent is another task of the same id
    third = make_batch(tmp_path, ["budget-tent", "rain-tent"], name="wf-three", edit={"budget-tent": "I want a tent."})
    write_sheet(third)
    sheet = filled(third / "review.md", {"budget-tent": ("accept", None), "rain-tent": ("reject", "Not needed.")})
    before = into.read_bytes()
    with pytest.raises(InputError) as caught:
        accept_sheet(sheet, into)
    assert caught.value.line() == (f"{into}: already holds a task 'budget-tent' that differs from the one accepted "
                                   "from batch 'wf-three'; rename one of them")  # fmt: skip
    assert caught.value.exit_code == 2
    assert into.read_bytes() == before and not (tmp_path / "bench.rejections.jsonl").exists()


def test_accept_refuses_a_tasks_file_of_another_snapshot(tmp_path: Path) -> None:
    batch = make_batch(tmp_path, TWO)
    write_sheet(batch)
    sheet = filled(batch / "review.md", {"budget-tent": ("accept", None), "cold-bag-delivery": ("reject", "Dull.")})
    into = tmp_path / "study-tasks.json"
    world = _world()
    doc = {"schema_version": 1, "snapshots": {"study": str(ROOT / "snapshots" / "study")},
           "workflows": {**world, "snapshot": "study", "tasks": [world["tasks"][2]]}}  # fmt: skip
    into.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    before = into.read_bytes()
    with pytest.raises(InputError) as caught:
        accept_sheet(sheet, into)
    message = caught.value.line()
    assert message.startswith(f"{into}: its workflows run on snapshot 'study' (")
    assert message.endswith(f"), but batch 'wf-review' was proven on {WORLD_ID}")
    assert into.read_bytes() == before and not (tmp_path / "study-tasks.rejections.jsonl").exists()


# ---------------------------------------------------------------------------------------------- strict reading


def _both(text: str) -> tuple[str, int, str]:
    out = decide(decide(sign(text, "Ada"), "budget-tent", "accept"), "budget-tent", "reject", "Unclear.")
    return out, line_no(out, "- [x] reject", "budget-tent"), "task 'budget-tent' has both accept and reject ticked"


def _no_reason(text: str) -> tuple[str, int, str]:
    out = decide(sign(text, "Ada"), "cold-bag-delivery", "reject")
    return out, line_no(out, "Reason:", "cold-bag-delivery"), "task 'cold-bag-delivery' is rejected without a reason"


def _reason_unticked(text: str) -> tuple[str, int, str]:
    out = decide(sign(text, "Ada"), "cold-bag-delivery", None, "Hmm.")
    return out, line_no(out, "Reason: Hmm.", "cold-bag-delivery"), "has a reason but neither box ticked"


def _no_block(text: str) -> tuple[str, int, str]:
    lines = text.split("\n")
    del lines[line_no(text, "- [ ] accept", "cold-bag-delivery") - 1]
    out = "\n".join(lines)
    return out, line_no(out, "## Task 2: cold-bag-delivery"), "task 'cold-bag-delivery' has no complete decision " \
                                                               "block: it lacks its '- [ ] accept' box"  # fmt: skip


def _bad_tick(text: str) -> tuple[str, int, str]:
    out = sign(text, "Ada").replace("- [ ] accept", "- [y] accept", 1)
    return out, line_no(out, "- [y] accept"), "a decision box is '- [ ] accept' or '- [x] accept'"


def _unknown_task(text: str) -> tuple[str, int, str]:
    out = text.replace("## Task 2: cold-bag-delivery", "## Task 2: warm-bag-delivery")
    return out, line_no(out, "## Task 2: warm-bag-delivery"), "task 'warm-bag-delivery' is not a proven task of batch"


def _no_reviewer(text: str) -> tuple[str, int, str]:
    out = decide(text, "budget-tent", "accept")
    return out, line_no(out, "Reviewer: "), "tasks are decided, but no reviewer is named"


def _not_a_sheet(text: str) -> tuple[str, int, str]:
    return "# My notes\n" + text, 1, "not a review sheet"


def _section_twice(text: str) -> tuple[str, int, str]:
    lines = text.split("\n")
    span = _section(lines, "cold-bag-delivery")
    out = "\n".join([*lines[: span.stop], *lines[span.start : span.stop], *lines[span.stop :]])
    return out, span.stop + 1, "task 'cold-bag-delivery' has a second section (first on line"


def _section_gone(text: str) -> tuple[str, int, str]:
    lines = text.split("\n")
    span = _section(lines, "cold-bag-delivery")
    out = "\n".join([*lines[: span.start], *lines[span.stop :]])
    return out, len(out.split("\n")), "the sheet has no section for proven task 'cold-bag-delivery'"


def _hash_edited(text: str) -> tuple[str, int, str]:
    lines = text.split("\n")
    at = next(i for i in _section(lines, "budget-tent") if lines[i].startswith("- Task sha256: "))
    lines[at] = "- Task sha256: " + "0" * 64
    return "\n".join(lines), at + 1, "task 'budget-tent' has changed since this sheet was written"


MALFORMED: dict[str, Callable[[str], tuple[str, int, str]]] = {
    "both boxes ticked": _both,
    "reject without a reason": _no_reason,
    "a reason, no box": _reason_unticked,
    "decision block missing": _no_block,
    "a tick that is not x": _bad_tick,
    "unknown task id": _unknown_task,
    "decided, unsigned": _no_reviewer,
    "not a sheet": _not_a_sheet,
    "a section twice": _section_twice,
    "a section removed": _section_gone,
    "task hash edited": _hash_edited,
}


@pytest.mark.parametrize("case", MALFORMED, ids=list(MALFORMED))
def test_a_malformed_sheet_is_one_line_naming_the_file_and_line(tmp_path: Path, case: str) -> None:
    batch = make_batch(tmp_path, TWO)
    write_sheet(batch)
    sheet = batch / "review.md"
    text, number, message = MALFORMED[case](sheet.read_text(encoding="utf-8"))
    sheet.write_text(text, encoding="utf-8")
    into = tmp_path / "bench.json"
    with pytest.raises(InputError) as caught:
        accept_sheet(sheet, into)
    line = caught.value.line()
    assert line.startswith(f"{sheet}: line {number}: "), line
    assert message in line
    assert "\n" not in line and caught.value.exit_code == 2
    assert not into.exists() and not (tmp_path / "bench.rejections.jsonl").exists()


def test_a_sheet_of_tasks_that_changed_since_is_refused(tmp_path: Path) -> None:
    batch = make_batch(tmp_path, TWO)
    write_sheet(batch)
    sheet = filled(batch / "review.md", {"budget-tent": ("accept", None)})
    text = sheet.read_text(encoding="utf-8")
    tasks = batch / "tasks.json"
    original = tasks.read_bytes()

    doc = json.loads(original)
    doc["workflows"]["tasks"][1]["description"] = "I need a warm sleeping bag delivered fast."
    tasks.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        accept_sheet(sheet, tmp_path / "bench.json")
    lines = text.split("\n")
    sha_line = next(i + 1 for i in _section(lines, "cold-bag-delivery") if lines[i].startswith("- Task sha256: "))
    assert caught.value.line().startswith(f"{sheet}: line {sha_line}: task 'cold-bag-delivery' has changed since")

    # the tasks unchanged, the file around them not (another description): refused at the header's line
    doc = json.loads(original)
    doc["description"] = "Another description."
    tasks.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        accept_sheet(sheet, tmp_path / "bench.json")
    header = next(i + 1 for i, line in enumerate(lines) if line.startswith("- Tasks file sha256: "))
    assert caught.value.line().startswith(f"{sheet}: line {header}: the batch's tasks file has changed since")


# ---------------------------------------------------------------------------------------------- agreement

SIX = ["budget-tent", "cold-bag-delivery", "trail-hut-stay", "review-region-rain", "rain-tent", "dunlin-or-best"]


def _two_sheets(tmp_path: Path, batch: Path) -> tuple[Path, Path]:
    write_sheet(batch, tmp_path / "a.md")
    write_sheet(batch, tmp_path / "b.md")
    return tmp_path / "a.md", tmp_path / "b.md"


def test_agreement_of_two_reviewers_with_known_counts(tmp_path: Path) -> None:
    a, b = _two_sheets(tmp_path, make_batch(tmp_path, SIX))
    no = ("reject", "Not a real need.")
    filled(a, {"budget-tent": ("accept", None), "cold-bag-delivery": ("accept", None), "trail-hut-stay": no,
               "review-region-rain": ("accept", None), "rain-tent": ("accept", None)}, reviewer="Ada")  # fmt: skip
    filled(b, {"budget-tent": ("accept", None), "cold-bag-delivery": no, "trail-hut-stay": no,
               "review-region-rain": ("accept", None), "rain-tent": no, "dunlin-or-best": ("accept", None)},
           reviewer="Bo")  # fmt: skip

    result = sheet_agreement(a, b)

    # decided by both: 5 (dunlin-or-best only by Bo); both accept 2, only Ada 2, only Bo 0, both reject 1
    assert (result.n, result.both_accept, result.only_first_accepts, result.only_second_accepts,
            result.both_reject) == (5, 2, 2, 0, 1)  # fmt: skip
    assert result.agreed == 3 and result.agreement == pytest.approx(0.6)
    # p_o = 3/5; Ada accepted 4 of 5, Bo 2 of 5: p_e = 0.8*0.4 + 0.2*0.6 = 0.44; kappa = 0.16 / 0.56 = 2/7
    assert result.kappa == pytest.approx(2 / 7)
    assert result.disagreed == ["cold-bag-delivery", "rain-tent"]
    assert result.undecided == ["dunlin-or-best"]
    assert result.reviewers == ("Ada", "Bo") and result.tasks == 6
    table = result.table()
    assert "| Ada: accept | 2 | 2 |" in table and "| Ada: reject | 0 | 1 |" in table
    assert "| Cohen's kappa | 0.2857 |" in table


def test_agreement_when_both_accept_everything_is_undefined(tmp_path: Path) -> None:
    a, b = _two_sheets(tmp_path, make_batch(tmp_path, TWO))
    for sheet, name in ((a, "Ada"), (b, "Bo")):
        filled(sheet, {task: ("accept", None) for task in TWO}, reviewer=name)
    result = sheet_agreement(a, b)
    assert result.agreement == 1.0 and result.kappa is None
    assert result.kappa_note == "both reviewers accepted every task, so chance agreement is certain"


def test_agreement_refuses_sheets_of_another_batch_or_other_versions(tmp_path: Path) -> None:
    a = tmp_path / "a.md"
    write_sheet(make_batch(tmp_path, TWO), a)
    other = tmp_path / "other.md"
    write_sheet(make_batch(tmp_path, TWO, name="wf-other"), other)
    with pytest.raises(InputError) as caught:
        sheet_agreement(a, other)
    text = other.read_text(encoding="utf-8")
    assert caught.value.line() == (f"{other}: line {line_no(text, '- Batch: wf-other')}: Batch 'wf-other' is not the "
                                   "other sheet's 'wf-review': the sheets are not of the same batch")  # fmt: skip

    # the same batch name, another version of a task
    changed = make_batch(tmp_path / "v2", TWO, edit={"cold-bag-delivery": "Find me a warm bag."})
    later = tmp_path / "later.md"
    write_sheet(changed, later)
    with pytest.raises(InputError) as caught:
        sheet_agreement(a, later)
    lines = later.read_text(encoding="utf-8").split("\n")
    sha_line = next(i + 1 for i in _section(lines, "cold-bag-delivery") if lines[i].startswith("- Task sha256: "))
    assert caught.value.line() == (f"{later}: line {sha_line}: task 'cold-bag-delivery' has another sha256 than on "
                                   "the other sheet: they reviewed different versions of it")  # fmt: skip


def test_a_sheet_saved_with_crlf_and_a_byte_order_mark_reads_the_same(tmp_path: Path) -> None:
    batch = make_batch(tmp_path, TWO)
    write_sheet(batch)
    sheet = filled(
        batch / "review.md", {"budget-tent": ("reject", "Too long to read."), "cold-bag-delivery": ("accept", None)}
    )
    sheet.write_bytes(b"\xef\xbb\xbf" + sheet.read_bytes().replace(b"\n", b"\r\n"))
    summary = accept_sheet(sheet, tmp_path / "bench.json")
    assert (summary.accepted, summary.rejected) == (["cold-bag-delivery"], ["budget-tent"])
    assert [entry["reason"] for entry in _log(tmp_path / "bench.rejections.jsonl")] == ["Too long to read."]


def test_a_reason_may_run_over_several_lines(tmp_path: Path) -> None:
    batch = make_batch(tmp_path, TWO)
    write_sheet(batch)
    sheet = filled(batch / "review.md", {"budget-tent": ("reject", "The price range is given,\nso nothing is found.")})
    summary = accept_sheet(sheet, tmp_path / "bench.json")
    assert summary.rejected == ["budget-tent"] and summary.undecided == ["cold-bag-delivery"]
    assert _log(tmp_path / "bench.rejections.jsonl")[0]["reason"] == "The price range is given, so nothing is found."
