"""``capreplay tasks check``: the proof on hand-written tasks, from the command line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli import cli
from tests.support.world_sample import GOOD_PATH, HOME, sample_task, write_tasks


@pytest.mark.browser
def test_check_proves_a_good_task_and_rejects_one_whose_path_leaves_the_snapshot(tmp_path: Path) -> None:
    stray = [*GOOD_PATH, {"type": "goto", "url": f"{HOME}never-captured"}]
    tasks = write_tasks(tmp_path, [sample_task("first-product", GOOD_PATH), sample_task("strays", stray)])
    done = cli("tasks", "check", str(tasks), "--cache", str(tmp_path / "cache"))
    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "first-product: proven"
    assert lines[1].startswith("strays: rejected: on_snapshot: ")
    assert f"requests off the snapshot, first miss GET {HOME}never-captured" in lines[1]
    assert "1 of 2 tasks proven" in done.stderr

    only = cli("tasks", "check", str(tasks), "--task", "first-product", "--json", "--cache", str(tmp_path / "cache"))
    assert only.returncode == 0, only.stderr
    (proof,) = [json.loads(line) for line in only.stdout.splitlines()]
    assert proof["task"] == "first-product" and proof["passed"] and proof["score"] == 1.0
    assert [c["name"] for c in proof["checks"] if c["passed"]] == [
        "gold_run", "on_snapshot", "values_on_pages", "evidence_on_pages", "gold_scores_1", "mutations"]  # fmt: skip


def test_check_refuses_a_tasks_file_without_workflows_and_an_unknown_task(tmp_path: Path) -> None:
    empty = tmp_path / "empty.json"
    empty.write_text(json.dumps({"schema_version": 1, "snapshots": {"s": "snap"}}))
    done = cli("tasks", "check", str(empty))
    assert (
        done.returncode == 2
        and done.stderr == f"capreplay tasks: {empty}: has no 'workflows' section: no tasks to prove\n"
    )
    tasks = write_tasks(tmp_path, [sample_task("first-product", GOOD_PATH)])
    unknown = cli("tasks", "check", str(tasks), "--task", "nope")
    assert unknown.returncode == 2 and unknown.stderr == f"capreplay tasks: no workflow task 'nope' in {tasks}\n"
