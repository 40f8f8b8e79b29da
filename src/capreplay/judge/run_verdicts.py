"""Judging a whole agent run: every recorded episode on the run's own snapshot, its verdicts written.

Writes ``verdicts.jsonl`` (one :class:`EpisodeVerdict` per episode, in record order) into the run folder,
replaced atomically, so a judge that stops half way leaves the previous file whole; the metrics and
``judge.md`` are the judge's report (:mod:`capreplay.report.judge`). The snapshot must be the one the
episodes ran on (same snapshot id), or the verdicts would check other pages than the agents saw.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel

from capreplay.agents.run import read_agent_run
from capreplay.archive.snapshot.manifest import load_manifest
from capreplay.errors import InputError
from capreplay.judge.episode import Judge, judge_episode
from capreplay.judge.ground import Grounding
from capreplay.judge.metrics import JudgeMetrics, compute_metrics
from capreplay.judge.verdict import EpisodeVerdict
from capreplay.llm import make_client
from capreplay.llm.client import ModelClient
from capreplay.llm.messages import ModelSettings
from capreplay.models.workflow import Workflows
from capreplay.runs.episode_log import read_episodes
from capreplay.runs.tasks_file import load_tasks_file
from capreplay.util.files import write_atomic

VERDICTS_FILE = "verdicts.jsonl"
METRICS_FILE = "metrics.json"


class JudgedRun(BaseModel):
    """What judging a run produced."""

    verdicts: list[EpisodeVerdict]
    metrics: JudgeMetrics


def judge_client(settings: ModelSettings, key: str | None, cache_dir: Path) -> ModelClient | None:
    """The judge's cached model client, or None when no Anthropic key is given (answers that need a call stay
    unscored). The key is the judge's own (:func:`capreplay.llm.access.model_key`), never passed to an agent."""
    if not key and settings.provider == "anthropic":
        return None
    return make_client(settings, cache_dir=cache_dir, api_key=key)


def run_workflows(run_dir: Path) -> tuple[Workflows, Path]:
    """The workflows a run was planned from, and the snapshot it ran on (checked to be the same)."""
    info = read_agent_run(run_dir)
    tasks = load_tasks_file(Path(info.tasks_file))
    if tasks.workflows is None:
        raise InputError("has no 'workflows' section", info.tasks_file)
    snapshot = Path(info.snapshot)
    current = load_manifest(snapshot).snapshot_id
    if current != info.snapshot_id:
        raise InputError(
            f"snapshot {current[:12]} is not the one the run's episodes ran on ({info.snapshot_id[:12]})", snapshot
        )
    return tasks.workflows, snapshot


async def judge_run(run_dir: Path, client: ModelClient | None) -> JudgedRun:
    """Judge every recorded episode of ``run_dir``, write the verdicts, and compute the metrics."""
    workflows, snapshot = run_workflows(run_dir)
    episodes = read_episodes(run_dir)
    if not episodes:
        raise InputError("the run has no recorded episodes to judge", run_dir)
    verdicts: list[EpisodeVerdict] = []
    async with Grounding(snapshot) as grounding:
        judge = Judge(grounding, client)
        for record in episodes:
            verdicts.append(await judge_episode(record, workflows.task(record.key.task), judge))
    metrics = compute_metrics(verdicts, workflows.tasks)
    lines = b"".join(v.model_dump_json().encode("utf-8") + b"\n" for v in verdicts)
    write_atomic(run_dir / VERDICTS_FILE, lines)
    return JudgedRun(verdicts=verdicts, metrics=metrics)
