"""Write a batch's review sheet: one Markdown file a person reads on GitHub or in an editor and fills by hand.

The sheet shows, for every proven task, what a reviewer needs to judge it without opening JSON: the
description, flow, sites, covered points with their taxonomy names, the expected outputs next to the gold
answer, the gold path one step a line, the pages it reached with the gold run's screenshots (linked where
they lie in ``proof-run/``, relative to the sheet: nothing is copied), and the proof's checks. Each section
ends in the decision block :mod:`capreplay.tasks.review.parse` reads back. The machine-read lines (the
header's keys, each task's heading and sha256) name the batch's exact bytes, so a sheet of other tasks is
refused when it comes back.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote

from capreplay.errors import InputError
from capreplay.models.episode import EpisodeRecord
from capreplay.models.workflow import GoldStep, Read, WorkflowTask
from capreplay.tasks.generation import TaskProof
from capreplay.tasks.review.batch_folder import PROOF_RUN, BatchEvidence, ReviewBatch, read_batch, read_evidence
from capreplay.tasks.review.parse import (
    ACCEPT_BOX,
    KEY_BATCH,
    KEY_FOLDER,
    KEY_SNAPSHOT_ID,
    KEY_TASK_SHA,
    KEY_TASKS_SHA,
    MARKER,
    REASON,
    REJECT_BOX,
    REVIEWER,
    parse_sheet,
    task_heading,
)
from capreplay.tasks.taxonomy import taxonomy
from capreplay.util.files import write_atomic

SHEET_NAME = "review.md"
"""The sheet's name in the batch folder when no other place is given."""

_BACKTICKS = re.compile(r"`+")


def _inline(text: str) -> str:
    """``text`` on one line: free text never starts a line, so it cannot pass for a line of the form."""
    return " ".join(str(text).split())


def _code(text: str) -> str:
    """``text`` as an inline code span, fenced with more backticks than it holds."""
    text = _inline(text)
    fence = "`" * (max((len(run) for run in _BACKTICKS.findall(text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _cell(text: str) -> str:
    """``text`` fit for a table cell (GitHub splits cells at every unescaped ``|``, even in code)."""
    return text.replace("|", "\\|")


def _value(value: Any) -> str:
    """An output's value as a cell: text in code, a list as its items, nothing as a dash."""
    if value is None:
        return "—"
    if isinstance(value, list):
        return ", ".join(_code(str(item)) for item in value) if value else "(empty list)"
    return _code(value if isinstance(value, str) else json.dumps(value, ensure_ascii=False))


def _number(value: Any) -> str:
    return f"{value:g}" if isinstance(value, float) else json.dumps(value, ensure_ascii=False)


def step_line(step: GoldStep, code: Callable[[Any], str] = _code, name: Callable[[str], str] = str) -> str:
    """One gold step in words: ``goto `URL```, ``click `#apply```, ``read `price`: attribute `data-value` of ...``.

    ``code`` marks up a value and ``name`` the step's name: Markdown by default; the viewer passes HTML ones, so
    the sheet and its page say a step the same way (parameter names are identifiers, safe in both)."""
    if isinstance(step, Read):
        source = {
            "url": "the page's URL",
            "text": "the text of",
            "attribute": f"attribute {code(step.attribute or '')} of",
        }
        where = source[step.source] + (f" {code(step.selector)}" if step.selector else "")
        extra = (" (every match)" if step.many else "") + (f", pattern {code(step.pattern)}" if step.pattern else "")
        return f"{name('read')} {code(step.output)}: {where}{extra}"
    args = step.model_dump(mode="json", exclude_none=True)
    kind = args.pop("type")
    head = [code(args.pop(key)) for key in ("url", "selector") if key in args]
    rest = ", ".join(f"{key} {code(_number(value))}" for key, value in args.items())
    return " ".join([name(kind), *head]) + (f" ({rest})" if rest else "")


class _Links:
    """Relative links from the sheet's folder to the gold run's screenshots."""

    def __init__(self, batch: ReviewBatch, evidence: BatchEvidence, sheet_dir: Path) -> None:
        self.run = batch.folder.resolve() / PROOF_RUN
        self.sheet_dir = sheet_dir.resolve()
        self.missing = evidence.missing_shots

    def of(self, shot: str | None) -> str | None:
        if shot is None or shot in self.missing:
            return None
        return quote(Path(os.path.relpath(self.run / shot, self.sheet_dir)).as_posix())


def _outputs(task: WorkflowTask, proof: TaskProof) -> list[str]:
    answer = proof.answer or {}
    expected = task.expected or {}
    rows = ["| Output | Type | Role | Expected | Gold answer | Meaning |", "| --- | --- | --- | --- | --- | --- |"]
    for out in task.outputs:
        cells = [_code(out.name), out.type, out.role, _value(expected.get(out.name)), _value(answer.get(out.name)),
                 _inline(out.description)]  # fmt: skip
        rows.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    return rows


def _points(task: WorkflowTask) -> list[str]:
    if not task.covered_points:
        return ["None (a multi-hop question: its pages, not its actions, make it hard)."]
    lines = []
    for point in task.covered_points:
        known = taxonomy().get(point.code)
        name = f" *{_inline(known.component)}: {_inline(known.name)}*" if known else ""
        lines.append(
            f"- {_code(point.id)} {point.type} {point.code}{name} on {point.site}: {_inline(point.description)}"
        )
    return lines


def _gold_path(task: WorkflowTask, record: EpisodeRecord, links: _Links) -> list[str]:
    shots = {step.n: links.of(step.screenshot) for step in record.steps}
    lines = []
    for n, step in enumerate(task.gold_path, start=1):
        link = shots.get(n)
        lines.append(f"{n}. {step_line(step)}" + (f" ([after]({link}))" if link else ""))
    return lines


def _pages(record: EpisodeRecord, links: _Links) -> list[str]:
    """Each page the gold run was on, in order, with the screenshot after its last step there."""
    visits: list[tuple[str, int, str | None]] = []
    for step in record.steps:
        if visits and visits[-1][0] == step.url:
            visits[-1] = (step.url, step.n, step.screenshot)
        else:
            visits.append((step.url, step.n, step.screenshot))
    lines = [f"Started at <{record.start_url}>.", ""]
    for number, (url, n, shot) in enumerate(visits, start=1):
        link = links.of(shot)
        lines.append(f"{number}. <{url}> (after step {n})")
        lines += ["", f"   ![{record.key.task}, step {n}]({link})", ""] if link else ["   (no screenshot)", ""]
    return lines


def _proof(task: WorkflowTask, proof: TaskProof) -> list[str]:
    score = f"{proof.score:.2f}" if proof.score is not None else "none"
    lines = [f"Passed: {'yes' if proof.passed else 'no'}; the judge's score of the gold answer: {score}.", ""]
    lines += [f"- {c.name}: {'passed' if c.passed else 'FAILED'}: {_inline(c.detail)}" for c in proof.checks]
    if proof.mutations:
        held = sum(m.passed for m in proof.mutations)
        lines.append(f"- changed values: {held} of {len(proof.mutations)} failed exactly the leaves that read them")
    lines += [f"- evidence on <{e.url}>: {_code(e.text)}" for e in task.evidence]
    return lines


def _section(number: int, task: WorkflowTask, batch: ReviewBatch, evidence: BatchEvidence, links: _Links) -> list[str]:
    proof = evidence.proofs[task.id]
    record = evidence.episodes[task.id]
    return [
        task_heading(number, task.id),
        "",
        f"{KEY_TASK_SHA} {batch.task_sha256(task.id)}",
        f"- Flow: {task.flow}",
        f"- Sites: {' → '.join(task.sites)}",
        f"- Start: <{task.start_url}>",
        "",
        f"> {_inline(task.description)}",
        "",
        "### Covered points",
        "",
        *_points(task),
        "",
        "### Expected outputs",
        "",
        *_outputs(task, proof),
        "",
        "### Gold path",
        "",
        *_gold_path(task, record, links),
        "",
        "### Pages reached",
        "",
        *_pages(record, links),
        "### Proof",
        "",
        *_proof(task, proof),
        "",
        "### Decision",
        "",
        f"{ACCEPT_BOX.format(' ')}",
        f"{REJECT_BOX.format(' ')}",
        "",
        REASON,
        "",
        "---",
        "",
    ]


def render_sheet(batch: ReviewBatch, evidence: BatchEvidence, sheet_dir: Path) -> str:
    """The sheet of ``batch`` as Markdown, its links relative to ``sheet_dir`` (the folder it will be in)."""
    info = batch.info
    links = _Links(batch, evidence, sheet_dir)
    folder = Path(os.path.relpath(batch.folder.resolve(), sheet_dir.resolve())).as_posix()
    rejected = ", ".join(f"{stage} {n}" for stage, n in sorted(info.rejected.items()) if n)
    lines = [
        MARKER,
        f"# Review of batch {_code(info.batch)}",
        "",
        "Read each task below, tick one box of its decision (`- [x] accept` or `- [x] reject`), give a reason for "
        "every reject after `Reason:`, and write your name after `Reviewer:`. A task with neither box ticked stays "
        "undecided and is not merged. Leave the other lines of the form as they are: the list below, each task's "
        "`## Task` heading and its `- Task sha256:` line tie this sheet to the batch's exact tasks.",
        "",
        REVIEWER + " ",
        "",
        f"{KEY_BATCH} {info.batch}",
        f"{KEY_FOLDER} {folder}",
        f"{KEY_SNAPSHOT_ID} {batch.snapshot_id}",
        f"{KEY_TASKS_SHA} {batch.tasks_sha256}",
        f"- Generator: {info.generator}, on snapshot {_code(info.snapshot)}",
        f"- Proven: {len(info.proven)} of {info.candidates} candidates"
        + (f" (rejected: {rejected})" if rejected else ""),
        "",
        "---",
        "",
    ]
    for number, task in enumerate(batch.workflows.tasks, start=1):
        lines += _section(number, task, batch, evidence, links)
    if evidence.rejected:
        lines += ["## Rejected before review", ""]
        lines += [f"- {_code(r.candidate)} ({r.stage}): {_inline(r.reason)}" for r in evidence.rejected]
        lines.append("")
    return "\n".join(lines)


def _refuse_reviewed(path: Path) -> None:
    """An InputError if ``path`` holds anything a person may have written: only an untouched sheet is replaced."""
    if not path.exists():
        return
    try:
        text = path.read_text(encoding="utf-8")
        sheet = parse_sheet(text, path)
    except (InputError, OSError, UnicodeDecodeError) as e:
        raise InputError("exists and is not an untouched review sheet: give another -o, or move it away", path) from e
    if sheet.reviewer or any(t.verdict is not None or t.reason for t in sheet.tasks):
        raise InputError("holds a review already: give another -o, or move it away", path)


def write_sheet(batch_folder: Path, out: Path | None = None) -> int:
    """Write the review sheet of the batch at ``batch_folder`` to ``out`` (default ``review.md`` in it).

    An existing file is replaced only if it is a sheet nobody has filled in. Returns how many tasks it holds.
    """
    batch = read_batch(batch_folder)
    evidence = read_evidence(batch)
    path = out if out is not None else batch_folder / SHEET_NAME
    if path.is_dir():
        raise InputError("is a folder; give the sheet's file name", path)
    if not path.parent.is_dir():
        raise InputError("cannot write the sheet: its folder does not exist", path)
    _refuse_reviewed(path)
    write_atomic(path, render_sheet(batch, evidence, path.parent).encode("utf-8"))
    return len(batch.workflows.tasks)
