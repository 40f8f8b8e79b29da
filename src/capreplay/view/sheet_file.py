"""A review sheet's file as the viewer reads it and writes a decision into it.

:func:`write_decision` is the one write the viewer makes. It re-reads the file, refuses to go on when the file
is not the bytes the page was made from (someone edited it in between: 409), edits the decision in with
:func:`capreplay.tasks.review.decide.decide`, checks the new text as ``capreplay tasks accept`` checks a sheet
(the form's rules, and that it still matches its batch folder), and only then replaces the file atomically. A
decision that fails a check is refused with its one line (422) and nothing is written.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from capreplay.errors import CapreplayError, InputError, os_reason
from capreplay.tasks.review.decide import decide
from capreplay.tasks.review.parse import ReviewedSheet, Verdict, review_text
from capreplay.util.files import write_atomic
from capreplay.view.sheet_page import decided_summary, decision_badge, decision_state

STALE = ("the sheet changed on disk since this page was made, so nothing was written; the page now shows the sheet "
         "as it is: decide again")  # fmt: skip
VERDICTS: dict[str, Verdict | None] = {"accept": "accept", "reject": "reject", "": None}
"""The verdicts a form may send; empty leaves the task undecided."""


def sha256(data: bytes) -> str:
    """The hex sha256 of ``data``: what a decision form carries to say which bytes of the sheet it was made on."""
    return hashlib.sha256(data).hexdigest()


def read_bytes(path: Path) -> bytes:
    """The file's bytes; an unreadable file is an InputError naming it."""
    try:
        return path.read_bytes()
    except OSError as e:
        raise InputError(f"cannot read: {os_reason(e)}", path) from e


def read_reviewed(data: bytes, path: Path) -> ReviewedSheet:
    """The sheet ``data`` (the bytes of, or for, the file at ``path``), checked as ``capreplay tasks accept`` checks
    a sheet: its form, then against the batch folder it names, as
    :func:`capreplay.tasks.review.parse.read_sheet` does for the bytes on disk."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputError("not a review sheet: not UTF-8 text", path) from e
    return review_text(text, path)


@dataclass(frozen=True)
class Decision:
    """What a decision form sent."""

    task: str
    verdict: Verdict | None
    reason: str
    reviewer: str
    sha256: str
    """sha256 of the sheet's bytes the page showing the form was made from."""


def decision_of(form: Mapping[str, list[str]]) -> Decision | str:
    """The decision a form sent (each field with its values), or the one line that says what is wrong with it."""
    fields: dict[str, str] = {}
    for name in ("task", "verdict", "reason", "reviewer", "sha256"):
        values = form.get(name, [])
        if len(values) > 1:
            return f"the form sent {name!r} {len(values)} times"
        fields[name] = values[0] if values else ""
    if not fields["task"]:
        return "the form names no task"
    if fields["verdict"] not in VERDICTS:
        return f"the verdict is accept, reject or empty (undecided), not {fields['verdict']!r}"
    if len(fields["sha256"]) != 64:
        return "the form does not carry the sheet's sha256: reload the page"
    return Decision(fields["task"], VERDICTS[fields["verdict"]], fields["reason"], fields["reviewer"], fields["sha256"])


@dataclass(frozen=True)
class Outcome:
    """What became of a decision: ``status`` 200 (written), 400 (a bad form), 409 (the sheet changed on disk),
    422 (a check refused it) or 500 (the file could not be read or written)."""

    status: int
    message: str
    """What was written, or why nothing was."""
    sha256: str = ""
    """The sheet's new sha256, once written."""
    reviewed: ReviewedSheet | None = None
    """The sheet as written."""

    def payload(self, task: str) -> dict[str, Any]:
        """The answer to a script: the new decision's HTML for the page, or the error."""
        if self.reviewed is None:
            return {"ok": False, "status": self.status, "error": self.message}
        sheet = self.reviewed.sheet
        decided = sheet.task(task)
        return {"ok": True, "task": task, "verdict": decided.verdict, "reason": decided.reason,
                "reviewer": sheet.reviewer, "sha256": self.sha256, "message": self.message,
                "badge": decision_badge(decided), "state": decision_state(decided, sheet.reviewer),
                "decided": decided_summary(sheet)}  # fmt: skip


def _said(error: CapreplayError, path: Path) -> str:
    """The error's line, without the sheet's path when it is about the sheet (the page names it already)."""
    return error.message if error.where == str(path) else error.line()


def write_decision(path: Path, decision: Decision) -> Outcome:
    """Write ``decision`` into the sheet at ``path`` if the file is still the bytes it was made on and the result
    passes the sheet's checks; otherwise write nothing and say why."""
    try:
        data = read_bytes(path)
    except InputError as e:
        return Outcome(500, _said(e, path))
    if sha256(data) != decision.sha256:
        return Outcome(409, STALE)
    try:
        text = data.decode("utf-8")
        new = decide(text, decision.task, decision.verdict, decision.reason, decision.reviewer, where=path)
        encoded = new.encode("utf-8")
        reviewed = read_reviewed(encoded, path)
    except UnicodeDecodeError:
        return Outcome(422, "not a review sheet: not UTF-8 text")
    except InputError as e:
        return Outcome(422, _said(e, path))
    try:
        write_atomic(path, encoded)
    except CapreplayError as e:
        return Outcome(500, _said(e, path))
    verdict = {"accept": "accepted", "reject": "rejected", None: "left undecided"}[decision.verdict]
    return Outcome(200, f"Saved: task {decision.task} {verdict}, in {path.name}.", sha256(encoded), reviewed)
