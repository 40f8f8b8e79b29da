"""The committed benchmark replays and runs offline: a page of every application replays as it was captured,
a sample of tasks passes the six checks of the proof, and ``capreplay run --benchmark`` runs the gold agent,
whose answer the judge scores 1.0 without a model. The whole proof runs as ``scripts/prove_benchmark.py``."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from capreplay.archive.snapshot.manifest import load_manifest
from tests.support.cli import cli

pytestmark = pytest.mark.browser

BENCHMARK = Path(__file__).resolve().parents[2] / "benchmark"
SAMPLE_TASKS = ("docs-flask-latest-fix", "cross-india-currency-code")
"""One task on one site, one spanning two: a static application and two replayed strictly (data, maps)."""


def _first_page_of_each_host() -> list[str]:
    first: dict[str, str] = {}
    for page in load_manifest(BENCHMARK / "snapshot").pages:
        first.setdefault(urlsplit(page.url).hostname or "", page.url)
    return list(first.values())


def test_one_page_of_every_application_replays_as_it_was_captured() -> None:
    urls = _first_page_of_each_host()
    assert len(urls) == 8
    done = cli("verify", str(BENCHMARK / "snapshot"), *(a for url in urls for a in ("--url", url)), "--json")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr
    report = json.loads(done.stdout)
    assert report["archived_misses"] == 0
    assert [p["url"] for p in report["pages"]] == urls
    assert all(p["fidelity"]["passed"] for p in report["pages"]), [p["fidelity"] for p in report["pages"]]


def test_a_sample_of_tasks_is_proven_on_the_frozen_snapshot(tmp_path: Path) -> None:
    done = cli("tasks", "check", str(BENCHMARK / "tasks.json"), *(a for t in SAMPLE_TASKS for a in ("--task", t)),
               "--json", "--work", str(tmp_path / "work"), "--cache", str(tmp_path / "cache"))  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    proofs = [json.loads(line) for line in done.stdout.splitlines()]
    assert sorted((p["task"], p["passed"], p["score"]) for p in proofs) == sorted((t, True, 1.0) for t in SAMPLE_TASKS)


def test_the_benchmark_command_runs_the_gold_agent_and_the_judge_scores_it(tmp_path: Path) -> None:
    task = SAMPLE_TASKS[1]
    ran = cli("run", "--benchmark", str(BENCHMARK), "--agent", "gold", "--task", task, "--results", str(tmp_path))
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "0 left the snapshot" in ran.stdout
    run_dir = tmp_path / "runs" / "gold"
    judged = cli("judge", str(run_dir), "--cache", str(tmp_path / "judge-cache"))
    assert judged.returncode == 0, judged.stdout + judged.stderr
    (verdict,) = [json.loads(line) for line in (run_dir / "verdicts.jsonl").read_text().splitlines()]
    assert (verdict["task"], verdict["score"], verdict["passed"]) == (task, 1.0, True)
