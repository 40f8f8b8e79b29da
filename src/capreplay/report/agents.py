"""The report of an agent run folder (``capreplay report`` on a run of ``capreplay run --agent``).

One table with a row per agent: the judge's four CAP metrics (:mod:`capreplay.judge.metrics`) next to what
the episodes cost (time, output tokens, model calls) and how they ended; then the leaf scores by covered-point
type and by site, the episodes that left the snapshot, and a plot of the scores by type. A run that is not
judged yet gets the cost and status table alone.

:func:`build_agent_report`, :func:`agent_report_markdown` and :func:`per_type_png` are pure;
:func:`report_agent_folder` reads the run folder and :func:`write_agent_report` writes ``report.md``,
``report.json`` and ``per_type.png`` into the output folder.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from capreplay.agents.run import read_agent_run
from capreplay.errors import InputError
from capreplay.judge.metrics import NO_POINT, AgentMetrics, JudgeMetrics, compute_metrics
from capreplay.judge.run_verdicts import VERDICTS_FILE
from capreplay.judge.verdict import EpisodeVerdict
from capreplay.models.episode import AgentRunInfo, EpisodeRecord, RequestResult
from capreplay.models.workflow import WorkflowTask
from capreplay.report import REPORT_JSON, REPORT_MD
from capreplay.report.judge import group_table, metric_cell
from capreplay.report.plots import score_bars_png
from capreplay.runs.episode_log import read_episodes
from capreplay.runs.folder import RUN_FILE
from capreplay.runs.log import read_lines
from capreplay.runs.tasks_file import load_tasks_file
from capreplay.util.files import write_atomic
from capreplay.util.tables import markdown_table

PER_TYPE_PNG = "per_type.png"
STRAYED_SHOWN = 20
"""Episodes listed in the Markdown's off-snapshot section; report.json holds them all."""
URL_SHOWN = 120
"""Characters of a URL shown in the Markdown before it is cut short."""
NOT_JUDGED = "not judged yet: run `capreplay judge RUN_DIR`"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class AgentActivity(_Model):
    """What one agent's recorded episodes did: how long they took, what model use they cost, how they ended."""

    agent: str
    episodes: int = Field(description="Episodes recorded.")
    off_snapshot: int = Field(description="Episodes that requested URLs the snapshot could not answer.")
    mean_duration_s: float | None = Field(description="Mean wall-clock time of an episode; None without episodes.")
    median_duration_s: float | None = Field(description="Median wall-clock time of an episode.")
    mean_output_tokens: float | None = Field(description="Mean model output tokens per episode.")
    mean_input_tokens: float | None = Field(description="Mean model input tokens per episode.")
    mean_calls: float | None = Field(description="Mean model calls per episode.")
    answered: int = Field(description="Episodes that ended with an answer.")
    failed: int = Field(description="Episodes that ended in an error.")
    timeout: int = Field(description="Episodes stopped at the episode timeout.")
    step_limit: int = Field(description="Episodes stopped at the step limit.")


class StrayedEpisode(_Model):
    """An episode that left the snapshot, and the first request the snapshot could not answer."""

    episode: str = Field(description="The episode's id, ``<agent>/<repeat>/<task>``.")
    url: str = Field(description="The first URL that was missed or blocked.")
    result: RequestResult = Field(description="How the replay answered it: miss or blocked.")
    requests: int = Field(description="Requests of the episode that were missed or blocked.")


class GroupMetrics(_Model):
    """The judge's metrics over the tasks of one group: those of one site, one flow, or one number of sites."""

    by: Literal["site", "flow", "sites"] = Field(description="What the tasks are grouped by.")
    group: str = Field(description="The site's host, the flow, or the number of sites.")
    tasks: int = Field(description="Tasks of the group.")
    metrics: JudgeMetrics


class AgentReport(_Model):
    """Everything ``capreplay report`` writes about one agent run."""

    run_id: str
    agents: list[str] = Field(description="The run's agents, in the order it lists them.")
    tasks: int = Field(description="Distinct tasks planned.")
    repeats: int = Field(description="Repeats planned.")
    planned: int = Field(description="Episodes planned.")
    recorded: int = Field(description="Episodes recorded in episodes.jsonl.")
    activity: list[AgentActivity] = Field(description="Time, model use and endings per agent, agents in order.")
    metrics: JudgeMetrics | None = Field(description="The judge's metrics, agents in order; None: not judged yet.")
    unjudged: list[str] = Field(description="Recorded episodes without a verdict (the run grew after judging).")
    strayed: list[StrayedEpisode] = Field(description="Episodes that left the snapshot, in record order.")
    groups: list[GroupMetrics] = Field(
        default_factory=list,
        description="The metrics per site (a task counts for every site it spans), per flow and per number of "
        "sites, as CAP reports them; empty until judged.",
    )


def task_groups(tasks: Sequence[WorkflowTask]) -> dict[tuple[str, str], list[str]]:
    """``(by, group)`` -> the ids of its tasks: by every site a task spans, by flow and by number of sites."""
    groups: dict[tuple[str, str], list[str]] = {}
    for task in tasks:
        keys = [("site", site) for site in task.sites] + [("flow", task.flow), ("sites", str(len(task.sites)))]
        for key in keys:
            groups.setdefault(key, []).append(task.id)
    return dict(sorted(groups.items(), key=lambda item: (("site", "flow", "sites").index(item[0][0]), item[0][1])))


def group_metrics(verdicts: Sequence[EpisodeVerdict], tasks: Sequence[WorkflowTask]) -> list[GroupMetrics]:
    """The metrics of each group of :func:`task_groups` that has verdicts, computed over its episodes alone."""
    found = []
    for (by, group), ids in task_groups(tasks).items():
        mine = [v for v in verdicts if v.task in ids]
        if mine:
            chosen = [t for t in tasks if t.id in ids]
            found.append(GroupMetrics(by=by, group=group, tasks=len(ids),  # type: ignore[arg-type]
                                      metrics=compute_metrics(mine, chosen)))  # fmt: skip
    return found


def _mean(values: Sequence[float]) -> float | None:
    return statistics.fmean(values) if values else None


def agent_activity(agent: str, episodes: Sequence[EpisodeRecord]) -> AgentActivity:
    """The time, model use and endings of ``agent``'s episodes among ``episodes``."""
    mine = [e for e in episodes if e.key.agent == agent]
    durations = [e.duration_s for e in mine]
    statuses = [e.status for e in mine]
    return AgentActivity(
        agent=agent,
        episodes=len(mine),
        off_snapshot=sum(1 for e in mine if e.off_snapshot),
        mean_duration_s=_mean(durations),
        median_duration_s=statistics.median(durations) if durations else None,
        mean_output_tokens=_mean([e.usage.output_tokens for e in mine]),
        mean_input_tokens=_mean([e.usage.input_tokens for e in mine]),
        mean_calls=_mean([e.usage.calls for e in mine]),
        answered=statuses.count("answered"),
        failed=statuses.count("failed"),
        timeout=statuses.count("timeout"),
        step_limit=statuses.count("step_limit"),
    )


def strayed_episodes(episodes: Sequence[EpisodeRecord]) -> list[StrayedEpisode]:
    """Every episode that requested URLs the snapshot could not answer, with the first such request."""
    strayed = []
    for record in episodes:
        off = record.off_snapshot
        if off:
            strayed.append(StrayedEpisode(episode=record.key.id(), url=off[0].url, result=off[0].result,
                                          requests=len(off)))  # fmt: skip
    return strayed


def build_agent_report(
    info: AgentRunInfo,
    episodes: Sequence[EpisodeRecord],
    verdicts: Sequence[EpisodeVerdict] | None,
    tasks: Sequence[WorkflowTask],
) -> AgentReport:
    """The report of an agent run from its records; ``verdicts`` None when the run is not judged yet.

    Raises ValueError when a verdict does not fit ``tasks`` (see :func:`capreplay.judge.metrics.agent_metrics`).
    """
    # The run's own agent order, then any agent only the records name (a run.json edited after the fact).
    seen = [*info.agents, *sorted({e.key.agent for e in episodes} | {v.agent for v in verdicts or []})]
    agents = list(dict.fromkeys(seen))
    metrics = None
    unjudged: list[str] = []
    groups: list[GroupMetrics] = []
    if verdicts is not None:
        computed = compute_metrics(verdicts, tasks)
        metrics = JudgeMetrics(agents=sorted(computed.agents, key=lambda a: agents.index(a.agent)))
        judged = {v.episode for v in verdicts}
        unjudged = [e.key.id() for e in episodes if e.key.id() not in judged]
        groups = group_metrics(verdicts, tasks)
    return AgentReport(
        run_id=info.run_id,
        agents=agents,
        tasks=len({k.task for k in info.planned}),
        repeats=info.repeats,
        planned=len(info.planned),
        recorded=len(episodes),
        activity=[agent_activity(a, episodes) for a in agents],
        metrics=metrics,
        unjudged=unjudged,
        strayed=strayed_episodes(episodes),
        groups=groups,
    )


# ---------------------------------------------------------------------------------------------- Markdown


def _number(value: float | None, digits: int) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def _activity_cells(a: AgentActivity) -> list[str]:
    return [_number(a.mean_duration_s, 1), _number(a.median_duration_s, 1), _number(a.mean_output_tokens, 0),
            _number(a.mean_calls, 1), str(a.failed), str(a.timeout), str(a.step_limit)]  # fmt: skip


ACTIVITY_HEADER = ["mean time (s)", "median time (s)", "mean output tokens", "mean model calls", "failed",
                   "timeout", "step limit"]  # fmt: skip


def _agents_table(report: AgentReport) -> list[str]:
    """One row per agent: the metrics (when judged), the episode counts, then time, model use and endings."""
    if report.metrics is None:
        return markdown_table(["agent", "episodes", "off-snapshot", *ACTIVITY_HEADER],
                      [[a.agent, str(a.episodes), str(a.off_snapshot), *_activity_cells(a)]
                       for a in report.activity])  # fmt: skip
    judged = {m.agent: m for m in report.metrics.agents}
    rows = []
    for a in report.activity:
        m = judged.get(a.agent)
        scores = ["-"] * 4
        scored = unscored = "-"
        if m is not None:
            scores = [metric_cell(m.partial_completion), metric_cell(m.success_rate), metric_cell(m.action_score),
                      metric_cell(m.perception_score)]  # fmt: skip
            scored, unscored = str(m.scored), str(m.unscored)
        rows.append([a.agent, *scores, str(a.episodes), scored, unscored, str(a.off_snapshot), *_activity_cells(a)])
    header = ["agent", "partial completion", "success rate", "action score", "perception score", "episodes",
              "scored", "unscored", "off-snapshot", *ACTIVITY_HEADER]  # fmt: skip
    return markdown_table(header, rows)


def _shown_url(url: str) -> str:
    # A "|" would end the table cell; the percent-encoded form is the same URL.
    url = url.replace("|", "%7C")
    return url if len(url) <= URL_SHOWN else url[: URL_SHOWN - 1] + "…"


def _strayed_section(report: AgentReport) -> list[str]:
    if not report.strayed:
        return ["No episode requested a URL the snapshot does not hold."]
    lines = [f"{len(report.strayed)} episode(s) requested URLs the snapshot does not hold; the first of each:", "",
             *markdown_table(["episode", "first missed or blocked URL", "result", "off-snapshot requests"],
                     [[s.episode, f"`{_shown_url(s.url)}`", s.result, str(s.requests)]
                      for s in report.strayed[:STRAYED_SHOWN]])]  # fmt: skip
    if len(report.strayed) > STRAYED_SHOWN:
        lines += ["", f"… and {len(report.strayed) - STRAYED_SHOWN} more (all in {REPORT_JSON})."]
    return lines


def agent_report_markdown(report: AgentReport) -> str:
    """The report as Markdown: the agents table, the scores by type and by site, where agents left the snapshot."""
    lines = [f"# Agent run {report.run_id}", "",
             f"{', '.join(report.agents)} on {report.tasks} task(s), {report.repeats} repeat(s): "
             f"{report.recorded} of {report.planned} planned episodes recorded.", "", "## Agents", ""]  # fmt: skip
    if report.metrics is None:
        lines += [NOT_JUDGED, "", "Time, output tokens and model calls per recorded episode.", ""]
    else:
        lines += ["Scores over scored episodes: with two or more repeats the mean of the per-repeat values and its "
                  "95% Student t interval, otherwise the value over all episodes; unscored episodes are in no "
                  "mean. Time, output tokens and model calls per recorded episode.", ""]  # fmt: skip
    lines += _agents_table(report)
    if report.unjudged:
        lines += ["", f"{len(report.unjudged)} recorded episode(s) have no verdict: run `capreplay judge RUN_DIR` "
                  "again."]  # fmt: skip
    if report.metrics is not None:
        metrics = report.metrics
        lines += ["", "## By covered-point type", "",
                  "Mean score of the leaves verifying points of each CAP code, and their number.", "",
                  *group_table("type", metrics, lambda a: a.by_code, lambda key: (False, key)),
                  "", "## By site", "",
                  f"Mean score of the leaves whose point is on each site; {NO_POINT}: leaves that verify no point.",
                  "", *group_table("site", metrics, lambda a: a.by_site, lambda key: (key == NO_POINT, key)),
                  "", f"![scores by covered-point type]({PER_TYPE_PNG})"]  # fmt: skip
        lines += _groups_section(report)
    lines += ["", "## Off the snapshot", "", *_strayed_section(report)]
    return "\n".join(lines) + "\n"


_GROUP_TITLES = {"site": "By application (site)", "flow": "By flow", "sites": "By number of sites"}


def _groups_section(report: AgentReport) -> list[str]:
    """Success rate and partial completion per agent over each group's tasks, as CAP reports a benchmark."""
    lines: list[str] = []
    for by, title in _GROUP_TITLES.items():
        groups = [g for g in report.groups if g.by == by]
        if not groups:
            continue
        header = [by, "tasks", *(f"{agent}: success rate" for agent in report.agents),
                  *(f"{agent}: partial completion" for agent in report.agents)]  # fmt: skip
        rows = []
        for g in groups:
            scores = {m.agent: m for m in g.metrics.agents}
            rows.append([g.group, str(g.tasks),
                         *(metric_cell(scores[a].success_rate) if a in scores else "-" for a in report.agents),
                         *(metric_cell(scores[a].partial_completion) if a in scores else "-" for a in report.agents)])
        lines += ["", f"## {title}", "", "Over the scored episodes of the group's tasks (a task counts for every "
                  "site it spans), with the intervals of the table above.", "", *markdown_table(header, rows)]
    return lines


def per_type_png(report: AgentReport) -> bytes:
    """Mean leaf score per CAP code as grouped horizontal bars, one bar per agent (no bars: not judged)."""
    agents: list[AgentMetrics] = [] if report.metrics is None else report.metrics.agents
    codes = sorted({code for a in agents for code in a.by_code})
    scores = {(code, a.agent): a.by_code[code].mean for a in agents for code in a.by_code}
    title = f"Scores by covered-point type, run {report.run_id}" + (" (not judged yet)" if not agents else "")
    return score_bars_png(codes, [a.agent for a in agents], scores, title, "mean leaf score", "CAP code")


# ---------------------------------------------------------------------------------------------- I/O


def is_agent_run(folder: Path) -> bool:
    """Whether ``folder``'s run.json is an agent run's (its "kind" is "agents").

    An unreadable or invalid run.json is not, so the study report names what is wrong with it.
    """
    try:
        data = json.loads((folder / RUN_FILE).read_bytes())
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and data.get("kind") == "agents"


def report_agent_folder(folder: Path) -> AgentReport:
    """Read an agent run folder and build its report (nothing written); a bad folder is an ``InputError``.

    The tasks file is read only when the run is judged: the scores by type need its covered points.
    """
    info = read_agent_run(folder)
    episodes = read_episodes(folder)
    path = folder / VERDICTS_FILE
    if not path.exists():
        return build_agent_report(info, episodes, None, [])
    verdicts = read_lines(path, EpisodeVerdict, lambda v: v.episode, "verdict").records
    workflows = load_tasks_file(Path(info.tasks_file)).workflows
    if workflows is None:
        raise InputError("has no 'workflows' section", info.tasks_file)
    try:
        return build_agent_report(info, episodes, verdicts, workflows.tasks)
    except ValueError as e:
        raise InputError(str(e), path) from e


def write_agent_report(out: Path, report: AgentReport) -> list[Path]:
    """Write the Markdown, the JSON and the plot into ``out`` (created if needed); returns the paths."""
    out.mkdir(parents=True, exist_ok=True)
    files = {
        REPORT_MD: agent_report_markdown(report).encode("utf-8"),
        REPORT_JSON: (report.model_dump_json(indent=1) + "\n").encode("utf-8"),
        PER_TYPE_PNG: per_type_png(report),
    }
    for name, data in files.items():
        write_atomic(out / name, data)
    return [out / name for name in files]
