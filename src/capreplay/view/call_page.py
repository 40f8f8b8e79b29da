"""One model call of a study run: the task and the representation it was shown, the tokens, the model's reply
and the answer read from it, the verdict, and, for an ACT task, where the answer landed on the page's
screenshot (:mod:`capreplay.view.act_overlay`). Pure: the call's records in, HTML out.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from capreplay.models.task import ActTask, ReadTask
from capreplay.study.records import CallTokens, RunRecord, TaskInfo
from capreplay.view.act_overlay import Overlay, act_overlay, fits
from capreplay.view.html import badge, definitions, esc, link, page, rel, table

POINT_ANSWER = "screenshot"
"""The representation answered with a click point rather than an element."""


@dataclass(frozen=True)
class CallView:
    """One call and what the viewer knows around it."""

    path: str
    run_path: str
    run_id: str
    record: RunRecord
    task: TaskInfo | None
    """The task as the run's task index has it."""
    question: ReadTask | ActTask | None
    """The registered task (question, gold answer, target), when its tasks file is unchanged."""
    tokens: CallTokens | None
    screenshot: str | None
    """The page session's screenshot as a site path, when the run kept it."""
    previous: str | None
    next: str | None


def verdict_badge(record: RunRecord) -> str:
    """Correct, or what went wrong."""
    v = record.verdict
    if v is None:
        return badge("not scored", "muted")
    if v.correct:
        return badge("correct", "ok")
    return badge(v.reason or "wrong", "warn" if v.reason in ("error", "unparseable") else "bad")


def _task(view: CallView) -> str:
    q = view.question
    if isinstance(q, ReadTask):
        gold = esc(q.answer) + (f" <span class=small>(also: {esc(', '.join(q.aliases))})</span>" if q.aliases else "")
        return definitions([("question", esc(q.question)), ("gold answer", f"<code>{gold}</code>")])
    if isinstance(q, ActTask):
        chain = " → ".join(f"<code>{esc(s)}</code>" for s in q.target)
        return definitions([("instruction", esc(q.instruction)), ("target", chain)])
    return "<p class=muted>The task's text is not shown (see the run's page).</p>"


def _reply(record: RunRecord) -> str:
    if record.error is not None:
        kind = f" <span class=small>({esc(record.error_kind)})</span>"
        return f"<p>{badge('call failed', 'bad')} {esc(record.error)}{kind}</p>"
    reply = f"<pre class=answer>{esc(record.answer_text)}</pre>"
    if record.answer is not None:
        parsed = f"<pre class=answer>{esc(json.dumps(record.answer, ensure_ascii=False, indent=1))}</pre>"
        return reply + "<p>The answer read from it:</p>" + parsed
    return reply + f"<p>{badge('unparseable', 'warn')} {esc(record.unparseable)}</p>"


def _verdict(record: RunRecord) -> str:
    v = record.verdict
    if v is None:
        return "<p class=muted>Not scored.</p>"
    representable = {True: "yes", False: "no", None: "not decided"}[v.representable]
    return (f"<p class=verdict>{verdict_badge(record)}</p>"
            + definitions([("reason", esc(v.reason or "correct")), ("detail", esc(v.detail or "–")),
                           ("representable", esc(representable))]))  # fmt: skip


def _n(value: int | None) -> str:
    return "–" if value is None else f"{value:,}"


def _tokens(view: CallView) -> str:
    r, t = view.record, view.tokens
    rows = []
    if t is not None:
        rows += [["representation tokens (offline)", f"{t.offline:,}", esc(t.method)],
                 ["o200k_base, whole prompt / prompt with the page left out",
                  f"{t.o200k_full:,} / {t.o200k_empty:,}", ""],
                 ["representation tokens by the provider's count", _n(t.api_count), esc(t.api_error or "")],
                 ["billed input tokens minus the empty prompt", _n(t.api_usage), ""]]  # fmt: skip
    if r.usage is not None:
        rows += [["billed input tokens", f"{r.usage.input_tokens:,}", ""],
                 ["billed output tokens", f"{r.usage.output_tokens:,}", ""]]  # fmt: skip
    if not rows:
        return "<p class=muted>No token counts recorded.</p>"
    return table(["", "tokens", "how"], rows, cls="numbers")


def _figure(src: str, overlay: Overlay | None, caption: str) -> str:
    svg = overlay.svg if overlay else ""
    notes = "".join(f"<li>{esc(n)}</li>" for n in overlay.notes) if overlay else ""
    notes_html = f"<ul class=notes>{notes}</ul>" if notes else ""
    return (f'<figure class=screenshot><div class=overlay><a href="{esc(src)}"><img src="{esc(src)}" '
            f'alt="the page\'s screenshot"></a>{svg}</div><figcaption>{caption}{notes_html}</figcaption></figure>')


LEGEND = ('<span class="swatch target"></span> the target\'s box · <span class="swatch answer"></span> the element '
          'the answer resolved to, when it is another · <span class="swatch point"></span> the click point '
          '(green: it scored)')  # fmt: skip


def _screenshot(view: CallView, size: tuple[int, int] | None) -> str:
    """The screenshot the session showed, with the ACT answer drawn on it; empty where there is nothing to show."""
    r, kind = view.record, view.task.kind if view.task else None
    geometry = r.verdict.geometry if r.verdict else None
    shown_to_model = r.cell.representation == POINT_ANSWER
    if kind != "ACT" and not shown_to_model:
        return ""
    if view.screenshot is None:
        return ("<h2>Screenshot</h2><p class=muted>This run kept no screenshot of the page session (runs recorded "
                "before screenshots were kept).</p>")  # fmt: skip
    src = rel(view.path, view.screenshot)
    title = "<h2>The screenshot the model was shown</h2>" if shown_to_model else (
        "<h2>The page's screenshot</h2><p class=small>Not what this representation showed the model: the page "
        "session's screenshot, with the target and the element the answer resolved to.</p>")  # fmt: skip
    if kind != "ACT":
        return title + _figure(src, None, "")
    if geometry is None:
        return title + _figure(src, None, "No geometry was recorded for this call (runs recorded before it was kept).")
    layout = geometry.layout
    if size is None or not fits(layout, size):
        said = "unreadable" if size is None else f"{size[0]}x{size[1]}"
        return title + _figure(src, None, f"Nothing is drawn: the screenshot is {esc(said)}, but the answer was placed "
                               f"in a {esc(layout)} layout.")  # fmt: skip
    overlay = act_overlay(size, geometry, correct=bool(r.verdict and r.verdict.correct),
                          resolved_expected=not shown_to_model and r.answer is not None)  # fmt: skip
    return title + _figure(src, overlay, f"{LEGEND}. Layout {esc(layout)}.")


def render_call(view: CallView, screenshot_size: tuple[int, int] | None) -> str:
    """The call's page; ``screenshot_size`` is the kept screenshot's size in pixels (None: unknown)."""
    r, cell = view.record, view.record.cell
    kind = view.task.kind if view.task else "?"
    location = view.task.location if view.task and view.task.location else "–"
    when = f"{r.started_at.isoformat()}, {r.latency_s:.2f} s" + (" (from the response cache)" if r.cached else "")
    facts = definitions([
        ("verdict", verdict_badge(r)),
        ("task", f"<b>{esc(cell.task)}</b> {badge(kind, 'info')} on page <b>{esc(cell.page)}</b>, "
                 f"location {esc(location)}"),
        ("representation", f"<b>{esc(cell.representation)}</b>"),
        ("repeat", str(cell.repeat)),
        ("model", esc(" · ".join(x for x in (r.model, r.stop_reason and f"stop {r.stop_reason}") if x) or "–")),
        ("sent", esc(when)),
        ("request", f"<code>{esc(r.request_id or '–')}</code> <span class=small>cache key "
                    f"<code>{esc(r.request_sha256[:16])}</code></span>"),
    ])  # fmt: skip
    steps = [link(view.path, p, label) for p, label in ((view.previous, "← previous call"), (view.next, "next call →"))
             if p is not None]  # fmt: skip
    nav = f"<p class=steps>{' · '.join(steps)}</p>" if steps else ""
    body = (nav + facts + "<h2>Task</h2>" + _task(view) + "<h2>Reply</h2>" + _reply(r)
            + "<h2>Verdict</h2>" + _verdict(r) + _screenshot(view, screenshot_size)
            + "<h2>Tokens</h2>" + _tokens(view))  # fmt: skip
    return page(view.path, f"Call {cell.key()}", body, crumbs=[(view.run_path, f"study run {view.run_id}")])
