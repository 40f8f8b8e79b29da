"""Accuracy over repeats: the spread of per-repeat accuracy, next to the Wilson interval over calls.

The Wilson interval of :mod:`capreplay.report.study` treats every call as an independent trial. Over
repeats, each repeat's accuracy is one observation: its mean and a 95% Student t interval say how much a
whole rerun of the study moves the figure. Pure functions of the run's records.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from capreplay.study.records import RunRecord, TaskInfo
from capreplay.util.stats import mean_interval


class RepeatSpread(BaseModel):
    """Per-repeat accuracy of one representation on one task kind."""

    model_config = ConfigDict(frozen=True)

    representation: str
    kind: str = Field(description="READ, ACT or all.")
    per_repeat: list[float] = Field(description="Accuracy of each repeat that has calls, in repeat order.")
    mean: float | None = Field(description="Mean of the per-repeat accuracies; None without calls.")
    low: float | None = Field(description="Lower end of the 95% t interval (None with fewer than 2 repeats).")
    high: float | None = Field(description="Upper end of the 95% t interval (None with fewer than 2 repeats).")


def repeat_spreads(representations: Sequence[str], records: Sequence[RunRecord],
                   tasks: dict[str, TaskInfo]) -> list[RepeatSpread]:  # fmt: skip
    """For each representation and kind (READ, ACT, all), the spread of accuracy over the run's repeats."""
    rows = []
    for name in representations:
        mine = [r for r in records if r.cell.representation == name]
        for kind in ("READ", "ACT", "all"):
            chosen = [r for r in mine if kind == "all" or tasks[r.cell.task].kind == kind]
            per_repeat = []
            for repeat in sorted({r.cell.repeat for r in chosen}):
                calls = [r for r in chosen if r.cell.repeat == repeat]
                per_repeat.append(sum(bool(r.verdict and r.verdict.correct) for r in calls) / len(calls))
            mean, low, high = mean_interval(per_repeat)
            rows.append(RepeatSpread(representation=name, kind=kind, per_repeat=per_repeat, mean=mean, low=low,
                                     high=high))  # fmt: skip
    return rows
