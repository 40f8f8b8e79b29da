"""Read a filled review sheet back, strictly: every problem is one InputError naming the sheet and the line.

The sheet's form is a handful of line kinds; everything else in it is for the reader and is skipped:

    <!-- capreplay review sheet 1 -->            line 1, always
    Reviewer: <name>                              once, above the first task
    - Batch: <name>                               the header: which batch, where it is (relative to the
    - Batch folder: <path>                        sheet), the snapshot it was proven on and the sha256
    - Snapshot id: <id>                           of its tasks file
    - Tasks file sha256: <hex>
    ## Task <n>: <task id>                        starts a task's section; any other '## ' heading ends it
    - Task sha256: <hex>                          the task's JSON as reviewed
    - [ ] accept                                  the decision: tick one box with x
    - [ ] reject
    Reason: <text>                                may go on over the next lines, up to '---' or a heading

A task with neither box ticked (and no reason) is undecided, which is allowed. :func:`parse_sheet` checks the
form alone, so two reviewers' sheets can be compared without the batch; :func:`check_sheet` checks it
against the batch (its tasks, their hashes, the snapshot); :func:`read_sheet` does both for a file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from capreplay.errors import InputError, os_reason
from capreplay.models.workflow import ID_RE
from capreplay.tasks.review.batch_folder import ReviewBatch, read_batch

MARKER = "<!-- capreplay review sheet 1 -->"
REVIEWER = "Reviewer:"
KEY_BATCH = "- Batch:"
KEY_FOLDER = "- Batch folder:"
KEY_SNAPSHOT_ID = "- Snapshot id:"
KEY_TASKS_SHA = "- Tasks file sha256:"
KEY_TASK_SHA = "- Task sha256:"
HEADER_KEYS = (KEY_BATCH, KEY_FOLDER, KEY_SNAPSHOT_ID, KEY_TASKS_SHA)
ACCEPT_BOX = "- [{}] accept"
REJECT_BOX = "- [{}] reject"
REASON = "Reason:"

Verdict = Literal["accept", "reject"]

_TASK_HEADING = re.compile(r"## Task ([0-9]+): (\S+)")
_BOX_START = re.compile(r"\s*[-*+]\s*\[\s*\S?\s*\]")  # a tick box, right or wrong; not a link
_BOX = re.compile(r"- \[([ xX])\] (accept|reject)")
_SHA256 = re.compile(r"[0-9a-f]{64}")
_ID = re.compile(ID_RE)


def task_heading(number: int, task_id: str) -> str:
    """The heading that starts task ``task_id``'s section, the ``number``-th of the sheet."""
    return f"## Task {number}: {task_id}"


class SheetTask(BaseModel):
    """One task's section of a sheet: which task, which version of it, and what the reviewer decided."""

    model_config = ConfigDict(frozen=True)

    task: str
    line: int = Field(description="The line of its heading.")
    sha256: str
    sha_line: int
    verdict: Verdict | None = Field(description="None: undecided.")
    reason: str = Field(description="The reason as written, on one line; empty when none was given.")
    reason_line: int


class Sheet(BaseModel):
    """A review sheet as read: its header, its reviewer and every task's decision, with their lines."""

    model_config = ConfigDict(frozen=True)

    batch: str
    batch_folder: str = Field(description="The batch folder, relative to the sheet's folder.")
    snapshot_id: str
    tasks_sha256: str
    reviewer: str = Field(description="Empty when nobody signed the sheet (only allowed with nothing decided).")
    header_lines: dict[str, int] = Field(description="The line of each header key and of 'Reviewer:'.")
    tasks: list[SheetTask]
    last_line: int

    def task(self, task_id: str) -> SheetTask:
        """The section of ``task_id``; KeyError if there is none."""
        found = next((t for t in self.tasks if t.task == task_id), None)
        if found is None:
            raise KeyError(task_id)
        return found

    def decided(self, verdict: Verdict | None) -> list[str]:
        """The ids of the tasks with ``verdict`` (None: the undecided ones), in sheet order."""
        return [t.task for t in self.tasks if t.verdict == verdict]


@dataclass
class _Section:
    task: str
    line: int
    sha: tuple[str, int] | None = None
    boxes: dict[str, tuple[bool, int]] = field(default_factory=dict)
    reason_line: int = 0
    reason: list[str] = field(default_factory=list)


class _Reader:
    """The state of one pass over a sheet's lines."""

    def __init__(self, where: str | Path) -> None:
        self.where = where
        self.header: dict[str, tuple[str, int]] = {}
        self.sections: list[SheetTask] = []
        self.current: _Section | None = None
        self.first_task_line = 0
        self.in_reason = False

    def fail(self, number: int, message: str) -> InputError:
        return InputError(f"line {number}: {message}", self.where)

    def line(self, number: int, line: str) -> None:
        if line.startswith("#"):
            self.in_reason = False
            if line.startswith("## "):
                self.close()
                if line.startswith("## Task"):
                    self.open(number, line)
            return
        if self.in_reason:
            if line.strip() == "---":
                self.in_reason = False
                return
            if not _is_form(line):
                assert self.current is not None
                self.current.reason.append(line.strip())
                return
            self.in_reason = False
        if _BOX_START.match(line):
            self.box(number, line)
        elif line.startswith(REASON):
            section = self.inside(number, "a reason")
            if section.reason_line:
                raise self.fail(number, f"task {section.task!r} has a second 'Reason:' (first on line "
                                        f"{section.reason_line})")  # fmt: skip
            section.reason_line = number
            section.reason.append(line.removeprefix(REASON).strip())
            self.in_reason = True
        elif line.startswith(KEY_TASK_SHA):
            section = self.inside(number, "a task's sha256")
            value = line.removeprefix(KEY_TASK_SHA).strip()
            if not _SHA256.fullmatch(value):
                raise self.fail(number, f"task {section.task!r}'s sha256 is not 64 hex digits: {value!r}")
            if section.sha is not None:
                raise self.fail(number, f"task {section.task!r} has a second sha256 line (first on line "
                                        f"{section.sha[1]})")  # fmt: skip
            section.sha = (value, number)
        elif line.startswith(REVIEWER):
            self.header_line(number, REVIEWER, line)
        else:
            key = next((k for k in HEADER_KEYS if line == k or line.startswith(k + " ")), None)
            if key is not None:
                self.header_line(number, key, line)

    def header_line(self, number: int, key: str, line: str) -> None:
        if self.first_task_line:
            raise self.fail(number, f"{key!r} belongs in the header, above the first task (line "
                                    f"{self.first_task_line})")  # fmt: skip
        if key in self.header:
            raise self.fail(number, f"a second {key!r} line (first on line {self.header[key][1]})")
        self.header[key] = (line.removeprefix(key).strip(), number)

    def inside(self, number: int, what: str) -> _Section:
        if self.current is None:
            raise self.fail(number, f"{what} outside a task's section (they follow a '## Task N: id' heading)")
        return self.current

    def open(self, number: int, line: str) -> None:
        found = _TASK_HEADING.fullmatch(line)
        if found is None:
            raise self.fail(number, f"a task's heading is '## Task N: <task id>', not {line!r}")
        task_id = found[2]
        if not _ID.fullmatch(task_id):
            raise self.fail(number, f"{task_id!r} is not a task id")
        earlier = next((s.line for s in self.sections if s.task == task_id), None)
        if earlier is not None:
            raise self.fail(number, f"task {task_id!r} has a second section (first on line {earlier})")
        self.first_task_line = self.first_task_line or number
        self.current = _Section(task_id, number)

    def box(self, number: int, line: str) -> None:
        section = self.inside(number, "a decision box")
        found = _BOX.fullmatch(line)
        if found is None:
            raise self.fail(number, f"a decision box is '- [ ] accept' or '- [x] accept' (and so for reject), "
                                    f"nothing else on the line, not {line.strip()!r}")  # fmt: skip
        ticked, word = found[1] != " ", found[2]
        if word in section.boxes:
            raise self.fail(number, f"task {section.task!r} has a second {word} box (first on line "
                                    f"{section.boxes[word][1]})")  # fmt: skip
        section.boxes[word] = (ticked, number)

    def close(self) -> None:
        """Finish the open section: its form must be whole, and its decision one a person can stand by."""
        section, self.current, self.in_reason = self.current, None, False
        if section is None:
            return
        name = f"task {section.task!r}"
        lacks = [what for what, there in (("its '- Task sha256:' line", section.sha is not None),
                                          ("its '- [ ] accept' box", "accept" in section.boxes),
                                          ("its '- [ ] reject' box", "reject" in section.boxes),
                                          ("its 'Reason:' line", section.reason_line > 0)) if not there]  # fmt: skip
        if lacks:
            raise self.fail(section.line, f"{name} has no complete decision block: it lacks {lacks[0]}")
        assert section.sha is not None
        (accept, accept_line), (reject, reject_line) = section.boxes["accept"], section.boxes["reject"]
        reason = " ".join(part for part in section.reason if part)
        if accept and reject:
            raise self.fail(max(accept_line, reject_line), f"{name} has both accept and reject ticked: tick one")
        verdict: Verdict | None = "accept" if accept else "reject" if reject else None
        if verdict == "reject" and not reason:
            raise self.fail(section.reason_line, f"{name} is rejected without a reason: write it after 'Reason:'")
        if verdict is None and reason:
            raise self.fail(section.reason_line, f"{name} has a reason but neither box ticked: tick one, or clear "
                                                 "the reason to leave it undecided")  # fmt: skip
        self.sections.append(SheetTask(task=section.task, line=section.line, sha256=section.sha[0],
                                       sha_line=section.sha[1], verdict=verdict, reason=reason,
                                       reason_line=section.reason_line))  # fmt: skip


def _is_form(line: str) -> bool:
    """A line of the form, which ends a reason that runs over several lines."""
    return bool(_BOX_START.match(line)) or line.startswith((REASON, KEY_TASK_SHA, REVIEWER, *HEADER_KEYS))


def parse_sheet(text: str, where: str | Path) -> Sheet:
    """The sheet in ``text``, its form checked (not against a batch); any problem is an InputError naming a line."""
    # split on "\n" only, as editors count lines; a CRLF editor's "\r" is dropped with trailing spaces
    lines = [line.rstrip() for line in text.split("\n")]
    if lines[0].lstrip("\ufeff").strip() != MARKER:
        raise InputError(f"line 1: not a review sheet (its first line is {MARKER!r})", where)
    reader = _Reader(where)
    for number, line in enumerate(lines[1:], start=2):
        reader.line(number, line)
    reader.close()
    end = reader.first_task_line or len(lines)
    if not reader.sections:
        raise reader.fail(len(lines), "the sheet has no task section ('## Task N: <task id>')")
    for key in (REVIEWER, *HEADER_KEYS):
        if key not in reader.header:
            raise reader.fail(end, f"the header (above this line) has no {key!r} line")
    values = {key: value for key, (value, _) in reader.header.items()}
    lines_of = {key: number for key, (_, number) in reader.header.items()}
    for key, valid, what in ((KEY_BATCH, _ID.fullmatch, "a batch name"),
                             (KEY_FOLDER, bool, "a folder"),
                             (KEY_SNAPSHOT_ID, re.compile(r"\S+").fullmatch, "a snapshot id"),
                             (KEY_TASKS_SHA, _SHA256.fullmatch, "64 hex digits")):  # fmt: skip
        if not valid(values[key]):
            raise reader.fail(lines_of[key], f"{key!r} must be followed by {what}, not {values[key]!r}")
    sheet = Sheet(batch=values[KEY_BATCH], batch_folder=values[KEY_FOLDER], snapshot_id=values[KEY_SNAPSHOT_ID],
                  tasks_sha256=values[KEY_TASKS_SHA], reviewer=values[REVIEWER], header_lines=lines_of,
                  tasks=reader.sections, last_line=len(lines))  # fmt: skip
    if not sheet.reviewer and any(t.verdict is not None for t in sheet.tasks):
        raise reader.fail(lines_of[REVIEWER], "tasks are decided, but no reviewer is named: write your name after "
                                              "'Reviewer:'")  # fmt: skip
    return sheet


def check_sheet(sheet: Sheet, batch: ReviewBatch, where: str | Path) -> None:
    """An InputError naming the sheet's line if ``sheet`` is not of ``batch`` as it is now.

    The batch and snapshot must be those the sheet names, its sections exactly the proven tasks, and every task
    (and the tasks file) the bytes that were reviewed.
    """
    info = batch.info
    lines = sheet.header_lines
    if sheet.batch != info.batch:
        raise InputError(f"line {lines[KEY_BATCH]}: the sheet is of batch {sheet.batch!r}, but the folder it names "
                         f"holds batch {info.batch!r}", where)  # fmt: skip
    if sheet.snapshot_id != batch.snapshot_id:
        raise InputError(f"line {lines[KEY_SNAPSHOT_ID]}: the sheet is of snapshot {sheet.snapshot_id}, but the "
                         f"batch was made on {batch.snapshot_id}", where)  # fmt: skip
    for task in sheet.tasks:
        if task.task not in info.proven:
            raise InputError(f"line {task.line}: task {task.task!r} is not a proven task of batch {info.batch!r}",
                             where)  # fmt: skip
        now = batch.task_sha256(task.task)
        if task.sha256 != now:
            raise InputError(f"line {task.sha_line}: task {task.task!r} has changed since this sheet was written "
                             f"(its sha256 is now {now}); write a new sheet", where)  # fmt: skip
    reviewed = {t.task for t in sheet.tasks}
    missing = [task_id for task_id in info.proven if task_id not in reviewed]
    if missing:
        raise InputError(f"line {sheet.last_line}: the sheet has no section for proven task {missing[0]!r}", where)
    if sheet.tasks_sha256 != batch.tasks_sha256:
        raise InputError(f"line {lines[KEY_TASKS_SHA]}: the batch's tasks file has changed since this sheet was "
                         f"written (its sha256 is now {batch.tasks_sha256}); write a new sheet", where)  # fmt: skip


def read_sheet_text(path: Path) -> str:
    """The text of the sheet at ``path``; unreadable or not UTF-8 is an InputError."""
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise InputError("not a review sheet: not UTF-8 text", path) from e
    except OSError as e:
        raise InputError(f"cannot read: {os_reason(e)}", path) from e


@dataclass(frozen=True)
class ReviewedSheet:
    """A sheet read from a file and checked against the batch folder it names."""

    path: Path
    sheet: Sheet
    batch: ReviewBatch


def read_sheet(path: Path) -> ReviewedSheet:
    """The sheet at ``path``, its form checked, and checked against its batch (see :func:`check_sheet`)."""
    return review_text(read_sheet_text(path), path)


def review_text(text: str, path: Path) -> ReviewedSheet:
    """``text`` as the sheet at ``path`` (its batch folder named relative to it), checked as :func:`read_sheet`
    checks a file: for a sheet's new text before it is written."""
    sheet = parse_sheet(text, path)
    folder = path.parent / sheet.batch_folder
    if not folder.is_dir():
        raise InputError(f"line {sheet.header_lines[KEY_FOLDER]}: the batch folder {sheet.batch_folder!r} (relative "
                         "to the sheet) is not there", path)  # fmt: skip
    batch = read_batch(folder)
    check_sheet(sheet, batch, path)
    return ReviewedSheet(path, sheet, batch)
