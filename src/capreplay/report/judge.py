"""The judge's report of an agent run: its metrics as Markdown (``judge.md``), from ``verdicts.jsonl`` alone.

:func:`metrics_table` is pure; :func:`report_judged_folder` reads a judged run folder and recomputes the
metrics from its verdicts and the covered points of the run's tasks file.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from capreplay.agents.run import read_agent_run
from capreplay.errors import InputError
from capreplay.judge.metrics import NO_POINT, AgentMetrics, JudgeMetrics, LeafMean, Metric, compute_metrics
from capreplay.judge.run_verdicts import METRICS_FILE, VERDICTS_FILE
from capreplay.judge.verdict import EpisodeVerdict
from capreplay.runs.log import read_lines
from capreplay.runs.tasks_file import load_tasks_file
from capreplay.util.files import write_atomic
from capreplay.util.tables import markdown_table

JUDGE_MD = "judge.md"


def metric_cell(metric: Metric) -> str:
    """A metric as a cell: the mean over repeats with its interval, else the value over all episodes."""
    if metric.mean is not None and metric.low is not None and metric.high is not None:
        return f"{metric.mean:.2f} [{metric.low:.2f}, {metric.high:.2f}]"
    return "-" if metric.value is None else f"{metric.value:.2f}"


def group_table(first: str, metrics: JudgeMetrics, groups: Callable[[AgentMetrics], dict[str, LeafMean]],
                 order: Callable[[str], tuple[bool, str]]) -> list[str]:  # fmt: skip
    """A table of leaf means per group key (a CAP code, a site), a column per agent."""
    keys = sorted({key for a in metrics.agents for key in groups(a)}, key=order)
    rows = []
    for key in keys:
        cells = [groups(a).get(key) for a in metrics.agents]
        rows.append([key, *("-" if c is None else f"{c.mean:.2f} (n={c.n})" for c in cells)])
    return markdown_table([first, *(a.agent for a in metrics.agents)], rows)


def metrics_table(metrics: JudgeMetrics) -> str:
    """The metrics as Markdown: one table comparing the agents, one by covered-point type, one by site."""
    lines = ["## Agents", "",
             "Over scored episodes. With two or more repeats: the mean of the per-repeat values and its 95% "
             "Student t interval; otherwise the value over all episodes. Unscored episodes are not in any mean.",
             "",
             *markdown_table(["agent", "partial completion", "success rate", "action score", "perception score",
                              "episodes", "unscored", "off-snapshot"],
                             [[a.agent, metric_cell(a.partial_completion), metric_cell(a.success_rate),
                               metric_cell(a.action_score), metric_cell(a.perception_score), str(a.episodes),
                               str(a.unscored), str(a.off_snapshot)]
                              for a in metrics.agents]),
             "", "## By covered-point type", "",
             "Mean score of the leaves verifying points of each CAP code, and their number.", "",
             *group_table("type", metrics, lambda a: a.by_code, lambda key: (False, key)),
             "", "## By site", "",
             f"Mean score of the leaves whose point is on each site; {NO_POINT}: leaves that verify no point.", "",
             *group_table("site", metrics, lambda a: a.by_site, lambda key: (key == NO_POINT, key))]  # fmt: skip
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------------- I/O


def read_verdicts(folder: Path) -> list[EpisodeVerdict]:
    """The verdicts of a judged run; a run not judged yet is one ``InputError`` line saying how to judge it."""
    path = folder / VERDICTS_FILE
    if not path.exists():
        raise InputError(f"not judged yet (no {VERDICTS_FILE}): run `capreplay judge {folder}`", folder)
    return read_lines(path, EpisodeVerdict, lambda v: v.episode, "verdict").records


def report_judged_folder(folder: Path) -> JudgeMetrics:
    """The judge's metrics of a judged agent run folder, recomputed from its verdicts (nothing written)."""
    info = read_agent_run(folder)
    verdicts = read_verdicts(folder)
    workflows = load_tasks_file(Path(info.tasks_file)).workflows
    if workflows is None:
        raise InputError("has no 'workflows' section", info.tasks_file)
    return compute_metrics(verdicts, workflows.tasks)


def write_judge_report(out: Path, metrics: JudgeMetrics) -> list[Path]:
    """Write ``judge.md`` and ``metrics.json`` into ``out`` (created if needed); returns the paths.

    ``capreplay judge`` writes them into the run folder after judging; ``capreplay report`` anywhere.
    """
    out.mkdir(parents=True, exist_ok=True)
    files = {JUDGE_MD: metrics_table(metrics).encode("utf-8"),
             METRICS_FILE: (metrics.model_dump_json(indent=1) + "\n").encode("utf-8")}  # fmt: skip
    for name, data in files.items():
        write_atomic(out / name, data)
    return [out / name for name in files]
