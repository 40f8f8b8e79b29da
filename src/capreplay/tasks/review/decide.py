"""Write one decision into a review sheet's text: a task's two boxes, its reason, and the sheet's reviewer.

:func:`decide` is pure, text in and text out. It edits only the lines of the form it must (the task's
``- [ ] accept`` and ``- [ ] reject`` boxes, its ``Reason:`` and the ``Reviewer:`` line) and leaves every other
line as it was, CRLF line ends and a byte order mark included. A decision a person could not stand by is
refused with the rule it breaks, as :mod:`capreplay.tasks.review.parse` would refuse the file: a reject needs a
reason, a reason needs a verdict, a decision needs a reviewer. A sheet another reviewer has decided tasks on is
not signed over to a new name, since that would put the earlier decisions under it. The new text is then read
back with :func:`~capreplay.tasks.review.parse.parse_sheet`, and must hold exactly the decision asked for and
every other task's decision unchanged.
"""

from __future__ import annotations

import re
from pathlib import Path

from capreplay.errors import InputError
from capreplay.tasks.review.parse import (
    ACCEPT_BOX,
    HEADER_KEYS,
    KEY_TASK_SHA,
    REASON,
    REJECT_BOX,
    REVIEWER,
    Sheet,
    Verdict,
    parse_sheet,
)

_TICKS = " xX"
_BOX_START = re.compile(r"\s*[-*+]\s*\[\s*\S?\s*\]")
"""A line that starts a tick box, right or wrong: it ends a reason running over several lines, as parse reads it."""


def one_line(text: str) -> str:
    """``text`` with every run of whitespace (newlines too) one space: a reason or a name is one line of the sheet."""
    return " ".join(text.split())


def _set(lines: list[str], index: int, content: str) -> None:
    """Line ``index`` becomes ``content``, keeping the line's CR if it had one (a sheet saved with CRLF)."""
    lines[index] = content + ("\r" if lines[index].endswith("\r") else "")


def _section(lines: list[str], heading_line: int) -> range:
    """The indexes of a task's section: from its heading to the next ``## `` heading, or the end."""
    start = heading_line - 1
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    return range(start, end)


def _box(lines: list[str], span: range, box: str) -> int:
    """The index of the section's ``box`` line (``ACCEPT_BOX`` or ``REJECT_BOX``), ticked or not."""
    forms = {box.format(tick) for tick in _TICKS}
    return next(i for i in span if lines[i].rstrip() in forms)


def _ends_reason(line: str) -> bool:
    """A line a reason cannot run on into: a separator, a heading, or a line of the form."""
    return (line.strip() == "---" or line.startswith("#") or bool(_BOX_START.match(line))
            or line.startswith((REASON, KEY_TASK_SHA, REVIEWER, *HEADER_KEYS)))  # fmt: skip


def _refuse(sheet: Sheet, task_id: str, verdict: Verdict | None, reason: str, reviewer: str, where: str | Path) -> None:
    """An InputError naming the rule a decision breaks; nothing when it breaks none."""
    name = f"task {task_id!r}"
    if verdict == "reject" and not reason:
        raise InputError(f"{name}: a reject needs a reason: say why the task should not be kept", where)
    if verdict is None and reason:
        raise InputError(f"{name}: a reason but neither accept nor reject: choose one, or clear the reason to "
                         "leave the task undecided", where)  # fmt: skip
    signer = reviewer or sheet.reviewer
    if verdict is not None and not signer:
        raise InputError(f"{name}: no reviewer: write your name as the sheet's reviewer", where)
    others = [t.task for t in sheet.tasks if t.task != task_id and t.verdict is not None]
    if reviewer and sheet.reviewer and reviewer != sheet.reviewer and others:
        raise InputError(f"the sheet is signed by {sheet.reviewer!r}, who decided {len(others)} other task(s) on it; "
                         f"a second reviewer writes a sheet of their own (capreplay tasks review BATCH -o "
                         "OTHER.md)", where)  # fmt: skip


def decide(text: str, task_id: str, verdict: Verdict | None, reason: str, reviewer: str,
           *, where: str | Path = "review sheet") -> str:  # fmt: skip
    """``text`` with ``task_id`` decided: ``verdict`` ticked (None: both boxes cleared), ``reason`` written,
    and the sheet signed by ``reviewer`` (an empty name keeps the sheet's own).

    The reason and the name are written on one line each (their whitespace runs made one space). A sheet
    that does not parse, a task it does not hold, or a decision that breaks a rule is an InputError naming
    ``where``, and nothing is returned.
    """
    sheet = parse_sheet(text, where)
    try:
        task = sheet.task(task_id)
    except KeyError:
        raise InputError(f"has no task {task_id!r}", where) from None
    reason, reviewer = one_line(reason), one_line(reviewer)
    _refuse(sheet, task_id, verdict, reason, reviewer, where)

    lines = text.split("\n")
    span = _section(lines, task.line)
    _set(lines, _box(lines, span, ACCEPT_BOX), ACCEPT_BOX.format("x" if verdict == "accept" else " "))
    _set(lines, _box(lines, span, REJECT_BOX), REJECT_BOX.format("x" if verdict == "reject" else " "))
    at = task.reason_line - 1
    _set(lines, at, f"{REASON} {reason}" if reason else REASON)
    end = next((i for i in range(at + 1, span.stop) if _ends_reason(lines[i])), span.stop)
    if end > at + 1:
        # the reason is one line now: what it ran on over goes, and one blank line stays before what follows
        lines[at + 1 : end] = ["\r" if lines[at].endswith("\r") else ""]
    if reviewer:
        _set(lines, sheet.header_lines[REVIEWER] - 1, f"{REVIEWER} {reviewer}")
    new = "\n".join(lines)

    after = parse_sheet(new, where)
    wanted = [(t.task, verdict, reason) if t.task == task_id else (t.task, t.verdict, t.reason) for t in sheet.tasks]
    got = [(t.task, t.verdict, t.reason) for t in after.tasks]
    if got != wanted or after.reviewer != (reviewer or sheet.reviewer):
        raise InputError(f"task {task_id!r}: the decision did not read back as written; edit the file by hand", where)
    return new
