"""A study run's page: how it was planned, the report's tables (accuracy with its 95% Wilson interval, tokens,
accuracy by location tag, over repeats and per page), its two plots, and every call as a grid of tasks by
representations, each mark linking to the call's page. Pure: the run's records and report in, HTML out.

Every figure comes from :mod:`capreplay.report.study`, as ``capreplay study report`` prints it; the page only
lays it out.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from capreplay.models.task import ActTask, ReadTask
from capreplay.report.repeats import RepeatSpread
from capreplay.report.study import Accuracy, RunReport
from capreplay.study.records import Cell, RunInfo, RunRecord, TaskInfo
from capreplay.view.html import badge, definitions, esc, number, page, rel, table


@dataclass(frozen=True)
class StudyRunView:
    """A study run as the viewer read it."""

    path: str
    folder: str
    info: RunInfo
    report: RunReport
    records: Sequence[RunRecord]
    tasks: dict[str, TaskInfo]
    """The run's task index by id."""
    questions: dict[str, ReadTask | ActTask]
    """The registered tasks by id (empty when the tasks file is gone or changed)."""
    questions_missing: str | None
    """Why the questions are not shown, when they are not."""
    call_path: Callable[[Cell], str]
    plots: tuple[str, str]
    """The tokens-against-accuracy and tokens-per-page plots."""


def accuracy_cell(a: Accuracy) -> str:
    """An accuracy with its interval and counts, or a dash without calls."""
    if a.accuracy is None or a.low is None or a.high is None:
        return "–"
    return f"<b>{a.accuracy:.2f}</b> {a.correct}/{a.calls}<div class=small>[{a.low:.2f}, {a.high:.2f}]</div>"


def tokens(value: float | None) -> str:
    """A token figure with thousands separators, or a dash."""
    return "–" if value is None else f"{value:,.0f}"


def _count(n: int, kind: str) -> str:
    return badge(str(n), kind) if n else "0"


def study_status(report: RunReport) -> str:
    """Recorded of planned calls, and what is unscored or not studied."""
    s = report.study
    parts = [badge(f"{s.recorded}/{s.planned} calls", "ok" if s.recorded == s.planned else "warn")]
    unscored = sum(r.unscored for r in s.rows)
    if unscored:
        parts.append(badge(f"{unscored} unscored", "warn"))
    if report.unstudied:
        parts.append(badge(f"{len(report.unstudied)} page sessions failed", "bad"))
    return " ".join(parts)


def _representations(view: StudyRunView) -> str:
    rows = [[f"<b>{esc(r.representation)}</b>", str(r.calls), accuracy_cell(r.read), accuracy_cell(r.act),
             tokens(r.mean_tokens_o200k), tokens(r.mean_tokens_api), tokens(r.mean_tokens_api_usage),
             f"{r.input_tokens:,}", tokens(r.tokens_per_correct), tokens(r.representation_tokens_per_correct),
             _count(r.errors, "bad"), _count(r.unparseable, "warn"), _count(r.not_representable, "muted"),
             _count(r.unscored, "warn")]
            for r in view.report.study.rows]  # fmt: skip
    note = ("<p class=small>Accuracy: correct / calls with its 95% Wilson interval; failed calls (errors) and replies "
            "with no answer of the format (unparseable) count as incorrect and are also counted apart. Tokens: the "
            "mean representation tokens per call (o200k_base; the image rule for a screenshot), by the provider's "
            "count and by its billed usage where it gave them.</p>")  # fmt: skip
    grid = table(["representation", "calls", "READ accuracy", "ACT accuracy", "tokens (o200k)", "tokens (API count)",
                  "tokens (API usage)", "input tokens", "input tokens / correct", "repr. tokens / correct",
                  "errors", "unparseable", "not representable", "unscored"], rows, cls="numbers")  # fmt: skip
    return f"<div class=wide>{grid}</div>{note}"


def _by_location(view: StudyRunView) -> str:
    names = [r.representation for r in view.report.study.rows]
    cells = {(row.location, row.representation): row.result for row in view.report.study.by_location}
    tags = sorted({row.location for row in view.report.study.by_location})
    rows = [[esc(tag), *(accuracy_cell(cells[tag, n]) if (tag, n) in cells else "–" for n in names)] for tag in tags]
    return table(["location", *names], rows, cls="numbers")


def _spread(s: RepeatSpread | None) -> str:
    if s is None or s.mean is None:
        return "–"
    interval = f" [{s.low:.2f}, {s.high:.2f}]" if s.low is not None and s.high is not None else ""
    each = ", ".join(f"{v:.2f}" for v in s.per_repeat)
    return f"<b>{s.mean:.2f}</b><span class=small>{interval} ({each})</span>"


def _over_repeats(view: StudyRunView) -> str:
    cell = {(s.representation, s.kind): s for s in view.report.over_repeats}
    rows = [[esc(r.representation), *(_spread(cell.get((r.representation, k))) for k in ("READ", "ACT", "all"))]
            for r in view.report.study.rows]  # fmt: skip
    return (f"<p class=small>{view.report.repeats} repeat(s): the mean of the per-repeat accuracies with its 95% "
            "Student t interval (none with fewer than 2 repeats), each repeat's in parentheses.</p>"
            + table(["representation", "READ", "ACT", "all"], rows, cls="numbers"))  # fmt: skip


def _per_page(view: StudyRunView) -> str:
    names = [r.representation for r in view.report.study.rows]
    point = {(p.page, p.representation): p for p in view.report.pages}
    pages = list(dict.fromkeys(p.page for p in view.report.pages))
    rows = [[esc(p), *(f"{point[p, n].tokens:,.0f} <span class=small>/ {number(point[p, n].accuracy)}</span>"
                       if (p, n) in point else "–" for n in names)] for p in pages]  # fmt: skip
    return ("<p class=small>Mean representation tokens per call / accuracy over the page's READ and ACT calls.</p>"
            + table(["page", *names], rows, cls="numbers"))  # fmt: skip


def _unstudied(view: StudyRunView) -> str:
    if not view.report.unstudied:
        return ""
    rows = [[esc(f.page), str(f.repeat), str(len(f.cells)), esc(f.error)] for f in view.report.unstudied]
    return ("<h2>Pages not studied</h2><p>Page sessions that failed: their calls are not recorded and are left out of "
            "every figure; running the run again retries them.</p>" + table(["page", "repeat", "calls", "why"], rows))


def call_mark(here: str, path: str, record: RunRecord) -> str:
    """A call's mark in the grid: ✓ correct, ✗ wrong (its reason on hover), ! failed or unparseable, ? unscored."""
    v = record.verdict
    if v is None:
        kind, text, why = "muted", "?", "not scored"
    elif v.correct:
        kind, text, why = "ok", "✓", "correct"
    elif v.reason in ("error", "unparseable"):
        kind, text, why = "warn", "!", f"{v.reason}: {v.detail or ''}"
    else:
        kind, text, why = "bad", "✗", f"{v.reason or 'wrong'}: {v.detail or ''}"
    return (f'<a class="mark {kind}" href="{esc(rel(here, path))}" title="{esc(record.cell.key())} · '
            f'{esc(why)}">{text}</a>')  # fmt: skip


def _calls(view: StudyRunView) -> str:
    """Tasks down (grouped by page, in plan order), representations across, a mark per repeat in each cell."""
    recorded = {r.cell: r for r in view.records}
    names = view.info.representations
    repeats = range(view.info.repeats)
    planned = set(view.info.planned)
    # The tasks file's order (the task index keeps it), not the plan's shuffled one.
    in_plan = {(c.page, c.task) for c in planned}
    tasks = [(t.page, t.id) for t in view.tasks.values() if (t.page, t.id) in in_plan]
    tasks += sorted(in_plan - set(tasks))
    rows = []
    for page_id in dict.fromkeys(p for p, _ in tasks):
        rows.append(f'<tr class=group><th colspan="{len(names) + 2}">page {esc(page_id)}</th></tr>')
        for _, task_id in (t for t in tasks if t[0] == page_id):
            info = view.tasks.get(task_id)
            question = view.questions.get(task_id)
            said = question.question if isinstance(question, ReadTask) else question.instruction if question else ""
            head = (f"<b>{esc(task_id)}</b> {badge(info.kind, 'info') if info else ''} "
                    f"<span class=small>{esc(info.location or '') if info else ''}</span>"
                    + (f"<div class=small>{esc(said)}</div>" if said else ""))  # fmt: skip
            cells = []
            for name in names:
                marks = []
                for repeat in repeats:
                    cell = Cell(repeat=repeat, page=page_id, task=task_id, representation=name)
                    record = recorded.get(cell)
                    if record is not None:
                        marks.append(call_mark(view.path, view.call_path(cell), record))
                    elif cell in planned:
                        marks.append('<span class="mark muted" title="planned, not recorded">·</span>')
                cells.append(f"<td class=marks>{''.join(marks)}</td>")
            rows.append(f"<tr><td>{head}</td>{''.join(cells)}</tr>")
    head = "".join(f"<th>{esc(n)}</th>" for n in names)
    legend = ("<p class=small>Each mark is one call (one per repeat) and links to it: "
              '<span class="mark ok">✓</span> correct, <span class="mark bad">✗</span> wrong (why on hover), '
              '<span class="mark warn">!</span> failed call or no answer of the format, '
              '<span class="mark muted">·</span> planned but not recorded.</p>')  # fmt: skip
    return (legend + f'<table class="calls"><thead><tr><th>task</th>{head}</tr></thead>'
            f"<tbody>{''.join(rows)}</tbody></table>")


def render_study_run(view: StudyRunView) -> str:
    """The run's page."""
    i = view.info
    settings = i.model_settings
    model = " · ".join(esc(f"{k} {settings[k]}") for k in ("provider", "model", "max_tokens") if k in settings)
    tasks_note = "" if view.questions_missing is None else (
        f"<p class=small>Questions are not shown: {esc(view.questions_missing)}.</p>")  # fmt: skip
    facts = definitions([
        ("status", study_status(view.report)),
        ("registration", esc(i.registration or "none")),
        ("model", model or "–"),
        ("representations", esc(", ".join(i.representations))),
        ("plan", esc(f"{len(i.planned)} calls: {len({c.task for c in i.planned})} tasks on "
                     f"{len({c.page for c in i.planned})} pages × {len(i.representations)} representations × "
                     f"{i.repeats} repeats, seed {i.seed}")),
        ("created", esc(i.created_at.isoformat())),
        ("folder", f"<code>{esc(view.folder)}</code>"),
    ])  # fmt: skip
    plots = "".join(f'<a href="{esc(rel(view.path, p))}"><img class=plot src="{esc(rel(view.path, p))}" '
                    f'alt="{alt}"></a>' for p, alt in zip(view.plots, ("tokens against accuracy", "tokens per page"),
                                                          strict=True))  # fmt: skip
    body = (facts + "<h2>Representations</h2>" + _representations(view)
            + f"<h2>Plots</h2><div class=plots>{plots}</div>"
            + "<h2>Accuracy by location tag</h2>" + _by_location(view)
            + "<h2>Accuracy over repeats</h2>" + _over_repeats(view)
            + "<h2>Per page</h2>" + _per_page(view) + _unstudied(view)
            + f"<h2>Calls ({len(view.records)})</h2>" + tasks_note + _calls(view))
    return page(view.path, f"Study run {i.run_id}", body)

