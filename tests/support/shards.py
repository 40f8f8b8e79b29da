"""Shard folders of an agent run made by hand from the real models (no browser): a plan, its shards, records."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from capreplay.agents.run import plan_episodes, start_agent_run
from capreplay.models.episode import AgentRunInfo, EpisodeKey, EpisodeRecord, StepRecord
from capreplay.runs.episode_log import EpisodeLog
from capreplay.runs.folder import run_dir
from capreplay.runs.shards import sharded

STARTED = datetime(2026, 11, 3, 9, 0, tzinfo=UTC)
TASKS = ["alpha", "beta", "gamma", "delta", "epsilon"]
AGENTS = ["gold", "browser_use"]


def whole_run(
    run_id: str = "exp", *, seed: int = 7, repeats: int = 2, registration: str | None = "reg"
) -> AgentRunInfo:
    """The plan of a whole run: every task and agent, ``repeats`` times, seeded."""
    return AgentRunInfo(
        run_id=run_id, registration=registration, created_at=STARTED, tasks_file="tasks.json", snapshot="world",
        snapshot_id="0" * 64, agents=AGENTS, agent_models={"gold": None, "browser_use": {"model": "claude-test"}},
        seed=seed, repeats=repeats, step_limit=10, episode_timeout_s=120,
        planned=plan_episodes(seed, repeats, TASKS, AGENTS),
    )  # fmt: skip


def shot_bytes(key: EpisodeKey, n: int) -> bytes:
    """The bytes of an episode's step-``n`` screenshot: different for every episode and step."""
    return f"PNG of {key.id()} step {n}".encode()


def record(key: EpisodeKey, steps: int = 2) -> EpisodeRecord:
    """A finished episode with ``steps`` steps, each with its screenshot."""
    return EpisodeRecord(
        key=key, started_at=STARTED, duration_s=3.5, status="answered", answer=f'{{"task": "{key.task}"}}',
        steps=[StepRecord(n=n, action="click", url="https://www.shop.test/", at_s=float(n),
                          screenshot=f"{key.agent}/{key.repeat}/{key.task}/step-{n:03d}.png")
               for n in range(1, steps + 1)],
        start_url="https://www.shop.test/",
    )  # fmt: skip


def write_records(folder: Path, keys: list[EpisodeKey]) -> None:
    """Record ``keys`` in the run folder, screenshots and all, as the harness would."""
    with EpisodeLog(folder) as log:
        for key in keys:
            rec = record(key)
            for step in rec.steps:
                assert step.screenshot is not None
                path = folder / step.screenshot
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(shot_bytes(key, step.n))
            log.append(rec)


def make_shard(results: Path, info: AgentRunInfo, index: int, count: int, *, complete: bool = True,
               folder_name: str | None = None) -> Path:  # fmt: skip
    """Shard ``index`` of ``count`` of ``info`` under ``results/runs``: its run.json and (with ``complete``)
    every episode of its slice recorded; else all but its last episode."""
    shard = sharded(info, index, count)
    folder = run_dir(results, folder_name or shard.run_id)
    start_agent_run(folder, shard)
    keys = shard.planned if complete else shard.planned[:-1]
    write_records(folder, keys)
    return folder


def make_shards(results: Path, info: AgentRunInfo, count: int) -> list[Path]:
    """Every shard of ``info``, each complete."""
    return [make_shard(results, info, i, count) for i in range(count)]
