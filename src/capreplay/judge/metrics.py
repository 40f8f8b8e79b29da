"""The judge's metrics over a run's verdicts (CAP, section 4.4), per agent, per covered-point type and per site.

Per agent, over its scored episodes: partial completion (mean root score), success rate (share of
episodes that passed), action score and perception score (mean score of every action, or perception,
leaf). Unscored episodes are left out of the means and counted, as are episodes that left the snapshot.
With two or more repeats each metric also gets its value per repeat and their mean with a 95% Student t
interval (:func:`capreplay.report.repeats.spread`). Leaf scores are also broken down by the CAP code of
the covered point a leaf verifies and by that point's site. Pure, no I/O.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterable, Sequence

from pydantic import BaseModel, ConfigDict, Field

from capreplay.judge.verdict import EpisodeVerdict, LeafVerdict
from capreplay.models.workflow import CoveredPoint, WorkflowTask
from capreplay.util.stats import mean_interval

NO_POINT = "(no point)"
"""The site under which leaves that verify no covered point are counted."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Metric(_Model):
    """One metric of one agent: over all its scored episodes, and per repeat."""

    value: float | None = Field(description="Over all scored episodes together; None when nothing was measured.")
    per_repeat: list[float] = Field(description="The value in each repeat that measured it, in repeat order.")
    mean: float | None = Field(description="Mean of the per-repeat values.")
    low: float | None = Field(description="Lower end of the 95% t interval (None with fewer than 2 repeats).")
    high: float | None = Field(description="Upper end of the 95% t interval (None with fewer than 2 repeats).")


class LeafMean(_Model):
    """The mean score of a group of leaves."""

    mean: float = Field(description="Mean leaf score (the share of the leaves that passed).")
    n: int = Field(ge=1, description="Leaves in the group, over all scored episodes.")


class AgentMetrics(_Model):
    """Everything measured about one agent."""

    agent: str
    episodes: int = Field(description="Episodes judged.")
    scored: int = Field(description="Episodes the judge scored.")
    unscored: int = Field(description="Episodes the judge could not score; left out of every mean.")
    off_snapshot: int = Field(description="Episodes that requested URLs the snapshot does not hold.")
    repeats: int = Field(description="Distinct repeats among the agent's episodes.")
    partial_completion: Metric = Field(description="Mean root score.")
    success_rate: Metric = Field(description="Share of scored episodes in which every node scored 1.")
    action_score: Metric = Field(description="Mean score of the action leaves.")
    perception_score: Metric = Field(description="Mean score of the perception leaves.")
    by_code: dict[str, LeafMean] = Field(description="Leaf scores by the CAP code of the point they verify.")
    by_site: dict[str, LeafMean] = Field(description=f"Leaf scores by their point's site ({NO_POINT!r}: none).")


class JudgeMetrics(_Model):
    """The metrics of every agent of a run, agents in name order."""

    agents: list[AgentMetrics]


def _mean(values: Sequence[float]) -> float | None:
    return statistics.fmean(values) if values else None


def _leaf_scores(episodes: Sequence[EpisodeVerdict], kind: str) -> list[float]:
    return [1.0 if leaf.passed else 0.0 for v in episodes for leaf in v.leaves if leaf.kind == kind]


def _root_scores(episodes: Sequence[EpisodeVerdict]) -> list[float]:
    return [v.score for v in episodes if v.score is not None]


def _passes(episodes: Sequence[EpisodeVerdict]) -> list[float]:
    return [1.0 if v.passed else 0.0 for v in episodes]


def _metric(
    scored: Sequence[EpisodeVerdict], repeats: Sequence[int], values: Callable[[Sequence[EpisodeVerdict]], list[float]]
) -> Metric:
    """A metric whose value is the mean of ``values(episodes)``, over all scored episodes and per repeat."""
    per_repeat = []
    for repeat in repeats:
        value = _mean(values([v for v in scored if v.repeat == repeat]))
        if value is not None:
            per_repeat.append(value)
    mean, low, high = mean_interval(per_repeat)
    return Metric(value=_mean(values(scored)), per_repeat=per_repeat, mean=mean, low=low, high=high)


def _point(leaf: LeafVerdict, verdict: EpisodeVerdict, tasks: dict[str, WorkflowTask]) -> CoveredPoint | None:
    """The covered point ``leaf`` verifies, from the episode's task."""
    if leaf.point is None:
        return None
    task = tasks.get(verdict.task)
    if task is None:
        raise ValueError(f"episode {verdict.episode!r} is of task {verdict.task!r}, which is not among the tasks")
    for point in task.covered_points:
        if point.id == leaf.point:
            return point
    raise ValueError(f"episode {verdict.episode!r}: leaf {leaf.node!r} verifies point {leaf.point!r}, "
                     f"which task {task.id!r} does not have")  # fmt: skip


def _groups(scored: Sequence[EpisodeVerdict], tasks: dict[str, WorkflowTask]) -> tuple[dict[str, LeafMean], ...]:
    """Leaf means by covered-point code and by site, keys sorted (leaves without a point last, by site)."""
    by_code: dict[str, list[float]] = {}
    by_site: dict[str, list[float]] = {}
    for verdict in scored:
        for leaf in verdict.leaves:
            score = 1.0 if leaf.passed else 0.0
            point = _point(leaf, verdict, tasks)
            if point is not None:
                by_code.setdefault(point.code, []).append(score)
            by_site.setdefault(NO_POINT if point is None else point.site, []).append(score)
    site_order = sorted(by_site, key=lambda site: (site == NO_POINT, site))
    return (
        {code: LeafMean(mean=statistics.fmean(by_code[code]), n=len(by_code[code])) for code in sorted(by_code)},
        {site: LeafMean(mean=statistics.fmean(by_site[site]), n=len(by_site[site])) for site in site_order},
    )


def agent_metrics(agent: str, verdicts: Sequence[EpisodeVerdict], tasks: Iterable[WorkflowTask]) -> AgentMetrics:
    """The metrics of ``agent`` from its episodes among ``verdicts`` (other agents' are ignored).

    Raises ValueError for a scored episode without a score or pass, and for a leaf whose covered point
    is not in its episode's task.
    """
    by_id = {task.id: task for task in tasks}
    mine = [v for v in verdicts if v.agent == agent]
    scored = [v for v in mine if v.scored]
    for v in scored:
        if v.score is None or v.passed is None:
            raise ValueError(f"episode {v.episode!r} is scored but has no score or pass")
    repeats = sorted({v.repeat for v in mine})
    by_code, by_site = _groups(scored, by_id)
    return AgentMetrics(
        agent=agent,
        episodes=len(mine),
        scored=len(scored),
        unscored=len(mine) - len(scored),
        off_snapshot=sum(1 for v in mine if v.off_snapshot),
        repeats=len(repeats),
        partial_completion=_metric(scored, repeats, _root_scores),
        success_rate=_metric(scored, repeats, _passes),
        action_score=_metric(scored, repeats, lambda eps: _leaf_scores(eps, "action")),
        perception_score=_metric(scored, repeats, lambda eps: _leaf_scores(eps, "perception")),
        by_code=by_code,
        by_site=by_site,
    )


def compute_metrics(verdicts: Sequence[EpisodeVerdict], tasks: Iterable[WorkflowTask]) -> JudgeMetrics:
    """The metrics of every agent that has a verdict, agents in name order."""
    task_list = list(tasks)
    return JudgeMetrics(agents=[agent_metrics(a, verdicts, task_list) for a in sorted({v.agent for v in verdicts})])
