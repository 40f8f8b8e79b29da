"""``capreplay run --backend ray``: every episode a Ray task; the driver alone records.

Each episode is a Ray task (:func:`~capreplay.cluster.ray_tasks.run_tasks`: one browser's worth of a node,
retried when its worker dies). The task takes the node's copy of the snapshot
(:mod:`capreplay.cluster.snapshot_copy`), starts its own replay server, Chromium and agent exactly as the
local backend does (:func:`~capreplay.agents.run.run_in_turn`, one episode), and returns the episode's record
with the files it wrote (its screenshots). The driver writes those files into
the run folder and then appends the record to ``episodes.jsonl``: resuming, registration checks, merging and
the report are those of a run on one machine.

Only the attempt that returns is recorded, so no episode is recorded twice; one whose task is lost after its
retries is recorded as ``failed`` with the reason. An error capreplay raises on purpose inside a task stops
the run as it would on one machine: the episodes in flight are cancelled, unrecorded, and a rerun runs them.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from collections import deque
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath

from pydantic import BaseModel

from capreplay.agents.harness import Limits
from capreplay.agents.run import RunSummary, Tally, agent_spec, run_in_turn
from capreplay.cluster.connect import connect, import_ray
from capreplay.cluster.ray_tasks import passed_on, run_tasks, stall_after
from capreplay.cluster.snapshot_copy import ShippedSnapshot, node_snapshot, ship
from capreplay.errors import OutputError, ReplayError, os_reason
from capreplay.llm.access import base_url_variable, key_variable, key_variables
from capreplay.models.episode import AgentRunInfo, EpisodeKey, EpisodeRecord, Settling
from capreplay.models.workflow import Workflows
from capreplay.replay.server import ReplayServer
from capreplay.runs.episode_log import EpisodeLog

AGENT_VARIABLES = (key_variable("agent"), base_url_variable("agent"), *key_variables("agent", "anthropic")[1:])
"""The driver's variables an agent may need on a node (its model key and endpoint), passed on when set."""


class EpisodeOutcome(BaseModel):
    """What an episode's task returns: its record and the files it wrote, by path relative to the run."""

    record: EpisodeRecord
    files: dict[str, bytes]


class EpisodeJob(BaseModel):
    """What every episode's task of one run shares (put in the object store once)."""

    workflows: Workflows
    tasks_name: str
    tasks_text: bytes
    limits: tuple[int, float]
    settling: Settling


def run_episode_task(shipped: ShippedSnapshot, job: EpisodeJob, key: EpisodeKey) -> EpisodeOutcome:
    """One episode on this node, as the local backend runs it; see the module docstring."""
    snapshot = node_snapshot(import_ray(), shipped)
    with tempfile.TemporaryDirectory(prefix="capreplay-episode-") as tmp:
        # The gold agent reads the tasks file; the driver's path means nothing on another node.
        tasks_file = Path(tmp, job.tasks_name)
        tasks_file.write_bytes(job.tasks_text)
        run_dir = Path(tmp, "run")
        run_dir.mkdir()
        spec = agent_spec(key.agent, job.workflows, tasks_file)
        records: list[EpisodeRecord] = []

        async def episode() -> None:
            server = ReplayServer(snapshot, keep_log=True)
            await server.start()
            try:
                await run_in_turn(server, deque([key]), job.workflows, {key.agent: spec}, Limits(*job.limits),
                                  run_dir, job.settling, records.append, ahead=False)  # fmt: skip
            finally:
                await server.stop()

        asyncio.run(episode())
        files = {p.relative_to(run_dir).as_posix(): p.read_bytes() for p in run_dir.rglob("*") if p.is_file()}
    return EpisodeOutcome(record=records[0], files=files)


def execute_run_ray(
    snapshot: Path,
    info: AgentRunInfo,
    workflows: Workflows,
    tasks_file: Path,
    run_dir: Path,
    *,
    address: str | None = None,
    on_episode: Callable[[EpisodeRecord], None] | None = None,
) -> RunSummary:
    """Run every planned episode not yet recorded as Ray tasks on the cluster at ``address`` (see
    :func:`~capreplay.cluster.connect.connect`); record each as it returns."""
    began = time.monotonic()
    with EpisodeLog(run_dir) as log:
        todo = [k for k in info.planned if k not in log.finished]
        skipped = len(info.planned) - len(todo)
        recorded = Tally(log, on_episode)
        if todo:
            ray = connect(address)
            job = EpisodeJob(workflows=workflows, tasks_name=tasks_file.name, tasks_text=tasks_file.read_bytes(),
                             limits=(info.step_limit, info.episode_timeout_s), settling=info.settling)  # fmt: skip
            shipped, shared = ship(ray, snapshot), ray.put(job)

            def returned(key: EpisodeKey, outcome: EpisodeOutcome) -> None:
                if outcome.record.key != key:
                    raise ReplayError(f"the Ray task of episode {key.id()} returned episode {outcome.record.key.id()}")
                _write_files(run_dir, outcome.files)
                recorded(outcome.record)

            def lost(key: EpisodeKey, reason: str) -> None:
                recorded(EpisodeRecord(key=key, started_at=datetime.now(UTC), duration_s=0.0, status="failed",
                                       error=reason, start_url=workflows.task(key.task).start_url))  # fmt: skip

            run_tasks(ray, run_episode_task, {key: (shipped, shared, key) for key in todo},
                      name=lambda key: f"episode {key.id()}", on_result=returned, on_lost=lost,
                      stall_s=stall_after(info.episode_timeout_s), env=passed_on(AGENT_VARIABLES))  # fmt: skip
    return recorded.summary(len(info.planned), skipped, time.monotonic() - began)


def _write_files(run_dir: Path, files: dict[str, bytes]) -> None:
    """Write an episode's files under ``run_dir`` (before its record: a recorded episode has its screenshots)."""
    for rel, data in files.items():
        parts = PurePosixPath(rel).parts
        if not parts or parts[0] == "/" or ".." in parts:
            raise ReplayError(f"an episode task returned a file outside the run folder: {rel!r}")
        path = run_dir.joinpath(*parts)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        except OSError as e:
            raise OutputError(f"cannot write: {os_reason(e)}", path) from e
