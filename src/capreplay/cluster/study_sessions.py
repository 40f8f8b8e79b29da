"""``capreplay study run --backend ray``: every page session a Ray task; the driver alone records.

A page session's task takes the node's copy of the study snapshot (:mod:`capreplay.cluster.snapshot_copy`),
serves it and opens the study's browser as the local backend does (one per task), opens the page, reads its
views, makes the session's calls (its own model client, the run's settings and endpoint) and returns the
records, token counts and screenshot. The driver keeps the screenshot and appends the lines to the run's logs:
``calls.jsonl``, ``tokens.jsonl``, ``page_failures.jsonl``; resuming, the registration check and the report are
those of a run on one machine. A page that fails costs its own cells, as on one machine; a task lost after
its retries (:mod:`capreplay.cluster.ray_tasks`) is kept as a page failure with the reason, and a rerun retries it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Collection
from pathlib import Path

from pydantic import BaseModel

from capreplay.cluster.connect import connect, import_ray
from capreplay.cluster.ray_tasks import passed_on, run_tasks, stall_after
from capreplay.cluster.snapshot_copy import ShippedSnapshot, node_snapshot, ship
from capreplay.llm import make_client
from capreplay.llm.anthropic import KEY_VARIABLE
from capreplay.llm.messages import ModelSettings
from capreplay.models.task import Study
from capreplay.study.page.failures import PAGE_ERRORS, failure_text
from capreplay.study.page.session import study_browser
from capreplay.study.records import CallTokens, Cell, RunRecord
from capreplay.study.representations import REPRESENTATIONS, uses_stagehand
from capreplay.study.run.cells import ExecuteSummary
from capreplay.study.run.execute import SessionRun, Sessions, SessionsRunner, add_up
from capreplay.study.run_files import keep_screenshot, screenshot_name

SESSION_S = 600.0
"""What a page session may take at most, for the driver's bound on a run whose tasks never end (a session's own
waits are bounded: loading, settling, each model call)."""


class StudyJob(BaseModel):
    """What every page session's task of one run shares (put in the object store once)."""

    study: Study
    settings: ModelSettings
    api_counts: bool


class SessionOutcome(BaseModel):
    """What a page session's task returns."""

    records: list[RunRecord]
    tokens: list[CallTokens]
    screenshot: bytes | None = None
    opened: bool
    summary: ExecuteSummary | None = None
    failure: str | None = None
    """Why the page failed (its cells not in ``records`` stay unrecorded)."""


class _Records:
    """The session's records, kept for the driver; ``finished`` are those recorded before the task."""

    def __init__(self, finished: Collection[Cell]) -> None:
        self.finished = set(finished)
        self.made: list[RunRecord] = []

    def append(self, record: RunRecord) -> None:
        self.finished.add(record.cell)
        self.made.append(record)


def run_session_task(
    shipped: ShippedSnapshot, job: StudyJob, cells: list[Cell], finished: list[Cell]
) -> SessionOutcome:
    """One page session on this node, as the local backend runs it; see the module docstring."""
    snapshot = node_snapshot(import_ray(), shipped)
    records, tokens = _Records(finished), list[CallTokens]()
    shots: list[bytes] = []

    def keep(png: bytes) -> str:
        shots.append(png)
        return screenshot_name(png)

    async def session() -> SessionOutcome:
        chosen = [REPRESENTATIONS[name] for name in job.study.protocol.representations]
        client = make_client(job.settings)
        session = SessionRun(job.study, cells, client, job.api_counts)
        try:
            async with study_browser(snapshot, stagehand=uses_stagehand(chosen)) as (context, adapters):
                done = await session.run(context, adapters, records, tokens, keep)
        except PAGE_ERRORS as e:
            return SessionOutcome(records=records.made, tokens=tokens, screenshot=shots[0] if shots else None,
                                  opened=session.opened, failure=failure_text(e))  # fmt: skip
        finally:
            await client.aclose()
        return SessionOutcome(records=records.made, tokens=tokens, screenshot=shots[0], opened=True, summary=done)

    return asyncio.run(session())


def ray_sessions(address: str | None = None) -> SessionsRunner:
    """The page sessions as Ray tasks on the cluster at ``address`` (see :func:`~capreplay.cluster.connect.connect`)."""

    async def run(sessions: Sessions, todo: list[list[Cell]]) -> None:
        ray = connect(address)
        prepared = sessions.run
        job = StudyJob(study=prepared.study, settings=prepared.settings, api_counts=sessions.api_counts)
        shipped, shared = ship(ray, prepared.snapshot), ray.put(job)
        env = passed_on([KEY_VARIABLE])
        if sessions.api_key:
            env[KEY_VARIABLE] = sessions.api_key

        def returned(number: int, outcome: SessionOutcome) -> None:
            _record(sessions, prepared.folder, outcome)
            if outcome.failure is not None:
                sessions.page_failed(todo[number], outcome.failure)

        def lost(number: int, reason: str) -> None:
            sessions.page_failed(todo[number], reason)

        finished = sessions.records.finished
        work = {n: (shipped, shared, cells, [c for c in cells if c in finished]) for n, cells in enumerate(todo)}
        run_tasks(ray, run_session_task, work, name=lambda n: f"page session {todo[n][0].repeat}/{todo[n][0].page}",
                  on_result=returned, on_lost=lost, stall_s=stall_after(SESSION_S), env=env)  # fmt: skip

    return run


def _record(sessions: Sessions, folder: Path, outcome: SessionOutcome) -> None:
    """Keep a session's screenshot, then its records and token counts (a recorded cell has its screenshot)."""
    if outcome.screenshot is not None:
        keep_screenshot(folder, outcome.screenshot)
    for record in outcome.records:
        sessions.records.append(record)
    for tokens in outcome.tokens:
        sessions.tokens.append(tokens)
    sessions.opened += outcome.opened
    if outcome.summary is not None:
        add_up(sessions.total, outcome.summary)
