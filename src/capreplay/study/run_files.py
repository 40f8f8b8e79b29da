"""The files of a study run folder: ``calls.jsonl`` (one record per model call), ``tokens.jsonl``, the task index,
and ``screenshots/`` (each page session's screenshot, named by its content).

Each line is flushed and fsynced as it is written (:class:`capreplay.runs.log.AppendLog`); a rerun reads the
records back and skips every recorded cell. A last line cut short by a crash is ignored, reported and cut
off before appending; any other damaged line stops the run.
"""

from __future__ import annotations

import hashlib
import logging
from datetime import datetime
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from capreplay.errors import CapreplayError, InputError, OutputError, os_reason, validation_reason
from capreplay.runs.log import AppendLog, LineFile, LinesRead, read_lines
from capreplay.study.records import CallTokens, Cell, PageFailureRecord, RunRecord
from capreplay.util.files import write_atomic

log = logging.getLogger(__name__)

CALLS_FILE = "calls.jsonl"
TOKENS_FILE = "tokens.jsonl"
"""One :class:`CallTokens` per call, appended just before the call's record."""
PAGE_FAILURES_FILE = "page_failures.jsonl"
"""One :class:`PageFailureRecord` per page session that failed; its cells are retried by a rerun."""
TASK_INDEX_FILE = "task_index.json"
"""The run's tasks (:class:`TaskIndex`), written when it starts, so the folder can be reported on its own."""
SCREENSHOTS_DIR = "screenshots"
"""Each page session's screenshot, ``<first 16 hex digits of its sha256>.png``: the picture the screenshot
representation showed, on which the viewer draws where ACT answers landed. Named by content, so the repeats of a
page that rendered the same keep one file."""


def screenshot_name(png: bytes) -> str:
    """Where a page session's screenshot is kept, relative to the run folder (named by its content)."""
    return f"{SCREENSHOTS_DIR}/{hashlib.sha256(png).hexdigest()[:16]}.png"


def keep_screenshot(run_dir: Path, png: bytes) -> str:
    """Write a page session's screenshot into the run folder (once per content); its path relative to the folder."""
    name = screenshot_name(png)
    path = run_dir / name
    if not path.is_file():
        try:
            path.parent.mkdir(exist_ok=True)
        except OSError as e:
            raise OutputError(f"cannot write: {os_reason(e)}", path.parent) from e
        write_atomic(path, png)
    return name


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


class ModelLines[M: BaseModel](LineFile):
    """A run's file of JSON lines where a later line may repeat an earlier one's key (the last one wins, or all
    are kept): opened for appending, a last line cut short by a crash cut off first."""

    def __init__(self, path: Path, what: str) -> None:
        try:
            data = path.read_bytes() if path.exists() else b""
        except OSError as e:
            raise CapreplayError(f"cannot read: {os_reason(e)}", path) from e
        self._what = what
        super().__init__(path, data.rfind(b"\n") + 1)

    def append(self, line: M) -> None:
        """Write one line and make it durable."""
        self.write_line(line.model_dump_json().encode("utf-8"), self._what)


def tokens_log(run_dir: Path) -> ModelLines[CallTokens]:
    """``tokens.jsonl`` opened for appending: one :class:`CallTokens` per call, the last of a cell wins."""
    return ModelLines[CallTokens](run_dir / TOKENS_FILE, "token counts")


def page_failures_log(run_dir: Path) -> ModelLines[PageFailureRecord]:
    """``page_failures.jsonl`` opened for appending: every attempt that failed stays on record."""
    return ModelLines[PageFailureRecord](run_dir / PAGE_FAILURES_FILE, "a page failure")


def read_tokens(run_dir: Path) -> dict[Cell, CallTokens]:
    """The token counts of a run by cell (the last line of a cell wins); an unfinished last line is ignored."""
    path = run_dir / TOKENS_FILE
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return {}
    except OSError as e:
        raise InputError(f"cannot read: {os_reason(e)}", path) from e
    found: dict[Cell, CallTokens] = {}
    for number, line in enumerate(data[: data.rfind(b"\n") + 1].split(b"\n")[:-1], start=1):
        try:
            tokens = CallTokens.model_validate_json(line)
        except ValidationError as e:
            raise InputError(f"line {number} is not a token count: {validation_reason(e)}", path) from e
        found[tokens.cell] = tokens
    return found


def _attempt(failure: PageFailureRecord) -> tuple[int, str, datetime]:
    return failure.repeat, failure.page, failure.at


def read_page_failures(run_dir: Path) -> list[PageFailureRecord]:
    """Every page session of the run that failed, oldest first (an unfinished last line is ignored)."""
    return read_lines(run_dir / PAGE_FAILURES_FILE, PageFailureRecord, _attempt, "page failure").records
