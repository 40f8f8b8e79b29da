"""Agent runs: plan the episodes, run them on one served snapshot with N browsers, resume after a crash.

A run is planned once (``run.json``: every episode in order, seeded per repeat) and recorded in
``episodes.jsonl`` (:class:`capreplay.runs.log.AppendLog`): a rerun of the same run skips every recorded episode,
so no episode is ever run twice, and refuses to start if the plan differs. Episodes run ``browsers`` at a time,
each in its own fresh Chromium (a throw-away profile) and its own agent process, on its own ports of the one
replay server. While an episode runs, the next one's browser and agent are launched (:func:`run_in_turn`), so
no episode waits for a launch and none shares anything with another.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path

from playwright.async_api import Playwright, async_playwright
from pydantic import BaseModel, Field

from capreplay.agents.harness import AgentSpec, Limits, Prepared, prepare, run_episode
from capreplay.archive.snapshot.manifest import load_manifest
from capreplay.errors import InputError, UsageError
from capreplay.llm.access import key_help, model_base_url, model_key
from capreplay.llm.messages import ModelSettings
from capreplay.models.episode import DEFAULT_SETTLING, AgentRunInfo, EpisodeKey, EpisodeRecord, Settling
from capreplay.models.workflow import Workflows
from capreplay.replay.server import ReplayServer
from capreplay.runs.adapters import adapter_project, adapter_python
from capreplay.runs.episode_log import EpisodeLog
from capreplay.runs.folder import RUN_FILE, read_run_info, start_run
from capreplay.runs.order import seeded_plan
from capreplay.runs.registration import model_settings_data
from capreplay.runs.workers import run_workers
from capreplay.util.once import given_once

AGENTS = ("gold", "browser_use")
"""The agents ``capreplay run`` knows."""


def plan_episodes(seed: int, repeats: int, tasks: Sequence[str], agents: Sequence[str]) -> list[EpisodeKey]:
    """Every episode once: per repeat, the tasks in a seeded random order, each task's agents in the given order.

    A task or agent listed twice is a ``UsageError``.
    """
    given_once(tasks, "task")
    given_once(agents, "agent")

    def episodes(repeat: int, task: str) -> list[EpisodeKey]:
        return [EpisodeKey(repeat=repeat, task=task, agent=agent) for agent in agents]

    return seeded_plan(seed, repeats, tasks, episodes, shuffle_cells=False)


def read_agent_run(run_dir: Path) -> AgentRunInfo:
    """``run.json`` of an agent run; a missing or invalid one is one ``InputError`` line."""
    return read_run_info(run_dir, AgentRunInfo, "an agent run")


def start_agent_run(run_dir: Path, info: AgentRunInfo) -> AgentRunInfo:
    """Write ``run.json`` for a new run, or check that a resumed run was planned the same.

    A resumed run settles pages as its ``run.json`` says (a run planned before settling was recorded: by
    network-idle), whatever the default is now: its episodes stay comparable with each other."""
    if (run_dir / RUN_FILE).exists():
        info = info.model_copy(update={"settling": read_agent_run(run_dir).settling})
    return start_run(run_dir, info, "an agent run", "tasks, agents, seed, limits or registration")


def agent_spec(name: str, workflows: Workflows, tasks_file: Path, environ: Mapping[str, str] = os.environ) -> AgentSpec:
    """How to start agent ``name``: its command, its own environment, its model settings.

    A model's key and endpoint are the agent role's in ``environ`` (:mod:`capreplay.llm.access`): the process's
    own environment, on this machine or in a Ray worker that was passed them."""
    if name == "gold":
        return AgentSpec(name, [sys.executable, "-m", "capreplay.agents.gold", "--tasks", str(tasks_file.resolve())])
    if name == "browser_use":
        model = workflows.agent_model
        if model is None:
            raise InputError("the workflows have no agent_model, which browser_use needs", tasks_file)
        base_url = model_base_url("agent", None, model.base_url, environ)
        return browser_use_spec(model, base_url, model_key("agent", model.provider, environ))
    raise UsageError(f"unknown agent {name!r} (known: {', '.join(AGENTS)})")


def browser_use_spec(model: ModelSettings, base_url: str | None, key: str | None) -> AgentSpec:
    """How to start browser-use's agent with ``model``, its calls sent to ``base_url`` (None: the SDK's default)
    with the agent's own ``key`` (only the agent gets it, as ANTHROPIC_API_KEY); no key is a UsageError."""
    if not key:
        raise UsageError(f"browser_use needs a model key: set {key_help('agent')}")
    env = {"ANTHROPIC_API_KEY": key}
    if base_url:
        env["ANTHROPIC_BASE_URL"] = base_url
    project = adapter_project()
    command = [str(adapter_python(project)), "-m", "capreplay_browser_use.agent"]
    # Failed model calls are counted, never retried, as in every capreplay call (the SDK would retry 10 times).
    settings = {**model_settings_data(model), "max_retries": 0}
    return AgentSpec("browser_use", command, env, settings, cwd=project)


class RunSummary(BaseModel):
    """What one execution of a run did."""

    planned: int
    skipped: int = Field(description="Episodes recorded before, not run again.")
    ran: int
    statuses: dict[str, int] = Field(description="Episodes run now, by status.")
    off_snapshot: int = Field(description="Episodes run now that requested URLs the snapshot does not hold.")
    elapsed_s: float


def launch_ahead(browsers: int) -> bool:
    """Whether ``browsers`` workers launch each next episode's browser and agent ahead: only while there is a core
    to spare for it. With more browsers than cores every core is busy running episodes, and a launch made ahead
    only slows the episodes running (4 browsers on 2 cores gave 12.7 episodes/min with launches ahead, 15.1
    without)."""
    return browsers <= (os.cpu_count() or 1)


class Tally:
    """Records a run's episodes as they come (the log, the caller's ``on_episode``) and counts them."""

    def __init__(self, log: EpisodeLog, on_episode: Callable[[EpisodeRecord], None] | None = None) -> None:
        self.log, self.on_episode = log, on_episode
        self.statuses: dict[str, int] = {}
        self.off = 0

    def __call__(self, record: EpisodeRecord) -> None:
        self.log.append(record)
        self.statuses[record.status] = self.statuses.get(record.status, 0) + 1
        self.off += bool(record.off_snapshot)
        if self.on_episode is not None:
            self.on_episode(record)

    def summary(self, planned: int, skipped: int, elapsed_s: float) -> RunSummary:
        """What this execution did, ``skipped`` episodes having been recorded before it."""
        return RunSummary(
            planned=planned,
            skipped=skipped,
            ran=sum(self.statuses.values()),
            statuses=self.statuses,
            off_snapshot=self.off,
            elapsed_s=round(elapsed_s, 2),
        )


async def execute_run(
    snapshot: Path,
    info: AgentRunInfo,
    workflows: Workflows,
    specs: dict[str, AgentSpec],
    run_dir: Path,
    *,
    browsers: int = 1,
    on_episode: Callable[[EpisodeRecord], None] | None = None,
) -> RunSummary:
    """Run every planned episode not yet recorded, ``browsers`` at a time, on one replay server; each worker
    launches its next episode's browser ahead when there is a core to spare (:func:`launch_ahead`)."""
    if browsers < 1:
        raise UsageError("--browsers must be at least 1")
    loop = asyncio.get_running_loop()
    began = loop.time()
    limits = Limits(info.step_limit, info.episode_timeout_s)
    server = ReplayServer(snapshot, keep_log=True)
    await server.start()
    try:
        with EpisodeLog(run_dir) as log:
            todo = deque(k for k in info.planned if k not in log.finished)
            skipped = len(info.planned) - len(todo)
            recorded = Tally(log, on_episode)
            ahead = launch_ahead(browsers)

            async def worker() -> None:
                await run_in_turn(server, todo, workflows, specs, limits, run_dir, info.settling, recorded, ahead=ahead)

            await run_workers(min(browsers, len(todo)), worker)
    finally:
        await server.stop()
    return recorded.summary(len(info.planned), skipped, loop.time() - began)


async def run_in_turn(
    server: ReplayServer,
    todo: deque[EpisodeKey],
    workflows: Workflows,
    specs: dict[str, AgentSpec],
    limits: Limits,
    run_dir: Path,
    settling: Settling,
    recorded: Callable[[EpisodeRecord], None],
    *,
    ahead: bool = True,
    together: bool = True,
    driver: Playwright | None = None,
    share_driver: bool = True,
) -> None:
    """One browser's share of a run: take episodes from ``todo`` and run them one after another, each in a fresh
    browser and agent process; ``recorded`` gets each record, in the order they were taken. With ``ahead``, the
    next episode's browser and agent are launched while the current one runs (the agent waits for ``start``), and
    the next episode begins as soon as the current agent is done, while its browser and agent are being closed:
    no episode waits for a launch or a teardown. ``together`` and ``driver`` as in
    :func:`~capreplay.agents.harness.prepare` (without ``driver``, one is started for this worker's episodes;
    ``share_driver=False``: one per browser, as the harness once did)."""
    async with contextlib.AsyncExitStack() as stack:
        if driver is None and share_driver:
            driver = await stack.enter_async_context(async_playwright())
        upcoming: tuple[EpisodeKey, asyncio.Task[Prepared]] | None = None
        closing: asyncio.Task[EpisodeRecord] | None = None
        """The episode before the current one, its browser and agent still closing."""
        current: asyncio.Task[EpisodeRecord] | None = None
        try:
            while upcoming is not None or todo:
                if upcoming is None:
                    key = todo.popleft()
                    ready = await prepare(server, specs[key.agent], settling, together=together, driver=driver)
                else:
                    key, preparing = upcoming
                    upcoming = None
                    ready = await preparing
                if ahead and todo:
                    following = todo.popleft()
                    upcoming = (
                        following,
                        asyncio.create_task(
                            prepare(server, specs[following.agent], settling, together=together, driver=driver)
                        ),
                    )
                task = workflows.task(key.task)
                done = asyncio.Event()
                episode = run_episode(
                    server, key, task, specs[key.agent], limits, run_dir, settling, prepared=ready, on_answered=done.set
                )
                current = asyncio.create_task(episode)
                if closing is not None:
                    recorded(await closing)
                    closing = None
                if ahead:
                    answered = asyncio.create_task(done.wait())
                    await asyncio.wait([current, answered], return_when=asyncio.FIRST_COMPLETED)
                    answered.cancel()
                    closing = current
                else:
                    recorded(await current)
            if closing is not None:
                recorded(await closing)
                closing = None
        finally:
            # The run stopped (an error, a cancellation): the episode running is stopped and the one closing let
            # close, both unrecorded (a resumed run runs them again), their browsers and agents closed.
            if current is not None and not current.done():
                current.cancel()
            for running in (closing, current):
                if running is not None:
                    with contextlib.suppress(BaseException):
                        await running
            if upcoming is not None:  # the run stopped: the browser made ready for the next episode is closed unused
                preparing = upcoming[1]
                preparing.cancel()
                with contextlib.suppress(BaseException):
                    await (await preparing).release()


def new_run_info(
    run_id: str,
    registration: str | None,
    tasks_file: Path,
    workflows: Workflows,
    snapshot: Path,
    agents: Sequence[str],
    specs: dict[str, AgentSpec],
    task_ids: Sequence[str] | None = None,
    *,
    settling: Settling = DEFAULT_SETTLING,
) -> AgentRunInfo:
    """The plan of a run of ``agents`` on the workflows (or only ``task_ids``), settling pages by ``settling``."""
    tasks = [t.id for t in workflows.tasks]
    if task_ids:
        unknown = [t for t in task_ids if t not in tasks]
        if unknown:
            raise UsageError(f"no workflow task {unknown[0]!r} in {tasks_file}")
        tasks = [t for t in tasks if t in task_ids]
    return AgentRunInfo(
        run_id=run_id,
        registration=registration,
        created_at=datetime.now(UTC),
        tasks_file=str(tasks_file),
        snapshot=str(snapshot),
        snapshot_id=load_manifest(snapshot).snapshot_id,
        agents=list(agents),
        agent_models={a: _settings(specs[a]) for a in agents},
        seed=workflows.seed,
        repeats=workflows.repeats,
        step_limit=workflows.step_limit,
        episode_timeout_s=workflows.episode_timeout_s,
        planned=plan_episodes(workflows.seed, workflows.repeats, tasks, agents),
        settling=settling,
    )


def _settings(spec: AgentSpec) -> dict[str, object] | None:
    return dict(spec.model) if spec.model is not None else None
