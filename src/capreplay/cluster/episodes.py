"""``capreplay run --backend ray``: every episode a Ray task; the driver alone records.

Each episode asks a node for one browser's worth of resources (:data:`EPISODE_RESOURCES`). The task takes the
node's copy of the snapshot (:mod:`capreplay.cluster.snapshot_copy`), starts its own replay server, Chromium
and agent exactly as the local backend does (:func:`~capreplay.agents.run.run_in_turn`, one episode), and
returns the episode's record with the files it wrote (its screenshots). The driver writes those files into
the run folder and then appends the record to ``episodes.jsonl``: resuming, registration checks, merging and
the report are those of a run on one machine.

A task whose worker process or node dies is run again by Ray, from the start, at most :data:`MAX_RETRIES`
times; only the attempt that returns is recorded, so no episode is recorded twice. One that still fails is
recorded as ``failed`` with the reason. An error capreplay raises on purpose inside a task (a snapshot that
does not match its manifest, no Chromium on a node) stops the run as it would on one machine: the episodes
in flight are cancelled, unrecorded, and a rerun runs them.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
import time
from collections import deque
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import Any

from pydantic import BaseModel

from capreplay.agents.harness import Limits
from capreplay.agents.run import (
    AGENT_BASE_URL_VARIABLE,
    AGENT_KEY_VARIABLE,
    RunSummary,
    Tally,
    agent_spec,
    run_in_turn,
)
from capreplay.cluster.connect import connect, import_ray
from capreplay.cluster.snapshot_copy import ShippedSnapshot, node_snapshot, ship
from capreplay.errors import CapreplayError, OutputError, ReplayError, os_reason
from capreplay.models.episode import AgentRunInfo, EpisodeKey, EpisodeRecord, Settling
from capreplay.models.workflow import Workflows
from capreplay.replay.server import ReplayServer
from capreplay.runs.episode_log import EpisodeLog

EPISODE_RESOURCES: dict[str, Any] = {"num_cpus": 1, "memory": 1 << 30}
"""What one episode asks of a node: a core and 1 GiB for its Chromium, its agent and its replay server."""
MAX_RETRIES = 2
"""Times Ray runs an episode again after its worker process or node died."""
AGENT_VARIABLES = (AGENT_KEY_VARIABLE, AGENT_BASE_URL_VARIABLE, "ANTHROPIC_API_KEY")
"""The driver's variables an agent may need on a node (its model key and endpoint), passed on when set."""
WAIT_S = 5.0
"""How long the driver waits for any episode before looking again (it looks until every one is back)."""


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
            _run_tasks(ray, ship(ray, snapshot), ray.put(job), todo, workflows, run_dir, recorded)
    return recorded.summary(len(info.planned), skipped, time.monotonic() - began)


def _run_tasks(
    ray: Any,
    shipped: ShippedSnapshot,
    job: Any,
    todo: list[EpisodeKey],
    workflows: Workflows,
    run_dir: Path,
    recorded: Callable[[EpisodeRecord], None],
) -> None:
    """Submit an episode task per key and record each as it comes back; on any way out, cancel the rest."""
    env = {name: os.environ[name] for name in AGENT_VARIABLES if os.environ.get(name)}
    remote = ray.remote(run_episode_task)
    options = {"max_retries": MAX_RETRIES, "retry_exceptions": False, **EPISODE_RESOURCES}
    if env:
        options["runtime_env"] = {"env_vars": env}
    pending = {remote.options(name=f"episode {key.id()}", **options).remote(shipped, job, key): key for key in todo}
    try:
        while pending:
            done, _ = ray.wait(list(pending), num_returns=1, timeout=WAIT_S)
            for ref in done:
                key = pending.pop(ref)
                outcome = _outcome(ray, ref, key, workflows)
                _write_files(run_dir, outcome.files)
                recorded(outcome.record)
    finally:
        for ref in pending:
            ray.cancel(ref, force=True)


def _outcome(ray: Any, ref: Any, key: EpisodeKey, workflows: Workflows) -> EpisodeOutcome:
    """The task's outcome; a task whose worker died more than :data:`MAX_RETRIES` times is a failed episode."""
    try:
        outcome: EpisodeOutcome = ray.get(ref)
    except ray.exceptions.RayTaskError as e:
        if isinstance(e.cause, CapreplayError):
            raise e.cause from None
        raise
    except ray.exceptions.RayError as e:
        reason = str(e).strip().splitlines()[0] if str(e).strip() else ""
        record = EpisodeRecord(
            key=key,
            started_at=datetime.now(UTC),
            duration_s=0.0,
            status="failed",
            error=f"its Ray worker failed {MAX_RETRIES + 1} times ({type(e).__name__}: {reason})",
            start_url=workflows.task(key.task).start_url,
        )
        return EpisodeOutcome(record=record, files={})
    if outcome.record.key != key:
        raise ReplayError(f"the Ray task of episode {key.id()} returned episode {outcome.record.key.id()}")
    return outcome


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
