"""An agent episode as a timeline: each step with its screenshot, the requests it made, the answer, and the
judge's verdict tree with every leaf's evidence. Pure: the records in, HTML out."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from capreplay.judge.verdict import EpisodeVerdict, Evidence, LeafVerdict
from capreplay.models.episode import EpisodeRecord, RequestRecord, StepRecord
from capreplay.models.rubric import RubricNode
from capreplay.models.workflow import WorkflowTask
from capreplay.view.html import badge, definitions, esc, number, page, rel, table

RESULT_KIND = {"hit": "ok", "fuzzy": "info", "miss": "bad", "blocked": "warn"}


@dataclass(frozen=True)
class EpisodeView:
    """One episode and what the viewer knows around it."""

    path: str
    """The page's site path."""
    run_path: str
    """The run's page, for the trail."""
    run_id: str
    record: EpisodeRecord
    task: WorkflowTask | None
    verdict: EpisodeVerdict | None
    shot: Callable[[str], str]
    """The site path of a step's screenshot, from its path relative to the run."""
    capture: Callable[[str], str | None]
    """The site path of the snapshot's capture screenshot of a URL, if the snapshot has one."""


def _step_requests(requests: list[RequestRecord]) -> str:
    """A step's requests in one line of counts, with every one the snapshot did not answer listed."""
    if not requests:
        return "<div class=small>no requests</div>"
    counts = Counter(r.result for r in requests)
    line = ", ".join(f"{badge(k, RESULT_KIND.get(k, 'muted'))} {n}" for k, n in sorted(counts.items()))
    off = "".join(
        f"<li>{badge(r.result, RESULT_KIND[r.result])} <span class=url>{esc(r.url)}</span>"
        + (f" <span class=small>nearest archived: {esc(r.nearest)}</span>" if r.nearest else "") + "</li>"
        for r in requests if r.result in ("miss", "blocked")
    )
    return f"<div class=small>{len(requests)} requests: {line}</div>" + (f"<ul class=plain>{off}</ul>" if off else "")


def _step(view: EpisodeView, step: StepRecord, requests: list[RequestRecord]) -> str:
    args = json.dumps(step.args, ensure_ascii=False) if step.args else ""
    thought = f'<p class=thought>{esc(step.thought)}</p>' if step.thought else ""
    image = ""
    if step.screenshot:
        src = esc(rel(view.path, view.shot(step.screenshot)))
        image = f'<a href="{src}"><img class=shot loading=lazy src="{src}" alt="screenshot after step {step.n}"></a>'
    return (
        f'<li class=step id="step-{step.n}"><div><div class=step-head><span class=n>{step.n}</span>'
        f"<code class=action>{esc(step.action)}</code> <span class=at>{step.at_s:.1f} s</span></div>"
        f"<code class=args>{esc(args)}</code>{thought}"
        f"<div class=url>{esc(step.url)}</div>{_step_requests(requests)}</div>{image}</li>"
    )


def _timeline(view: EpisodeView) -> str:
    """The start page's load, then every step, each with the requests made for it (when the record says)."""
    r = view.record
    by_step: dict[int | None, list[RequestRecord]] = {}
    for req in r.requests:
        by_step.setdefault(req.step, []).append(req)
    split = None not in by_step
    items = []
    if split:
        items.append(f'<li class=step id="step-0"><div><div class=step-head><span class=n>0</span>'
                     f"<code class=action>open</code></div><div class=url>{esc(r.start_url)}</div>"
                     f"{_step_requests(by_step.get(0, []))}</div></li>")  # fmt: skip
    items += [_step(view, s, by_step.get(s.n, []) if split else []) for s in r.steps]
    after = by_step.get(len(r.steps) + 1, []) if split else []
    if after:
        items.append(f'<li class=step><div><div class=step-head><span class=n>·</span>after the last step</div>'
                     f"{_step_requests(after)}</div></li>")  # fmt: skip
    return f"<ol class=timeline>{''.join(items)}</ol>" if items else "<p class=muted>No steps.</p>"


def _request_row(r: RequestRecord) -> list[str]:
    how = badge(r.result, RESULT_KIND.get(r.result, "muted"))
    rule = esc(r.rule or "")
    nearest = esc(r.nearest or "") if r.result in ("miss", "fuzzy") else ""
    step = "" if r.step is None else str(r.step)
    return [step, esc(r.method), f'<span class=url>{esc(r.url)}</span>', how, rule, esc(r.status or ""), nearest]


def _requests(record: EpisodeRecord) -> str:
    counts = Counter(r.result for r in record.requests)
    summary = ", ".join(f"{badge(k, RESULT_KIND.get(k, 'muted'))} {n}" for k, n in sorted(counts.items()))
    rows = [_request_row(r) for r in record.requests]
    off = len(record.off_snapshot)
    toggle = ('<p><label><input type=checkbox class=only-off data-table=requests> only misses and blocked '
              f"({off})</label></p>") if record.requests else ""  # fmt: skip
    return (f"<p>{len(record.requests)} requests: {summary or 'none'}</p>{toggle}"
            + table(["step", "method", "URL", "result", "rule", "status", "nearest archived"], rows, cls="requests"))


def _evidence(view: EpisodeView, e: Evidence) -> str:
    shot = view.capture(e.url)
    image = ""
    if shot:
        src = esc(rel(view.path, shot))
        image = f'<a href="{src}"><img class=thumb loading=lazy src="{src}" alt="capture of {esc(e.url)}"></a>'
    facts = [f"<div class=url>{esc(e.url)}</div>"]
    if e.record_id:
        facts.append(f"<div class=small>record <code>{esc(e.record_id)}</code></div>")
    if e.payload_digest:
        facts.append(f"<div class=small>payload <code>{esc(e.payload_digest)}</code></div>")
    if e.snippet:
        facts.append(f"<blockquote>{esc(e.snippet)}</blockquote>")
    return f'<div class=evidence>{image}<div>{"".join(facts)}</div></div>'


def _leaf(view: EpisodeView, node: RubricNode | None, leaf: LeafVerdict | None, score: float | None) -> str:
    """A leaf's line; ``node`` is None when the task (so the rubric) could not be read, and the verdict speaks alone."""
    node_id = node.id if node else leaf.node if leaf else "?"
    description = node.description if node else ""
    is_critical = node.critical if node else bool(leaf and leaf.critical)
    critical = badge("critical", "warn") if is_critical else ""
    if leaf is None:
        state = badge("not checked", "muted")
        details = ""
    else:
        state = badge("passed", "ok") if leaf.passed else badge("failed", "bad")
        evidence = "".join(_evidence(view, e) for e in leaf.evidence)
        details = (f'<div class=reason>{esc(leaf.reason)}</div>'
                   f'<div class=small>check <code>{esc(leaf.check)}</code> · kind {esc(leaf.kind)}'
                   + (f" · point {esc(leaf.point)}" if leaf.point else "") + f"</div>{evidence}")  # fmt: skip
    cls = "leaf failed" if leaf is not None and not leaf.passed else "leaf"
    return (f'<li class="{cls}" id="leaf-{esc(node_id)}" data-node="{esc(node_id)}">'
            f"<span class=score>{number(score)}</span> {state} {critical} "
            f"<b>{esc(node_id)}</b>: {esc(description)}{details}</li>")


def _tree(view: EpisodeView, node: RubricNode, leaves: dict[str, LeafVerdict], scores: dict[str, float]) -> str:
    if not node.children:
        return _leaf(view, node, leaves.get(node.id), scores.get(node.id))
    critical = badge("critical", "warn") if node.critical else ""
    children = "".join(_tree(view, child, leaves, scores) for child in node.children)
    return (f'<li class=inner data-node="{esc(node.id)}"><span class=score>{number(scores.get(node.id))}</span> '
            f"{critical} <b>{esc(node.id)}</b>: {esc(node.description)}<ul class=tree>{children}</ul></li>")


def _verdict(view: EpisodeView) -> str:
    v = view.verdict
    if v is None:
        return "<p class=muted>Not judged yet: run <code>capreplay judge</code> on the run folder.</p>"
    if not v.scored:
        return f"<p>{badge('unscored', 'warn')} {esc(v.unscored)}</p>"
    head = (f"<p>Score <b>{number(v.score)}</b> "
            + (badge("success", "ok") if v.passed else badge("not every node passed", "bad"))
            + (f" {badge('left the snapshot', 'warn')}" if v.off_snapshot else "") + "</p>")  # fmt: skip
    fields = table(["field", "value the judge read"],
                   [[esc(k), f"<code>{esc(json.dumps(val, ensure_ascii=False))}</code>"]
                    for k, val in (v.fields or {}).items()])  # fmt: skip
    if view.task is None:
        leaves = "".join(_leaf(view, None, leaf, v.node_scores.get(leaf.node)) for leaf in v.leaves)
        return head + fields + f"<ul class=tree>{leaves}</ul>"
    by_id = {leaf.node: leaf for leaf in v.leaves}
    return head + fields + f"<ul class=tree>{_tree(view, view.task.rubric, by_id, v.node_scores)}</ul>"


def verdict_summary(v: EpisodeVerdict | None) -> str:
    """The verdict in one line, each failed leaf linked to its place in the tree."""
    if v is None:
        return badge("not judged", "muted")
    if not v.scored:
        return badge("unscored", "warn") + f" {esc(v.unscored)}"
    failed = [leaf.node for leaf in v.leaves if not leaf.passed]
    if not failed:
        return f"{number(v.score)} " + badge("success", "ok")
    links = ", ".join(f'<a href="#leaf-{esc(n)}">{esc(n)}</a>' for n in failed)
    return f"{number(v.score)} " + badge(f"{len(failed)} of {len(v.leaves)} leaves failed", "bad") + f": {links}"


def render_episode(view: EpisodeView) -> str:
    """The episode's page."""
    r = view.record
    status_kind = "ok" if r.status == "answered" else "bad"
    facts = definitions([
        ("task", esc(r.key.task) + (f"<p>{esc(view.task.description)}</p>" if view.task else "")),
        ("agent · repeat", f"{esc(r.key.agent)} · {r.key.repeat}"),
        ("status", badge(r.status, status_kind) + (f" {esc(r.error)}" if r.error else "")),
        ("verdict", verdict_summary(view.verdict)),
        ("started", esc(r.started_at.isoformat())),
        ("duration", f"{r.duration_s:.1f} s, {len(r.steps)} steps"),
        ("start URL", esc(r.start_url)),
        ("final URL", esc(r.final_url or "")),
        ("model use", esc(f"{r.usage.calls} calls, {r.usage.input_tokens} input and "
                          f"{r.usage.output_tokens} output tokens")),
    ])  # fmt: skip
    answer = f"<pre class=answer>{esc(r.answer)}</pre>" if r.answer is not None else "<p class=muted>No answer.</p>"
    body = (facts + f"<h2>Steps ({len(r.steps)})</h2>{_timeline(view)}"
            + "<h2>Answer</h2>" + answer + "<h2>Verdict</h2>" + _verdict(view)
            + "<h2>Requests</h2>" + _requests(r))
    crumbs = [(view.run_path, f"run {view.run_id}")]
    return page(view.path, f"Episode {r.key.id()}", body, crumbs=crumbs)
