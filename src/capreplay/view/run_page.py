"""An agent run's page: what it was planned with, its status, the judge's metrics with their intervals, and
every episode with its verdict. Pure: the run's records in, HTML out."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from capreplay.judge.metrics import Metric
from capreplay.judge.verdict import EpisodeVerdict
from capreplay.models.episode import AgentRunInfo, EpisodeRecord
from capreplay.report.agents import AgentReport
from capreplay.view.html import badge, definitions, esc, link, number, page, rel, shown_path, table


@dataclass(frozen=True)
class AgentRunView:
    """An agent run as the viewer read it."""

    path: str
    info: AgentRunInfo
    report: AgentReport
    episodes: Sequence[EpisodeRecord]
    verdicts: dict[str, EpisodeVerdict]
    """By episode id."""
    episode_path: Callable[[EpisodeRecord], str]
    snapshot_path: str | None
    """The snapshot's page, when the viewer could read the snapshot."""
    plot_path: str | None
    """The per-type scores plot, when the run is judged."""


def metric(m: Metric) -> str:
    """A metric with its 95% interval over repeats, else its value over all episodes."""
    if m.mean is not None and m.low is not None and m.high is not None:
        return f"{m.mean:.2f} <span class=small>[{m.low:.2f}, {m.high:.2f}]</span>"
    return number(m.value)


def run_status(view: AgentRunView) -> str:
    """Recorded of planned, and whether it is judged."""
    r = view.report
    done = badge(f"{r.recorded}/{r.planned} episodes", "ok" if r.recorded == r.planned else "warn")
    judged = (badge("judged", "ok") if r.metrics and not r.unjudged
              else badge(f"{len(r.unjudged)} unjudged", "warn") if r.metrics
              else badge("not judged", "muted"))  # fmt: skip
    return f"{done} {judged}"


def _metrics(view: AgentRunView) -> str:
    if view.report.metrics is None:
        return f"<p class=muted>Not judged yet: <code>capreplay judge {esc(view.info.run_id)}</code> on its folder.</p>"
    rows = [[esc(a.agent), f"{a.scored}/{a.episodes}", metric(a.partial_completion), metric(a.success_rate),
             metric(a.action_score), metric(a.perception_score), str(a.off_snapshot)]
            for a in view.report.metrics.agents]  # fmt: skip
    plot = (f'<p><img class=plot src="{esc(rel(view.path, view.plot_path))}" alt="leaf scores by covered-point type">'
            "</p>" if view.plot_path else "")  # fmt: skip
    note = "<p class=small>Means over repeats with a 95% t interval where there are two repeats or more.</p>"
    return table(["agent", "scored", "partial completion", "success rate", "action leaves", "perception leaves",
                  "left the snapshot"], rows) + note + plot  # fmt: skip


def _episodes(view: AgentRunView) -> str:
    rows = []
    for e in view.episodes:
        v = view.verdicts.get(e.key.id())
        if v is None:
            score = badge("not judged", "muted")
        elif not v.scored:
            score = badge("unscored", "warn")
        else:
            failed = sum(1 for leaf in v.leaves if not leaf.passed)
            verdict = badge("success", "ok") if v.passed else badge(f"{failed} leaves failed", "bad")
            score = f"{number(v.score)} {verdict}"
        off = badge(str(len(e.off_snapshot)), "warn") if e.off_snapshot else "0"
        rows.append([link(view.path, view.episode_path(e), e.key.id()),
                     badge(e.status, "ok" if e.status == "answered" else "bad"), str(len(e.steps)),
                     f"{e.duration_s:.1f} s", off, score])  # fmt: skip
    return table(["episode", "status", "steps", "duration", "off the snapshot", "score"], rows)


def render_agent_run(view: AgentRunView) -> str:
    """The run's page."""
    i = view.info
    short = i.snapshot_id[:16]
    snapshot = link(view.path, view.snapshot_path, short) if view.snapshot_path else esc(short)
    facts = definitions([
        ("status", run_status(view)),
        ("registration", esc(i.registration or "none")),
        ("snapshot", f"{snapshot} <span class=small>{esc(shown_path(i.snapshot))}</span>"),
        ("tasks file", esc(shown_path(i.tasks_file))),
        ("agents", esc(", ".join(i.agents))),
        ("plan", esc(f"{len(i.planned)} episodes: {view.report.tasks} tasks × {i.repeats} repeats, seed {i.seed}, "
                     f"at most {i.step_limit} steps and {i.episode_timeout_s:.0f} s each")),
        ("created", esc(i.created_at.isoformat())),
    ])  # fmt: skip
    body = facts + "<h2>Metrics</h2>" + _metrics(view) + f"<h2>Episodes ({len(view.episodes)})</h2>" + _episodes(view)
    return page(view.path, f"Agent run {i.run_id}", body)
