"""A review sheet's page: everything the Markdown sheet shows a reviewer, as HTML, and a decision form per task.

Pure: the sheet as read and checked against its batch, and the proof's evidence, in; HTML out. For each proven
task it shows the description, flow, sites, covered points with their taxonomy names, the outputs with the
expected value next to the gold answer, the gold path one step a row with the screenshot after it, the pages
the gold run reached, and the proof's checks. The form posts to ``decide`` beside the page; a page opened from
an exported folder cannot post, so the script hides the forms there and shows how to decide instead.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from capreplay.models.episode import EpisodeRecord
from capreplay.models.workflow import GoldStep, WorkflowTask
from capreplay.tasks.generation import TaskProof
from capreplay.tasks.review.batch_folder import BatchEvidence
from capreplay.tasks.review.parse import ReviewedSheet, Sheet, SheetTask, Verdict
from capreplay.tasks.review.sheet import step_line
from capreplay.tasks.taxonomy import taxonomy
from capreplay.view.html import badge, definitions, esc, link, page, rel, shown_path, table


@dataclass(frozen=True)
class Pending:
    """A decision that was not written, shown again in its task's form with the reason it was refused."""

    task: str
    verdict: str
    """``accept``, ``reject`` or empty (undecided), as submitted."""
    reason: str
    reviewer: str
    message: str
    """The one line that says why nothing was written."""


@dataclass(frozen=True)
class SheetView:
    """A review sheet as the viewer read it."""

    path: str
    """The page's site path."""
    file: Path
    """The sheet's file."""
    sha256: str
    """sha256 of the file's bytes as read: a decision is written only over these bytes."""
    reviewed: ReviewedSheet
    evidence: BatchEvidence
    shot: Callable[[str], str | None]
    """The site path of a proof-run screenshot (relative to ``proof-run/``); None when the batch lacks it."""
    source: str
    """The site path of the sheet's text."""
    snapshot: str | None
    """The snapshot's page, when the viewer could read the snapshot."""
    pending: Pending | None = None


def _code(value: Any) -> str:
    return f"<code>{esc(value)}</code>"


def decision_badge(task: SheetTask) -> str:
    """The task's decision as a badge."""
    if task.verdict == "accept":
        return badge("accepted", "ok")
    if task.verdict == "reject":
        return badge("rejected", "bad")
    return badge("undecided", "muted")


def decision_state(task: SheetTask, reviewer: str) -> str:
    """The decision as the sheet holds it, in words: who decided what, and why."""
    if task.verdict is None:
        return f"{decision_badge(task)} <span class=muted>Neither box is ticked: the task is not merged.</span>"
    who = f" by {esc(reviewer)}" if reviewer else ""
    why = f": <q>{esc(task.reason)}</q>" if task.reason else ""
    return f"{decision_badge(task)}{who}{why}"


def decided_summary(sheet: Sheet) -> str:
    """How many tasks are decided, and how, with the reviewer."""
    kinds: list[tuple[Verdict | None, str, str]] = [("accept", "accepted", "ok"), ("reject", "rejected", "bad"),
                                                   (None, "undecided", "muted")]  # fmt: skip
    counts = [(len(sheet.decided(v)), word, kind) for v, word, kind in kinds]
    decided = len(sheet.tasks) - counts[2][0]
    who = f" · reviewer {esc(sheet.reviewer)}" if sheet.reviewer else " · <span class=muted>not signed</span>"
    return (f"{decided}/{len(sheet.tasks)} decided " + " ".join(badge(f"{n} {word}", kind) for n, word, kind in counts)
            + who)  # fmt: skip


def step_html(step: GoldStep) -> str:
    """One gold step in words, as the sheet writes it: ``goto URL``, ``read price: attribute data-value of ...``."""
    return step_line(step, _code, lambda name: f"<b>{esc(name)}</b>")


def _value(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, list):
        return ", ".join(_code(item) for item in value) if value else "<span class=muted>(empty list)</span>"
    return _code(value if isinstance(value, str) else json.dumps(value, ensure_ascii=False))


def _image(view: SheetView, shot: str | None, alt: str, cls: str) -> str:
    target = view.shot(shot) if shot else None
    if target is None:
        return "<span class=muted>no screenshot</span>"
    src = esc(rel(view.path, target))
    return f'<a href="{src}"><img class={cls} loading=lazy src="{src}" alt="{esc(alt)}"></a>'


def _points(task: WorkflowTask) -> str:
    if not task.covered_points:
        return "<p class=muted>None (a multi-hop question: its pages, not its actions, make it hard).</p>"
    rows = []
    for point in task.covered_points:
        known = taxonomy().get(point.code)
        name = f"{esc(known.component)}: {esc(known.name)}" if known else "<span class=muted>not in the taxonomy</span>"
        rows.append([_code(point.id), esc(point.type), esc(point.code), name, esc(point.site), esc(point.description)])
    return table(["point", "type", "code", "taxonomy", "site", "what"], rows, cls="points")


def _outputs(task: WorkflowTask, proof: TaskProof) -> str:
    answer, expected = proof.answer or {}, task.expected or {}
    rows = [[_code(out.name), esc(out.type), esc(out.role), _value(expected.get(out.name)),
             _value(answer.get(out.name)), esc(out.description)] for out in task.outputs]  # fmt: skip
    return table(["output", "type", "role", "expected", "gold answer", "meaning"], rows, cls="outputs")


def _gold_path(view: SheetView, task: WorkflowTask, record: EpisodeRecord) -> str:
    steps = {step.n: step for step in record.steps}
    rows = []
    for n, gold in enumerate(task.gold_path, start=1):
        ran = steps.get(n)
        url = f"<span class=url>{esc(ran.url)}</span>" if ran else "<span class=muted>not run</span>"
        shot = _image(view, ran.screenshot if ran else None, f"{task.id}, after step {n}", "thumb")
        rows.append([str(n), step_html(gold), url, shot])
    return table(["#", "step", "page after it", "screenshot after it"], rows, cls="gold-path")


def visits(record: EpisodeRecord) -> list[tuple[str, int, str | None]]:
    """Each page the run was on, in order: its URL, its last step there and that step's screenshot."""
    out: list[tuple[str, int, str | None]] = []
    for step in record.steps:
        if out and out[-1][0] == step.url:
            out[-1] = (step.url, step.n, step.screenshot)
        else:
            out.append((step.url, step.n, step.screenshot))
    return out


def _pages(view: SheetView, record: EpisodeRecord) -> str:
    figures = [f'<figure class=visit><figcaption>{number}. <span class=url>{esc(url)}</span> '
               f"<span class=small>(after step {n})</span></figcaption>"
               f"{_image(view, shot, f'{record.key.task}, step {n}', 'page-shot')}</figure>"
               for number, (url, n, shot) in enumerate(visits(record), start=1)]  # fmt: skip
    return (f"<p>Started at <span class=url>{esc(record.start_url)}</span>.</p>"
            f'<div class=visits>{"".join(figures)}</div>')  # fmt: skip


def _proof(task: WorkflowTask, proof: TaskProof) -> str:
    score = f"{proof.score:.2f}" if proof.score is not None else "none"
    head = (f"<p>{badge('passed', 'ok') if proof.passed else badge('failed', 'bad')} "
            f"the judge's score of the gold answer: <b>{score}</b></p>")  # fmt: skip
    checks = "".join(f"<li>{badge('passed', 'ok') if c.passed else badge('FAILED', 'bad')} <code>{esc(c.name)}</code>: "
                     f"{esc(c.detail)}</li>" for c in proof.checks)  # fmt: skip
    parts = [head, f"<ul class=checks>{checks}</ul>"]
    if proof.mutations:
        held = sum(m.passed for m in proof.mutations)
        rows = [[_code(m.output), _value(m.value), esc(", ".join(m.failed)), esc(", ".join(m.expected)),
                 badge("held", "ok") if m.passed else badge("did not hold", "bad")]
                for m in proof.mutations]  # fmt: skip
        said = f"{held} of {len(proof.mutations)} failed exactly the leaves that read them"
        headers = ["output", "changed to", "leaves that failed", "leaves that must fail", ""]
        parts.append(f"<p>Changed values: {said}.</p>" + table(headers, rows))
    if task.evidence:
        items = "".join(f"<li><span class=url>{esc(e.url)}</span>: <q>{esc(e.text)}</q></li>" for e in task.evidence)
        parts.append(f"<p>Evidence the pages must show:</p><ul>{items}</ul>")
    return "".join(parts)


def _radio(value: str, label: str, chosen: str) -> str:
    checked = " checked" if value == chosen else ""
    return f'<label><input type=radio name=verdict value="{value}"{checked}> {label}</label>'


def _form(view: SheetView, task: SheetTask) -> str:
    sheet = view.reviewed.sheet
    pending = view.pending if view.pending and view.pending.task == task.task else None
    verdict = pending.verdict if pending else task.verdict or ""
    reason = pending.reason if pending else task.reason
    reviewer = pending.reviewer if pending else sheet.reviewer
    message = f'<p class="decide-message error" role=alert>Not saved: {esc(pending.message)}</p>' if pending else \
        "<p class=decide-message role=status></p>"  # fmt: skip
    return (
        f'<form class=decide method=post action=decide data-task="{esc(task.task)}">'
        f'<input type=hidden name=task value="{esc(task.task)}">'
        f'<input type=hidden name=sha256 value="{esc(view.sha256)}">'
        f'<div class=verdicts>{_radio("accept", "accept", verdict)} {_radio("reject", "reject", verdict)} '
        f'{_radio("", "undecided", verdict)}</div>'
        f'<label class=field>Reason <span class=small>(needed for a reject)</span>'
        f"<textarea name=reason rows=2>{esc(reason)}</textarea></label>"
        f'<label class=field>Reviewer <span class=small>(the sheet\'s one reviewer)</span>'
        f'<input name=reviewer value="{esc(reviewer)}" autocomplete=name></label>'
        f"<button type=submit>Save decision</button>{message}"
        "<noscript><p class=small>Opened from an exported folder, this form cannot save: serve the results with "
        "<code>capreplay view</code>, or edit the sheet file.</p></noscript></form>"
    )


def _section(view: SheetView, number: int, task: WorkflowTask, decision: SheetTask) -> str:
    proof = view.evidence.proofs[task.id]
    record = view.evidence.episodes[task.id]
    facts = definitions([
        ("flow", esc(task.flow)),
        ("sites", " → ".join(esc(site) for site in task.sites)),
        ("start", f"<span class=url>{esc(task.start_url)}</span>"),
        ("task sha256", f"<code class=small>{esc(decision.sha256)}</code>"),
    ])  # fmt: skip
    state = f'<p class=decision-state data-decision-of="{esc(task.id)}">' \
            f"{decision_state(decision, view.reviewed.sheet.reviewer)}</p>"  # fmt: skip
    return (
        f'<section class=task id="task-{esc(task.id)}" data-task="{esc(task.id)}">'
        f'<h2>Task {number}: {esc(task.id)} <span data-badge-of="{esc(task.id)}">{decision_badge(decision)}</span></h2>'
        f"<blockquote class=description>{esc(task.description)}</blockquote>{facts}"
        f"<h3>Covered points</h3>{_points(task)}"
        f"<h3>Expected outputs</h3>{_outputs(task, proof)}"
        f"<h3>Gold path</h3>{_gold_path(view, task, record)}"
        f"<h3>Pages reached</h3>{_pages(view, record)}"
        f"<h3>Proof</h3>{_proof(task, proof)}"
        f'<h3 id="decision-{esc(task.id)}">Decision</h3>{state}{_form(view, decision)}</section>'
    )


def _contents(view: SheetView) -> str:
    sheet = view.reviewed.sheet
    tasks = view.reviewed.batch.workflows.tasks
    by_id = {t.task: t for t in sheet.tasks}
    rows = [[str(n), f'<a href="#task-{esc(t.id)}">{esc(t.id)}</a>', esc(t.flow), esc(" → ".join(t.sites)),
             f'<span data-badge-of="{esc(t.id)}">{decision_badge(by_id[t.id])}</span>']
            for n, t in enumerate(tasks, start=1)]  # fmt: skip
    return table(["#", "task", "flow", "sites", "decision"], rows, cls="sheet-tasks")


def render_sheet_page(view: SheetView) -> str:
    """The sheet's page."""
    sheet, batch = view.reviewed.sheet, view.reviewed.batch
    info = batch.info
    rejected = ", ".join(f"{stage} {n}" for stage, n in sorted(info.rejected.items()) if n)
    snapshot = link(view.path, view.snapshot, batch.snapshot_id[:16]) if view.snapshot else esc(batch.snapshot_id[:16])
    facts = definitions([
        ("sheet", f"<code>{esc(shown_path(view.file))}</code> · {link(view.path, view.source, 'its text')}"),
        ("batch", f"{esc(info.batch)} <span class=small>{esc(shown_path(batch.folder))}</span>"),
        ("generator", esc(info.generator)),
        ("snapshot", f"{snapshot} <span class=small>{esc(shown_path(info.snapshot))}</span>"),
        ("proven", esc(f"{len(info.proven)} of {info.candidates} candidates" + (f" (rejected: {rejected})"
                                                                                  if rejected else ""))),
        ("decided", f"<span id=decided>{decided_summary(sheet)}</span>"),
    ])  # fmt: skip
    banner = ""
    if view.pending:
        task = esc(view.pending.task)
        banner = (f'<p class="banner error" role=alert>Not saved: {esc(view.pending.message)} '
                  f'<a href="#decision-{task}">To the form</a></p>')  # fmt: skip
    note = ("<p class=static-note>This is an exported copy, opened from disk: decisions cannot be saved from it. "
            "To decide, serve the results with <code>capreplay view RESULTS_DIR</code> and open this sheet there, or "
            f"edit <code>{esc(view.file)}</code> by hand: tick <code>- [x] accept</code> or <code>- [x] reject</code>, "
            "write the reason after <code>Reason:</code> and your name after <code>Reviewer:</code>.</p>")  # fmt: skip
    by_id = {t.task: t for t in sheet.tasks}
    sections = "".join(_section(view, n, task, by_id[task.id])
                       for n, task in enumerate(batch.workflows.tasks, start=1))  # fmt: skip
    rejections = ""
    if view.evidence.rejected:
        rows = [[_code(r.candidate), esc(r.stage), esc(r.reason)] for r in view.evidence.rejected]
        rejections = "<h2>Rejected before review</h2>" + table(["candidate", "stage", "reason"], rows)
    body = banner + facts + note + "<h2>Tasks</h2>" + _contents(view) + sections + rejections
    return page(view.path, f"Review of batch {info.batch}", body)
