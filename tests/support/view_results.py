"""A results folder for the viewer's tests, made by the verbs a user runs: a judged gold run of two world tasks,
the same run with one answer changed (so one leaf fails), a review sheet of a batch proven by that gold run,
a small study run over the fake model API, the committed offline study results, and the world snapshot's last
verify report."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from capreplay.models.episode import AgentRunInfo, EpisodeRecord
from tests.support.cli import cli
from tests.support.paths import ROOT
from tests.support.view_sheet import make_review_sheet
from tests.support.view_study import make_study_run

GOLD_TASKS = ("budget-tent", "rain-tent")
WRONG_TASK = "budget-tent"
WRONG_PRICE = "216"
"""The gold answer's tent price is 215; 216 is on no page, so the price leaves fail and nothing else does."""


def _ok(*args: str) -> None:
    done = cli(*args, timeout=900)
    assert done.returncode == 0, f"capreplay {' '.join(args)} exited {done.returncode}: {done.stderr[-2000:]}"


def wrong_copy(gold: Path, out: Path) -> None:
    """``out``: the run ``gold`` under another id, with the tent price of one answer changed, not yet judged."""
    shutil.copytree(gold, out, ignore=shutil.ignore_patterns("verdicts.jsonl"))
    info = AgentRunInfo.model_validate_json((gold / "run.json").read_bytes())
    (out / "run.json").write_text(info.model_copy(update={"run_id": out.name}).model_dump_json(indent=1))
    lines = []
    for line in (gold / "episodes.jsonl").read_text().splitlines():
        record = EpisodeRecord.model_validate_json(line)
        if record.key.task == WRONG_TASK:
            answer = json.loads(record.answer or "{}")
            answer["tent_price"] = WRONG_PRICE
            record = record.model_copy(update={"answer": json.dumps(answer, indent=1)})
        lines.append(record.model_dump_json())
    (out / "episodes.jsonl").write_text("\n".join(lines) + "\n")


def make_view_results(folder: Path) -> Path:
    """Write the results folder into ``folder`` (two or three minutes: two gold episodes, 48 study calls, a verify)."""
    results = make_study_run(folder)
    tasks = [arg for task in GOLD_TASKS for arg in ("--task", task)]
    _ok("run", "--agent", "gold", *tasks, "--repeats", "1", "--results", str(results), "--run-id", "gold",
        "--tasks", str(ROOT / "tasks.json"))  # fmt: skip
    _ok("judge", str(results / "runs" / "gold"))
    wrong_copy(results / "runs" / "gold", results / "runs" / "wrong")
    _ok("judge", str(results / "runs" / "wrong"))
    make_review_sheet(results, tasks=GOLD_TASKS, gold_run=results / "runs" / "gold")
    shutil.copytree(ROOT / "results" / "study-offline", results / "study-offline")
    _ok("verify", str(ROOT / "snapshots" / "world"), "--url", "https://www.fellgear.test/")
    return results
