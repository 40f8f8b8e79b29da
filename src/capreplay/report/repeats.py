"""Accuracy over repeats: the spread of per-repeat accuracy, next to the Wilson interval over calls.

The Wilson interval of :mod:`capreplay.study.run_report` treats every call as an independent trial. Over
repeats, each repeat's accuracy is one observation: its mean and a 95% Student t interval say how much a
whole rerun of the study moves the figure. Pure functions of the run's records.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from capreplay.study.run_report import TaskInfo
from capreplay.study.runs import RunRecord

T_95 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
        2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
        2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042)  # fmt: skip
"""Two-sided 95% critical values of Student's t for 1 to 30 degrees of freedom."""
Z_95 = 1.959963984540054


def t_critical(df: int) -> float:
    """The two-sided 95% critical value of Student's t with ``df`` degrees of freedom."""
    if df < 1:
        raise ValueError("degrees of freedom must be at least 1")
    if df <= len(T_95):
        return T_95[df - 1]
    # Cornish-Fisher expansion around the normal quantile; within 1e-3 of the exact value beyond 30.
    z = Z_95
    return z + (z**3 + z) / (4 * df) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df * df)


class RepeatSpread(BaseModel):
    """Per-repeat accuracy of one representation on one task kind."""

    model_config = ConfigDict(frozen=True)

    representation: str
    kind: str = Field(description="READ, ACT or all.")
    per_repeat: list[float] = Field(description="Accuracy of each repeat that has calls, in repeat order.")
    mean: float | None = Field(description="Mean of the per-repeat accuracies; None without calls.")
    low: float | None = Field(description="Lower end of the 95% t interval (None with fewer than 2 repeats).")
    high: float | None = Field(description="Upper end of the 95% t interval (None with fewer than 2 repeats).")


def spread(values: Sequence[float]) -> tuple[float | None, float | None, float | None]:
    """Mean and 95% t interval of ``values``, the interval clipped to [0, 1]; no interval for fewer than 2."""
    if not values:
        return None, None, None
    mean = statistics.fmean(values)
    if len(values) < 2:
        return mean, None, None
    half = t_critical(len(values) - 1) * statistics.stdev(values) / math.sqrt(len(values))
    return mean, max(0.0, mean - half), min(1.0, mean + half)


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
            mean, low, high = spread(per_repeat)
            rows.append(RepeatSpread(representation=name, kind=kind, per_repeat=per_repeat, mean=mean, low=low,
                                     high=high))  # fmt: skip
    return rows
