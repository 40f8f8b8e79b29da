"""The episode harness and `capreplay run`: real Chromium, the real replay server, agents as real subprocesses.

The tasks here run on the committed fixture snapshot, so the harness is tested apart from the world snapshot.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from capreplay.agents.harness import AgentSpec, Limits, run_episode
from capreplay.agents.run import agent_spec, new_run_info, start_agent_run
from capreplay.models.episode import EpisodeKey, EpisodeRecord
from capreplay.models.workflow import WorkflowTask
from capreplay.replay.server import ReplayServer
from capreplay.runs.episode_log import read_episodes
from capreplay.runs.tasks_file import load_tasks_file
from tests.support.world_sample import FIXTURES, GOOD_PATH, HOME, sample_task, write_tasks


async def _episode(tmp_path: Path, task: dict[str, Any], spec: AgentSpec, limits: Limits) -> EpisodeRecord:
    server = ReplayServer(FIXTURES, keep_log=True)
    await server.start()
    try:
        key = EpisodeKey(repeat=0, task=task["id"], agent=spec.name)
        return await run_episode(server, key, WorkflowTask.model_validate(task), spec, limits, tmp_path)
    finally:
        await server.stop()


def _gold(tasks_file: Path) -> AgentSpec:
    return AgentSpec("gold", [sys.executable, "-m", "capreplay.agents.gold", "--tasks", str(tasks_file)])


@pytest.mark.browser
def test_the_gold_agent_replays_its_path_and_answers_from_the_page(tmp_path: Path) -> None:
    task = sample_task("first-product", GOOD_PATH)
    spec = _gold(write_tasks(tmp_path, [task]))
    record = asyncio.run(_episode(tmp_path, task, spec, Limits(10, 120)))
    assert record.status == "answered", record.error
    assert json.loads(record.answer or "") == {"product": "Fixture Mug", "product_url": HOME}
    assert [s.action for s in record.steps] == ["click", "goto", "read", "read"]
    assert [s.n for s in record.steps] == [1, 2, 3, 4]
    assert record.steps[0].url == "https://www.shop.test/lazy"
    for step in record.steps:
        assert step.screenshot is not None
        assert (tmp_path / step.screenshot).read_bytes().startswith(b"\x89PNG")
    urls = {r.url for r in record.requests}
    assert {HOME, "https://www.shop.test/lazy"} <= urls
    assert record.off_snapshot == []
    assert record.final_url == HOME


@pytest.mark.browser
def test_requests_off_the_snapshot_are_flagged_missed_and_blocked(tmp_path: Path) -> None:
    missing = "https://www.shop.test/never-captured"
    task = sample_task(
        "strays",
        [
            {"type": "goto", "url": missing},
            {"type": "read", "output": "product", "selector": "h1"},
            {"type": "goto", "url": "https://example.com/"},
            {"type": "read", "output": "product_url", "source": "url"},
        ],
    )
    record = asyncio.run(_episode(tmp_path, task, _gold(write_tasks(tmp_path, [task])), Limits(10, 120)))
    results = {(r.url, r.result) for r in record.off_snapshot}
    assert (missing, "miss") in results
    assert ("https://example.com/", "blocked") in results
    # Loading a host outside the snapshot fails the gold path: the agent reports it and the episode failed.
    assert record.status == "failed"
    assert record.error is not None and "ERR_CONNECTION_REFUSED" in record.error


def _script_agent(name: str, body: str, env: dict[str, str] | None = None) -> AgentSpec:
    code = "import json, sys\nstart = json.loads(sys.stdin.readline())\n" + textwrap.dedent(body)
    return AgentSpec(name, [sys.executable, "-c", code], env or {})


@pytest.mark.browser
def test_an_agent_sees_its_own_key_and_no_other(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "harness-key")
    monkeypatch.setenv("CAPREPLAY_JUDGE_API_KEY", "judge-key")
    monkeypatch.setenv("OPENAI_API_KEY", "other-key")
    spec = _script_agent(
        "env",
        """
        import os
        print(json.dumps({"type": "answer", "text": json.dumps(dict(os.environ))}), flush=True)
    """,
        {"ANTHROPIC_API_KEY": "agent-key"},
    )
    task = sample_task("env", GOOD_PATH)
    record = asyncio.run(_episode(tmp_path, task, spec, Limits(10, 60)))
    env = json.loads(record.answer or "{}")
    assert env["ANTHROPIC_API_KEY"] == "agent-key"
    assert "CAPREPLAY_JUDGE_API_KEY" not in env and "OPENAI_API_KEY" not in env
    assert not any("judge-key" in v or "harness-key" in v for v in env.values())


@pytest.mark.browser
def test_the_step_limit_stops_an_agent_and_keeps_its_late_answer(tmp_path: Path) -> None:
    spec = _script_agent(
        "busy",
        """
        n = 0
        while True:
            n += 1
            print(json.dumps({"type": "step", "n": n, "action": {"name": "wait"}, "url": start["start_url"]}),
                  flush=True)
            reply = json.loads(sys.stdin.readline())
            if reply["type"] == "stop":
                print(json.dumps({"type": "answer", "text": "gave up after %d" % n}), flush=True)
                break
    """,
    )
    record = asyncio.run(_episode(tmp_path, sample_task("busy", GOOD_PATH), spec, Limits(3, 60)))
    assert record.status == "step_limit"
    assert record.answer == "gave up after 3"
    assert len(record.steps) == 3


@pytest.mark.browser
def test_an_agent_that_breaks_the_protocol_or_dies_fails_the_episode_with_the_reason(tmp_path: Path) -> None:
    garbage = _script_agent("garbage", "print('hello', flush=True)\n")
    record = asyncio.run(_episode(tmp_path, sample_task("garbage", GOOD_PATH), garbage, Limits(3, 60)))
    assert record.status == "failed"
    assert record.error is not None and "broke the protocol" in record.error
    dies = _script_agent("dies", "sys.stderr.write('boom: no model key\\n'); sys.exit(3)\n")
    record = asyncio.run(_episode(tmp_path, sample_task("dies", GOOD_PATH), dies, Limits(3, 60)))
    assert record.status == "failed"
    assert record.error == "the agent exited (status 3) without answering: boom: no model key"


@pytest.mark.browser
def test_a_silent_agent_times_out(tmp_path: Path) -> None:
    """An agent that never answers, not even ``stop``, is given its grace after the timeout, then killed."""
    silent = _script_agent("silent", "import time\ntime.sleep(60)\n")
    began = time.monotonic()
    record = asyncio.run(_episode(tmp_path, sample_task("silent", GOOD_PATH), silent, Limits(3, 2, stop_grace_s=3)))
    assert record.status == "timeout"
    assert record.error == "the episode ran out of time (2 s)"
    took = time.monotonic() - began
    assert 2 + 3 <= took < 40, f"the episode took {took:.1f} s: not the 2 s timeout plus the 3 s grace"


def _run_cli(tasks_file: Path, results: Path, *extra: str) -> subprocess.Popen[str]:
    cmd = [
        sys.executable,
        "-m",
        "capreplay",
        "run",
        "--agent",
        "gold",
        "--tasks",
        str(tasks_file),
        "--results",
        str(results),
        "--run-id",
        "r1",
        *extra,
    ]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.mark.browser
def test_a_killed_run_resumes_without_running_an_episode_twice(tmp_path: Path) -> None:
    tasks_file = write_tasks(tmp_path, [sample_task("a", GOOD_PATH)], repeats=3)
    results = tmp_path / "results"
    run_dir = results / "runs" / "r1"
    proc = _run_cli(tasks_file, results)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not (run_dir.exists() and read_episodes(run_dir)):
        time.sleep(0.2)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    done_before = [r.key for r in read_episodes(run_dir)]
    assert 1 <= len(done_before) < 3
    resumed = _run_cli(tasks_file, results)
    out, err = resumed.communicate(timeout=300)
    assert resumed.returncode == 0, err
    assert f"{len(done_before)} already recorded, {3 - len(done_before)} run" in out
    keys = [r.key for r in read_episodes(run_dir)]
    assert len(keys) == len(set(keys)) == 3
    assert keys[: len(done_before)] == done_before
    assert all(r.status == "answered" for r in read_episodes(run_dir))


def test_a_resumed_run_with_another_plan_is_refused(tmp_path: Path) -> None:
    tasks_file = write_tasks(tmp_path, [sample_task("a", GOOD_PATH)])
    results = tmp_path / "results"
    workflows = load_tasks_file(tasks_file).workflows
    assert workflows is not None
    specs = {"gold": agent_spec("gold", workflows, tasks_file)}
    start_agent_run(results / "runs" / "r1", new_run_info("r1", None, tasks_file, workflows, FIXTURES, ["gold"], specs))
    other = _run_cli(tasks_file, results, "--repeats", "2")
    _, err = other.communicate(timeout=120)
    assert other.returncode == 2
    assert err.strip().endswith("this run was started with another plan (tasks, agents, seed, limits or registration)")
    assert len(err.strip().splitlines()) == 1
    assert not (results / "runs" / "r1" / "episodes.jsonl").exists()


@pytest.mark.browser
def test_with_the_servers_quiet_signal_the_gold_agent_leaves_its_waits_to_the_harness_and_answers_the_same(
    tmp_path: Path,
) -> None:
    task = sample_task("first-product", GOOD_PATH)
    tasks_file = write_tasks(tmp_path, [task])
    spec = AgentSpec("gold", [*_gold(tasks_file).command, "--settle", "harness"])

    async def scenario() -> EpisodeRecord:
        server = ReplayServer(FIXTURES, keep_log=True)
        await server.start()
        try:
            key = EpisodeKey(repeat=0, task=task["id"], agent=spec.name)
            return await run_episode(
                server, key, WorkflowTask.model_validate(task), spec, Limits(10, 120), tmp_path, "server-quiet"
            )
        finally:
            await server.stop()

    record = asyncio.run(scenario())
    assert record.status == "answered", record.error
    assert json.loads(record.answer or "") == {"product": "Fixture Mug", "product_url": HOME}
    assert [s.action for s in record.steps] == ["click", "goto", "read", "read"]
    assert all(s.screenshot is not None and (tmp_path / s.screenshot).is_file() for s in record.steps)
    assert {HOME, "https://www.shop.test/lazy"} <= {r.url for r in record.requests}
