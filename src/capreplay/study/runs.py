"""Study runs: the call plan, append-only run records, and an executor that resumes and never calls a cell twice.

A cell is one model call: (repeat, page, task, representation). :func:`plan_calls` orders them: the pages
in a seeded random order per repeat, and the calls of one page session shuffled. A run lives in
``results/runs/<run_id>/``: ``run.json`` (registration id, seed, the full planned order), written once, and
``calls.jsonl``, one :class:`RunRecord` per call, each line flushed and fsynced as it is written. Rerunning
reads the records back, skips every recorded cell (a failed call is recorded too, and never retried) and
calls only the rest. A last line cut short by a crash is ignored, reported and cut off before appending;
any other damaged line stops the run.
"""

from __future__ import annotations

import asyncio
import logging
import random
import re
import time
from collections import Counter, deque
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, ValidationError

from capreplay.archive.writer import write_atomic
from capreplay.errors import InputError, ModelError, ModelErrorKind, UsageError
from capreplay.llm.cache import cache_key
from capreplay.llm.client import ModelClient
from capreplay.llm.models import ModelRequest, Usage
from capreplay.models.registration import ID_PATTERN
from capreplay.models.task import ActTask, AnswerFormat, ReadTask, Representation
from capreplay.runlog import AppendLog, LinesRead, read_lines
from capreplay.study.prompt import Unparseable, parse_answer

log = logging.getLogger(__name__)

RUNS = "runs"
"""The folder under the results folder that holds runs."""
RUN_FILE = "run.json"
CALLS_FILE = "calls.jsonl"


class Cell(BaseModel):
    """One model call of a run."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    repeat: int = Field(ge=0, description="Which repeat, from 0.")
    page: str = Field(description="The page id.")
    task: str = Field(description="The task id.")
    representation: Representation

    def key(self) -> str:
        """A readable unique name: ``<repeat>/<page>/<task>/<representation>``."""
        return f"{self.repeat}/{self.page}/{self.task}/{self.representation}"


def plan_calls(
    seed: int,
    repeats: int,
    pages: Sequence[str],
    tasks: Sequence[ReadTask | ActTask],
    representations: Sequence[Representation],
) -> list[Cell]:
    """Every cell once, in run order: per repeat, the pages in a seeded random order, each page's calls shuffled.

    The same arguments always give the same order. Pages without tasks have no calls. A task on a page not in
    ``pages``, or a page, task or representation listed twice, is a ValueError.
    """
    for values, what in ((pages, "page"), ([t.id for t in tasks], "task"), (representations, "representation")):
        if len(set(values)) != len(values):
            raise ValueError(f"a {what} is listed twice")
    unknown = [t.id for t in tasks if t.page not in pages]
    if unknown:
        raise ValueError(f"task {unknown[0]!r} is on a page that is not planned")
    rng = random.Random(seed)
    plan: list[Cell] = []
    for repeat in range(repeats):
        order = list(pages)
        rng.shuffle(order)
        for page in order:
            session = [
                Cell(repeat=repeat, page=page, task=t.id, representation=r)
                for t in tasks
                if t.page == page
                for r in representations
            ]
            rng.shuffle(session)
            plan.extend(session)
    return plan


# ---------------------------------------------------------------------------------------------- records


class Verdict(BaseModel):
    """How the scorer judged a call; absent until the run is scored."""

    model_config = ConfigDict(extra="forbid")

    correct: bool = Field(description="Whether the answer scored correct.")
    reason: str | None = Field(
        default=None, description="Why not correct: wrong, not representable, unparseable, error, ..."
    )
    detail: str | None = Field(default=None, description="The underlying cause, for audit.")
    representable: bool | None = Field(
        default=None, description="Whether the task was representable (None: not decided)."
    )


class RunRecord(BaseModel):
    """One model call of a run, as one line of ``calls.jsonl``."""

    model_config = ConfigDict(extra="forbid")

    cell: Cell
    request_sha256: str = Field(description="The response-cache key of the request (settings and whole request).")
    started_at: AwareDatetime = Field(description="When the call was sent.")
    latency_s: float = Field(description="Seconds the call took (of the original call if it was answered from cache).")
    answer_text: str | None = Field(default=None, description="The model's reply as sent; None if the call failed.")
    answer: dict[str, Any] | None = Field(default=None, description="The parsed answer; None if unparseable or failed.")
    unparseable: str | None = Field(
        default=None, description="Why the reply holds no answer of the format, if it does not."
    )
    usage: Usage | None = Field(default=None, description="Tokens billed, as the provider reported them.")
    stop_reason: str | None = None
    model: str | None = Field(default=None, description="The model that answered, as the response names it.")
    request_id: str | None = Field(default=None, description="The provider's id of the request.")
    cached: bool = Field(default=False, description="Answered from the response cache.")
    error_kind: ModelErrorKind | None = Field(default=None, description="Why the call failed; None if it did not.")
    error: str | None = Field(default=None, description="The failure in one line.")
    verdict: Verdict | None = Field(default=None, description="Filled in by the scorer.")


class RunInfo(BaseModel):
    """``run.json``: what a run was planned with, written once when it starts."""

    model_config = ConfigDict(extra="forbid")

    run_id: str
    registration: str | None = Field(description="The registration the run was checked against.")
    created_at: AwareDatetime
    seed: int
    repeats: int
    representations: list[Representation]
    model_settings: dict[str, Any] = Field(description="The model settings of every call (endpoint left out).")
    planned: list[Cell] = Field(description="Every cell, in the order the run calls them.")

    def same_plan(self, other: RunInfo) -> bool:
        """Whether ``other`` plans the same run (everything but the creation time equal)."""
        return self.model_dump(exclude={"created_at"}) == other.model_dump(exclude={"created_at"})


def start_run(run_dir: Path, info: RunInfo) -> RunInfo:
    """Write ``run.json`` for a new run, or check that a resumed run was planned the same; returns the stored info."""
    path = run_dir / RUN_FILE
    if path.exists():
        try:
            stored = RunInfo.model_validate_json(path.read_bytes())
        except OSError as e:
            raise InputError(f"cannot read: {e.strerror or e}", path) from e
        except ValidationError as e:
            first = e.errors()[0]
            raise InputError(f"not a valid run.json: {'.'.join(map(str, first['loc']))}: {first['msg']}", path) from e
        if not stored.same_plan(info):
            raise InputError("this run was started with another plan (seed, tasks, settings or registration)", path)
        return stored
    run_dir.mkdir(parents=True, exist_ok=True)
    write_atomic(path, (info.model_dump_json(indent=1) + "\n").encode("utf-8"))
    return info


def _cell_key(record: RunRecord) -> Cell:
    return record.cell


def _cell_name(cell: Cell) -> str:
    return f"cell {cell.key()}"


RecordsRead = LinesRead[RunRecord]
"""What a ``calls.jsonl`` holds: its complete records, and an unfinished last line if a crash left one."""


def read_records(path: Path) -> RecordsRead:
    """The records of ``path`` (none if it does not exist). A damaged complete line, or a cell recorded twice,
    is an ``InputError`` naming the line: only the last line can be cut short by a crash."""
    return read_lines(path, RunRecord, _cell_key, "run record", _cell_name)


class Finished(BaseModel):
    """The cells a run has already called, and what was ignored at the end of its records."""

    model_config = ConfigDict(frozen=True)

    cells: frozenset[Cell]
    torn_tail: bytes = Field(
        default=b"", description="An unfinished last line left by a crash, ignored (empty if none)."
    )


def finished_cells(run_dir: Path) -> Finished:
    """The cells recorded in ``run_dir/calls.jsonl``; an unfinished last line is ignored and reported."""
    read = read_records(run_dir / CALLS_FILE)
    if read.torn_tail:
        log.warning(
            "%s: ignoring an unfinished last line (%d bytes) left by a crash", run_dir / CALLS_FILE, len(read.torn_tail)
        )
    return Finished(cells=frozenset(r.cell for r in read.records), torn_tail=read.torn_tail)


class RecordLog(AppendLog[RunRecord, Cell]):
    """``calls.jsonl`` opened for appending: one line per record, flushed and fsynced before ``append`` returns."""

    def __init__(self, run_dir: Path) -> None:
        """Read what the run has recorded, cut off an unfinished last line, and open the file for appending."""
        super().__init__(run_dir / CALLS_FILE, RunRecord, _cell_key, "run record", _cell_name)


# ---------------------------------------------------------------------------------------------- calls


async def call_model(client: ModelClient, cell: Cell, request: ModelRequest, answer_format: AnswerFormat) -> RunRecord:
    """Send ``request`` once and record the answer, parsed against ``answer_format``; a failed call is recorded too."""
    started = datetime.now(UTC)
    clock = time.monotonic()
    key = cache_key("complete", client.settings, request)
    try:
        result = await client.complete(request)
    except ModelError as e:
        return RunRecord(
            cell=cell,
            request_sha256=key,
            started_at=started,
            latency_s=time.monotonic() - clock,
            error_kind=e.kind,
            error=e.message,
            request_id=e.request_id,
        )
    parsed = parse_answer(result.text, answer_format)
    return RunRecord(
        cell=cell,
        request_sha256=key,
        started_at=started,
        latency_s=result.latency_s,
        answer_text=result.text,
        answer=None if isinstance(parsed, Unparseable) else parsed,
        unparseable=parsed.reason if isinstance(parsed, Unparseable) else None,
        usage=result.usage,
        stop_reason=result.stop_reason,
        model=result.model,
        request_id=result.request_id,
        cached=result.cached,
    )


class ExecuteSummary(BaseModel):
    """What one :func:`execute` did."""

    planned: int = Field(description="Cells in the plan.")
    skipped: int = Field(description="Cells already recorded before this execution, not called again.")
    called: int = Field(description="Cells called and recorded now.")
    errors: dict[str, int] = Field(description="Failed calls by error kind; they count apart from wrong answers.")
    unparseable: int = Field(description="Answered calls whose reply held no answer of the format.")


async def execute(
    plan: Sequence[Cell],
    call: Callable[[Cell], Awaitable[RunRecord]],
    records: RecordLog,
    concurrency: int,
) -> ExecuteSummary:
    """Call every cell of ``plan`` not yet in ``records``, in plan order, at most ``concurrency`` at once.

    Each record is appended as soon as its call returns. Nothing is retried: a failed call is a record with
    its ``error_kind``, counted apart. An exception from ``call`` stops the run (calls in flight are
    cancelled and not recorded, so a rerun makes them) and is raised.
    """
    if concurrency < 1:
        raise ValueError("concurrency must be at least 1")
    if len(set(plan)) != len(plan):
        raise ValueError("the plan lists a cell twice")
    todo = deque(cell for cell in plan if cell not in records.finished)
    skipped = len(plan) - len(todo)
    errors: Counter[str] = Counter()
    unparseable = 0

    async def worker() -> None:
        nonlocal unparseable
        while todo:
            cell = todo.popleft()
            record = await call(cell)
            if record.cell != cell:
                raise ValueError(f"the call for {cell.key()} returned the record of {record.cell.key()}")
            records.append(record)
            if record.error_kind is not None:
                errors[record.error_kind] += 1
            elif record.unparseable is not None:
                unparseable += 1

    try:
        async with asyncio.TaskGroup() as group:
            for _ in range(min(concurrency, len(todo))):
                group.create_task(worker())
    except ExceptionGroup as e:
        # Raise what went wrong, not the group: with one failing worker the others were only cancelled.
        raise e.exceptions[0] from e
    return ExecuteSummary(
        planned=len(plan), skipped=skipped, called=len(plan) - skipped, errors=dict(errors), unparseable=unparseable
    )


def run_dir(results_dir: Path, run_id: str) -> Path:
    """The folder of run ``run_id``; an id that is not a plain file name is a ``UsageError``."""
    if not re.fullmatch(ID_PATTERN, run_id):
        raise UsageError(f"run id {run_id!r} must be letters, digits, '.', '_' or '-' (not starting with '.')")
    return results_dir / RUNS / run_id
