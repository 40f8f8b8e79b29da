"""A study run's cells: the call plan, one model call made into a record, and an executor that resumes.

A cell is one model call: (repeat, page, task, representation). :func:`plan_calls` orders them: the pages
in a seeded random order per repeat, and the calls of one page session shuffled. A run lives in
``results/runs/<run_id>/``: ``run.json`` (registration id, seed, the full planned order), written once, and
``calls.jsonl`` (:mod:`capreplay.study.run_files`), one record per call. Rerunning skips every recorded cell
(a failed call is recorded too, and never retried) and calls only the rest.
"""

from __future__ import annotations

import time
from collections import Counter, deque
from collections.abc import Awaitable, Callable, Collection, Sequence
from datetime import UTC, datetime
from typing import Protocol

from pydantic import BaseModel, Field

from capreplay.errors import ModelError, UsageError
from capreplay.llm.cache import cache_key
from capreplay.llm.client import ModelClient
from capreplay.llm.messages import ModelRequest
from capreplay.models.task import ActTask, AnswerFormat, ReadTask, Representation
from capreplay.runs.order import seeded_plan
from capreplay.runs.workers import run_workers
from capreplay.study.answers.prompt import Unparseable, parse_answer
from capreplay.study.records import Cell, RunRecord
from capreplay.util.once import given_once


def plan_calls(
    seed: int,
    repeats: int,
    pages: Sequence[str],
    tasks: Sequence[ReadTask | ActTask],
    representations: Sequence[Representation],
) -> list[Cell]:
    """Every cell once, in run order: per repeat, the pages in a seeded random order, each page's calls shuffled.

    The same arguments always give the same order. Pages without tasks have no calls. A task on a page not in
    ``pages``, or a page, task or representation listed twice, is a ``UsageError``.
    """
    given_once(pages, "page")
    given_once((t.id for t in tasks), "task")
    given_once(representations, "representation")
    unknown = [t.id for t in tasks if t.page not in pages]
    if unknown:
        raise UsageError(f"task {unknown[0]!r} is on a page that is not planned")

    def session(repeat: int, page: str) -> list[Cell]:
        return [Cell(repeat=repeat, page=page, task=t.id, representation=r)
                for t in tasks if t.page == page for r in representations]  # fmt: skip

    return seeded_plan(seed, repeats, pages, session, shuffle_cells=True)


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


class Sink[T](Protocol):
    """Where lines go as they are made: a log file, or a list a Ray task hands back to its driver."""

    def append(self, item: T, /) -> None: ...


class CellRecords(Sink[RunRecord], Protocol):
    """The records of a run's cells: those recorded before, and where new ones go (``calls.jsonl``)."""

    @property
    def finished(self) -> Collection[Cell]: ...


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
    records: CellRecords,
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

    await run_workers(min(concurrency, len(todo)), worker)
    return ExecuteSummary(
        planned=len(plan), skipped=skipped, called=len(plan) - skipped, errors=dict(errors), unparseable=unparseable
    )
