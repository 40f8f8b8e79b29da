"""``capreplay run --benchmark`` with browser-use's agent is the gold agent's command with another name: with a key
set, the real adapter process, browser-use and its Anthropic client run a benchmark task on the frozen snapshot,
the model being the fake Messages API (the one stand-in: no model is reachable here). The scripted model opens
Flask's changelog and answers with the values read off that frozen page by hand; the judge scores the answer
without a model."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from capreplay.runs.episode_log import read_episodes
from capreplay.testing.fake_llm import FakeLLM, Reply
from tests.support.cli import cli

pytestmark = pytest.mark.browser

BENCHMARK = Path(__file__).resolve().parents[2] / "benchmark"
TASK = "docs-flask-latest-fix"
CHANGES = "http://docs.bench.test/flask/changes.html"
ANSWER = {"released": "2022-08-08", "issue": "4740", "changes_url": CHANGES}
"""Read by hand off the frozen changelog: version 2.2.2, "Released 2022-08-08", the app.env fix's issue #4740."""
TEST_KEY = "sk-ant-benchmark-test-0123456789"


def _agent_output(goal: str, action: dict[str, Any]) -> dict[str, Any]:
    return {"thinking": "scripted", "evaluation_previous_goal": "scripted", "memory": "scripted",
            "next_goal": goal, "action": [action]}  # fmt: skip


SCRIPT = [
    Reply(tool_input=_agent_output("Open Flask's changelog", {"navigate": {"url": CHANGES}})),
    Reply(tool_input=_agent_output("Answer", {"done": {"text": json.dumps(ANSWER), "success": True}})),
]


async def test_the_benchmark_command_runs_browser_use_and_the_judge_scores_its_answer(tmp_path: Path) -> None:
    async with FakeLLM(SCRIPT) as fake:
        env = {**os.environ, "CAPREPLAY_AGENT_API_KEY": TEST_KEY, "CAPREPLAY_AGENT_BASE_URL": fake.base_url}
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "capreplay", "run", "--benchmark", str(BENCHMARK), "--agent", "browser_use",
            "--task", TASK, "--results", str(tmp_path), env=env,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
        out, err = await asyncio.wait_for(process.communicate(), timeout=600)
    assert process.returncode == 0, (out + err).decode()[-3000:]
    assert "0 left the snapshot" in out.decode()
    assert len(fake.received) == 2
    assert all(r.headers.get("x-api-key") == TEST_KEY for r in fake.received)
    assert "app.env" in fake.received[0].prompt  # the task's own description reached the model

    run_dir = tmp_path / "runs" / "browser_use"
    (record,) = read_episodes(run_dir)
    assert (record.key.task, record.key.agent, record.status) == (TASK, "browser_use", "answered")
    assert record.steps[-1].action == "done" and CHANGES in {s.url for s in record.steps}
    assert record.off_snapshot == []

    judged = cli("judge", str(run_dir), "--cache", str(tmp_path / "judge-cache"))
    assert judged.returncode == 0, judged.stdout + judged.stderr
    (verdict,) = [json.loads(line) for line in (run_dir / "verdicts.jsonl").read_text().splitlines()]
    assert (verdict["task"], verdict["score"], verdict["passed"]) == (TASK, 1.0, True)
