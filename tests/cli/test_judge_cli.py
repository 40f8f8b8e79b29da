"""`capreplay run` then `capreplay judge` from the command line, `judge agreement`, `judge make-rubric`, bad input."""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from capreplay.testing.fake_llm import FakeLLM
from tests.support.cli import run
from tests.support.world_sample import GOOD_PATH, sample_task, write_tasks


def capreplay(*args: str, env: dict[str, str] | None = None, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return run(list(args), env=env, timeout=timeout)


@pytest.mark.browser
def test_the_gold_run_judged_from_the_command_line_scores_one(tmp_path: Path) -> None:
    tasks_file = write_tasks(tmp_path, [sample_task("first-product", GOOD_PATH)])
    results = tmp_path / "results"
    ran = capreplay("run", "--agent", "gold", "--tasks", str(tasks_file), "--results", str(results), "--run-id", "g")
    assert ran.returncode == 0, ran.stderr
    run_dir = results / "runs" / "g"
    judged = capreplay("judge", str(run_dir), "--cache", str(tmp_path / "cache"), "--json")
    assert judged.returncode == 0, judged.stderr
    metrics = json.loads(judged.stdout)
    (gold,) = metrics["agents"]
    assert gold["agent"] == "gold" and gold["scored"] == 1
    assert gold["partial_completion"]["value"] == 1.0 and gold["success_rate"]["value"] == 1.0
    verdicts = [json.loads(line) for line in (run_dir / "verdicts.jsonl").read_text().splitlines()]
    assert [v["passed"] for v in verdicts] == [True]
    assert (run_dir / "judge.md").read_text().startswith("|") or "gold" in (run_dir / "judge.md").read_text()

    labels = tmp_path / "labels.jsonl"
    labels.write_text(json.dumps({"episode": verdicts[0]["episode"], "pass": True}) + "\n")
    agreed = capreplay("judge", "agreement", str(labels), "--verdicts", str(run_dir / "verdicts.jsonl"), "--json")
    assert agreed.returncode == 0, agreed.stderr
    assert json.loads(agreed.stdout)["agreement"]["agreed"] == 1

    # A run is judged on the snapshot its episodes ran on, or not at all.
    run_json = run_dir / "run.json"
    info = json.loads(run_json.read_text())
    run_json.write_text(json.dumps({**info, "snapshot_id": "0" * 64}))
    refused = capreplay("judge", str(run_dir))
    assert refused.returncode == 2
    assert "is not the one the run's episodes ran on" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1


def test_bad_tasks_and_rubrics_exit_2_with_one_line_and_write_nothing(tmp_path: Path) -> None:
    task = sample_task("t", GOOD_PATH)
    task["rubric"]["children"][0]["check"] = {"check": "looks_right", "field": "product"}
    bad_check = write_tasks(tmp_path, [task])
    results = tmp_path / "results"
    out = capreplay("run", "--agent", "gold", "--tasks", str(bad_check), "--results", str(results))
    assert out.returncode == 2
    assert out.stderr.startswith(f"capreplay run: {bad_check}: invalid tasks file: ")
    assert len(out.stderr.strip().splitlines()) == 1 and "Traceback" not in out.stderr
    assert not results.exists()

    task = sample_task("t", GOOD_PATH)
    task["rubric"]["children"][0]["point"] = None  # the perception point is then verified by no leaf
    unreached = write_tasks(tmp_path, [task])
    out = capreplay("run", "--agent", "gold", "--tasks", str(unreached), "--results", str(results))
    assert out.returncode == 2
    assert "covered point 'p1' (perception PT18) is verified by no leaf" in out.stderr
    assert not results.exists()

    out = capreplay(
        "run",
        "--agent",
        "nobody",
        "--tasks",
        str(write_tasks(tmp_path, [sample_task("t", GOOD_PATH)])),
        "--results",
        str(results),
    )
    assert out.returncode == 2 and "unknown agent 'nobody'" in out.stderr
    assert not results.exists()

    out = capreplay("judge", str(tmp_path / "no-such-run"))
    assert out.returncode == 2 and "not an agent run folder" in out.stderr


def test_make_rubric_writes_a_valid_rubric_through_the_real_sdk(tmp_path: Path) -> None:
    task = sample_task("t", GOOD_PATH)
    tasks_file = write_tasks(tmp_path, [task])
    rubric = json.dumps(task["rubric"])
    script: list[Any] = ['{"id": "root"}', rubric]

    async def go() -> tuple[subprocess.CompletedProcess[str], int]:
        async with FakeLLM(script) as fake:
            env = {"PATH": "/usr/bin:/bin", "CAPREPLAY_JUDGE_API_KEY": "judge-key", "HOME": str(tmp_path)}
            out = await asyncio.to_thread(
                capreplay,
                "judge",
                "make-rubric",
                "--task",
                "t",
                "--tasks",
                str(tasks_file),
                "--base-url",
                fake.base_url,
                "--cache",
                str(tmp_path / "cache"),
                "-o",
                str(tmp_path / "r.json"),
                env=env,
            )
            return out, len(fake.calls("messages"))

    out, calls = asyncio.run(go())
    assert out.returncode == 0, out.stderr
    assert calls == 2
    assert "attempt 1: " in out.stderr and "attempt 2: valid" in out.stderr
    written = json.loads((tmp_path / "r.json").read_text())
    assert written["id"] == "root" and len(written["children"]) == 2
