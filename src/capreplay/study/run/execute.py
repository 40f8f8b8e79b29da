"""``capreplay study run``: a pre-registered study run, from the registration check to the last record.

The run refuses to start unless every registered input is unchanged (:func:`check_registration`). It then
serves the registered study snapshot offline, launches the study's browser (CDP open for browser-use), and
walks the seeded plan (:func:`capreplay.study.run.cells.plan_calls`) one page session at a time: the page is
loaded once, its views read once, and that session's calls are made at the protocol's concurrency. A page
session that fails (the page does not load, the browser or the browser-use adapter breaks) costs
its own cells only: they stay unrecorded, the failure goes into ``page_failures.jsonl`` with its reason,
the run goes on with the next session, and a rerun retries those cells. Each
call is prompt -> model (once, no retry) -> :func:`parse_answer` -> score on the live page, and is recorded
as one :class:`RunRecord` with its verdict, plus its ``representation_tokens`` in ``tokens.jsonl``
(:mod:`capreplay.study.tokens.calls`). Each page session's screenshot is kept in the run folder
(:func:`capreplay.study.run_files.keep_screenshot`) and every verdict names it; an ACT verdict also carries the
target's box and where the answer landed, in the screenshot's layout, for the viewer to draw (:class:`ActGeometry`).
Rerunning the same command resumes: recorded cells are never called
again, and a page session whose cells are all recorded is not even opened.

Model calls may overlap; scoring does not. Resolving an answer drives the page through CDP and
Playwright, and the earlier study lost a run to two resolutions sharing one CDP session.
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import os
from collections.abc import Awaitable, Callable, Collection, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from pathlib import Path

from playwright.async_api import BrowserContext
from pydantic import BaseModel, Field, ValidationError

from capreplay.errors import InputError, ModelError, UsageError, validation_reason
from capreplay.llm import make_client
from capreplay.llm.access import key_help, model_key
from capreplay.llm.client import ModelClient
from capreplay.llm.messages import ModelRequest, ModelSettings, Provider
from capreplay.models.task import ActTask, ReadTask, Study, StudyPage
from capreplay.runs.folder import run_dir, start_run
from capreplay.runs.registration import check_registration, load_registration, model_settings_data
from capreplay.runs.tasks_file import read_tasks_file
from capreplay.study.answers.prompt import build_request, empty_page_request
from capreplay.study.page.failures import PAGE_ERRORS, failure_text
from capreplay.study.page.frameworks import StudyAdapters
from capreplay.study.page.session import PageSession, page_session, study_browser
from capreplay.study.records import CallTokens, CallVerdict, Cell, PageFailureRecord, RunInfo, RunRecord, task_index
from capreplay.study.representations import REPRESENTATIONS, uses_stagehand
from capreplay.study.run.cells import CellRecords, ExecuteSummary, Sink, call_model, execute, plan_calls
from capreplay.study.run_files import (
    TASK_INDEX_FILE,
    ModelLines,
    RecordLog,
    keep_screenshot,
    page_failures_log,
    tokens_log,
)
from capreplay.study.tokens.calls import offline_tokens, with_api_counts
from capreplay.util.files import write_atomic

SessionHook = Callable[[StudyPage, PageSession], Awaitable[None]]
"""Called once a page session is open and before its calls are made (e.g. to audit or script answers)."""


class RunOptions(BaseModel):
    """What ``capreplay study run`` was asked to do."""

    registration: str = Field(description="The registration id the run is checked against.")
    run_id: str | None = Field(default=None, description="The run's folder name; default: the registration id.")
    results: Path = Field(default=Path("results"), description="Holds registrations/ and runs/.")
    base_url: str | None = Field(default=None, description="Endpoint root of the model API (not registered).")
    provider: Provider | None = Field(default=None, description="Must equal the registered provider if given.")
    pages: list[str] | None = Field(default=None, description="Only these page ids (default: every page).")
    repeats: int | None = Field(default=None, ge=1, description="Repeats instead of the protocol's.")


class RunResult(BaseModel):
    """What one invocation did."""

    run_id: str
    run_dir: Path
    summary: ExecuteSummary
    sessions: int = Field(description="Page sessions opened by this invocation.")
    page_failures: list[PageFailureRecord] = Field(
        default_factory=list, description="Page sessions that failed in this invocation."
    )


@dataclass(frozen=True)
class PreparedRun:
    """A study run checked and planned, before anything is called."""

    study: Study
    snapshot: Path
    settings: ModelSettings
    info: RunInfo
    folder: Path


def run_settings(registered: ModelSettings, options: RunOptions) -> ModelSettings:
    """The protocol's model settings with the command line's endpoint and provider applied."""
    data = registered.model_dump()
    if options.base_url is not None:
        data["base_url"] = options.base_url
    if options.provider is not None:
        data["provider"] = options.provider
    try:
        return ModelSettings.model_validate(data)
    except ValidationError as e:
        # Only the command line's overrides can break settings the tasks file already validated.
        given = [f"--provider {options.provider}"] * (options.provider is not None)
        given += [f"--base-url {options.base_url}"] * (options.base_url is not None)
        reason = validation_reason(e, "").removeprefix("Value error, ")
        raise UsageError(f"{' with '.join(given)}: the registered model settings do not fit it: {reason}") from e


def prepare(options: RunOptions) -> PreparedRun:
    """Check the registration, read its study, plan the run and write (or check) ``run.json``; nothing is called."""
    registration = load_registration(options.registration, options.results)
    tasks_path = Path(registration.tasks_file)
    data, tasks_file = read_tasks_file(tasks_path)
    study = tasks_file.study
    if study is None:
        raise InputError("the tasks file has no 'study' section", tasks_path)
    # The command line's own mistakes first: they need no input checked.
    known = [p.id for p in study.pages]
    pages = options.pages if options.pages is not None else known
    unknown = [p for p in pages if p not in known]
    if unknown:
        raise UsageError(f"--pages: no page {unknown[0]!r} in {tasks_path} (pages: {', '.join(known)})")
    run_id = options.run_id or registration.id
    folder = run_dir(options.results, run_id)
    settings = run_settings(study.protocol.model, options)
    check_registration(options.registration, results_dir=options.results, tasks_path=tasks_path, settings=settings)
    # The check read the file again: make sure the bytes this run uses are the ones it checked.
    if hashlib.sha256(data).hexdigest() != registration.inputs.tasks_sha256:
        raise InputError(f"tasks file changed since registration {registration.id}", tasks_path)
    protocol = study.protocol
    repeats = options.repeats or protocol.repeats
    tasks = [t for t in study.tasks if t.page in pages]
    plan = plan_calls(protocol.seed, repeats, pages, tasks, protocol.representations)
    info = RunInfo(run_id=run_id, registration=registration.id, created_at=datetime.now(UTC), seed=protocol.seed,
                   repeats=repeats, representations=list(protocol.representations),
                   model_settings=model_settings_data(settings), planned=plan)  # fmt: skip
    snapshot = tasks_file.snapshot_path(study.snapshot, tasks_path)
    return PreparedRun(study, snapshot, settings, info, folder)


def sessions_of(plan: Sequence[Cell]) -> list[list[Cell]]:
    """The plan cut into page sessions: consecutive cells of one (repeat, page)."""
    return [list(group) for _, group in itertools.groupby(plan, key=lambda c: (c.repeat, c.page))]


def _verdict(record: RunRecord, representable: bool | None) -> CallVerdict | None:
    """The verdict of a call that produced no answer to score, or None if it has one."""
    if record.error_kind is not None:
        return CallVerdict(correct=False, reason="error", detail=record.error, representable=representable)
    if record.unparseable is not None:
        return CallVerdict(correct=False, reason="unparseable", detail=record.unparseable, representable=representable)
    return None


class _SessionCalls:
    """Makes the calls of one page session: request, model, parse, score, token counts."""

    def __init__(self, study: Study, session: PageSession, client: ModelClient,
                 tokens: Sink[CallTokens], api_counts: bool, screenshot: str) -> None:  # fmt: skip
        self.study, self.session, self.client, self.tokens = study, session, client, tokens
        self.api_counts = api_counts
        self.screenshot = screenshot
        """The session's screenshot in the run folder, named in every verdict."""
        self.rendered = {name: REPRESENTATIONS[name].render(session.views) for name in study.protocol.representations}
        self.score_lock = asyncio.Lock()

    async def __call__(self, cell: Cell) -> RunRecord:
        task = self.study.task(cell.task)
        protocol = self.study.protocol
        full = build_request(protocol, task, cell.representation, self.rendered[cell.representation])
        empty = empty_page_request(protocol, task, cell.representation)
        record = await call_model(self.client, cell, full, protocol.answer_format(task, cell.representation))
        tokens = offline_tokens(cell, full, empty)
        if self.api_counts:
            tokens = await self._api_counts(tokens, full, empty, record)
        async with self.score_lock:
            verdict = await self._score(task, cell, record)
        self.tokens.append(tokens)
        return record.model_copy(update={"verdict": verdict})

    async def _api_counts(
        self, tokens: CallTokens, full: ModelRequest, empty: ModelRequest, record: RunRecord
    ) -> CallTokens:
        try:
            full_count = await self.client.count_tokens(full)
            empty_count = await self.client.count_tokens(empty)
        except ModelError as e:
            return tokens.model_copy(update={"api_error": e.message})
        if full_count is None or empty_count is None:
            return tokens
        billed = record.usage.input_tokens if record.usage is not None else None
        return with_api_counts(tokens, full_count, empty_count, billed)

    async def _score(self, task: ReadTask | ActTask, cell: Cell, record: RunRecord) -> CallVerdict:
        representation = REPRESENTATIONS[cell.representation]
        if isinstance(task, ActTask):
            representable = self.session.act_representability(task.id, representation).representable
        else:
            representable = self.session.read_representability(task.id, representation).representable
        geometry = self.session.act_geometry(task.id) if isinstance(task, ActTask) else None
        unscored = _verdict(record, representable)
        if unscored is not None:
            return unscored.model_copy(update={"screenshot": self.screenshot, "geometry": geometry})
        answer = record.answer or {}
        if isinstance(task, ActTask):
            scored, geometry = await self.session.place_act(task.id, representation, answer)
        else:
            scored = self.session.score_read(task.id, representation, answer.get("answer"))
        return CallVerdict(correct=scored.correct, reason=scored.reason, detail=scored.detail,
                           representable=scored.representable, screenshot=self.screenshot,
                           geometry=geometry)  # fmt: skip


class SessionRun:
    """One page session of a study run: the page opened once, its views read once, its cells called."""

    def __init__(self, study: Study, cells: Sequence[Cell], client: ModelClient, api_counts: bool,
                 on_session: SessionHook | None = None) -> None:  # fmt: skip
        self.study, self.cells, self.client = study, cells, client
        self.api_counts, self.on_session = api_counts, on_session
        self.page = next(p for p in study.pages if p.id == cells[0].page)
        self.opened = False
        """Whether the page was opened (a page that fails to load never is)."""

    async def run(self, context: BrowserContext, adapters: StudyAdapters, records: CellRecords,
                  tokens: Sink[CallTokens], keep: Callable[[bytes], str]) -> ExecuteSummary:  # fmt: skip
        """Open the page in ``context``, keep its screenshot (``keep`` names where), call every cell not in
        ``records``; a page that fails raises one of :data:`PAGE_ERRORS`."""
        page, study = self.page, self.study
        async with page_session(context, adapters, page.url, study.page_tasks(page.id),
                                settle_ms=page.settle_ms) as session:  # fmt: skip
            self.opened = True
            if self.on_session is not None:
                await self.on_session(page, session)
            shot = keep(session.views.screenshot_png)
            calls = _SessionCalls(study, session, self.client, tokens, self.api_counts, shot)
            return await execute(self.cells, calls, records, study.protocol.concurrency)


@dataclass
class Sessions:
    """A study run's open logs and what its page sessions share, for a :data:`SessionsRunner`."""

    run: PreparedRun
    client: ModelClient
    api_counts: bool
    api_key: str | None
    """The model key given to :func:`run_study` (None: the environment's)."""
    records: RecordLog
    tokens: ModelLines[CallTokens]
    failures: ModelLines[PageFailureRecord]
    total: ExecuteSummary
    opened: int = 0
    failed: list[PageFailureRecord] = field(default_factory=list)

    def page_failed(self, cells: Sequence[Cell], reason: str) -> None:
        """Keep the failure of a page session: its cells stay unrecorded, so a rerun retries them."""
        self.failed.append(page_failure(cells, self.records.finished, reason))
        self.failures.append(self.failed[-1])


SessionsRunner = Callable[[Sessions, list[list[Cell]]], Awaitable[None]]
"""Runs the page sessions (cells of one (repeat, page) each) into ``Sessions``' logs: on this machine
(:func:`local_sessions`) or elsewhere (``capreplay.cluster.study_sessions``)."""


def local_sessions(on_session: SessionHook | None = None) -> SessionsRunner:
    """The page sessions one after another in one browser on this machine, ``on_session`` called in each."""

    async def run(sessions: Sessions, todo: list[list[Cell]]) -> None:
        run, study = sessions.run, sessions.run.study
        chosen = [REPRESENTATIONS[name] for name in study.protocol.representations]
        async with study_browser(run.snapshot, stagehand=uses_stagehand(chosen)) as (context, adapters):
            for cells in todo:
                session = SessionRun(study, cells, sessions.client, sessions.api_counts, on_session)
                try:
                    done = await session.run(context, adapters, sessions.records, sessions.tokens,
                                             partial(keep_screenshot, run.folder))  # fmt: skip
                except PAGE_ERRORS as e:
                    sessions.opened += session.opened
                    # The page costs its own cells only, and the failure is kept with its reason.
                    sessions.page_failed(cells, failure_text(e))
                    continue
                sessions.opened += 1
                add_up(sessions.total, done)

    return run


async def run_study(options: RunOptions, *, on_session: SessionHook | None = None, api_key: str | None = None,
                    sessions: SessionsRunner | None = None) -> RunResult:  # fmt: skip
    """Run (or resume) the study the registration names; see the module docstring. ``sessions`` runs the page
    sessions (default: :func:`local_sessions` with ``on_session``)."""
    prepared = prepare(options)
    api_key = api_key or model_key("study", prepared.settings.provider, os.environ)
    if api_key is None and prepared.settings.provider == "anthropic":
        raise UsageError(f"no key for the study's model: set {key_help('study')}")
    # Made before anything is written: a missing key is refused with the run folder untouched.
    client = make_client(prepared.settings, api_key=api_key)
    # Anthropic's own count needs its API, so it is asked only of the Anthropic provider, with a key.
    api_counts = prepared.settings.provider == "anthropic" and bool(api_key)
    runner = sessions or local_sessions(on_session)
    try:
        info = start_run(prepared.folder, prepared.info, "a study run", "seed, tasks, settings or registration")
        index = task_index(prepared.study).model_dump_json(indent=1) + "\n"
        write_atomic(prepared.folder / TASK_INDEX_FILE, index.encode("utf-8"))
        total = ExecuteSummary(planned=len(info.planned), skipped=0, called=0, errors={}, unparseable=0)
        with RecordLog(prepared.folder) as records:
            todo = [s for s in sessions_of(info.planned) if any(c not in records.finished for c in s)]
            total.skipped = sum(c in records.finished for c in info.planned)
            done = Sessions(prepared, client, api_counts, api_key, records, tokens_log(prepared.folder),
                            page_failures_log(prepared.folder), total)  # fmt: skip
            try:
                if todo:
                    await runner(done, todo)
            finally:
                done.tokens.close()
                done.failures.close()
    finally:
        await client.aclose()
    return RunResult(run_id=info.run_id, run_dir=prepared.folder, summary=total, sessions=done.opened,
                     page_failures=done.failed)  # fmt: skip


def page_failure(cells: Sequence[Cell], finished: Collection[Cell], reason: str) -> PageFailureRecord:
    """The record of a page session that failed for ``reason``: its cells not yet recorded."""
    return PageFailureRecord(repeat=cells[0].repeat, page=cells[0].page, cells=[c for c in cells if c not in finished],
                             error=reason, at=datetime.now(UTC))  # fmt: skip


def add_up(total: ExecuteSummary, done: ExecuteSummary) -> None:
    """Add one page session's calls to the run's ``total``."""
    total.called += done.called
    total.unparseable += done.unparseable
    for kind, count in done.errors.items():
        total.errors[kind] = total.errors.get(kind, 0) + count
