"""The figures a study report prints equal values worked out by hand or published, not by the code under test.

Wilson intervals: Newcombe R. G. (1998), "Two-sided confidence intervals for the single proportion",
Statistics in Medicine 17:857-872, Table I, method 3 (81/263 -> 0.2553-0.3662, 15/148 -> 0.0624-0.1605,
0/20 -> 0-0.1611). Student t: the printed table's t(4) = 2.776 (Fisher & Yates, Table III).
"""

from __future__ import annotations

import math
from datetime import UTC, datetime

import pytest

from capreplay.report.study import accuracy, build_run_report, run_report_markdown
from capreplay.study.records import CallVerdict, Cell, RunInfo, RunRecord, TaskInfo

WHEN = datetime(2026, 11, 30, tzinfo=UTC)


def record(cell: Cell, correct: bool) -> RunRecord:
    return RunRecord(cell=cell, request_sha256="0" * 64, started_at=WHEN, latency_s=0.1, answer_text="{}",
                     verdict=CallVerdict(correct=correct, reason=None if correct else "wrong"))  # fmt: skip


def run_info(cells: list[Cell], repeats: int) -> RunInfo:
    return RunInfo(run_id="ref", registration=None, created_at=WHEN, seed=1, repeats=repeats,
                   representations=["markdown"], model_settings={"model": "m"}, planned=cells)  # fmt: skip


@pytest.mark.parametrize(
    ("correct", "calls", "low", "high"), [(81, 263, 0.2553, 0.3662), (15, 148, 0.0624, 0.1605), (0, 20, 0.0, 0.1611)]
)
def test_accuracy_carries_newcombes_wilson_interval(correct: int, calls: int, low: float, high: float) -> None:
    result = accuracy(correct, calls)
    assert (result.correct, result.calls, result.accuracy) == (correct, calls, correct / calls)
    assert result.low == pytest.approx(low, abs=5e-5) and result.high == pytest.approx(high, abs=5e-5)


def test_accuracy_without_calls_has_no_figure() -> None:
    result = accuracy(0, 0)
    assert (result.accuracy, result.low, result.high) == (None, None, None)


def test_the_report_tables_print_newcombes_intervals() -> None:
    # one repeat: READ right on 81 of 263 calls, ACT on 15 of 148, each call on a task of its own
    tasks = [TaskInfo(id=f"read.{i}", page="p", kind="READ", location=None) for i in range(263)]
    tasks += [TaskInfo(id=f"act.{i}", page="p", kind="ACT", location=None) for i in range(148)]
    cells = [Cell(repeat=0, page="p", task=t.id, representation="markdown") for t in tasks]
    right = {f"read.{i}" for i in range(81)} | {f"act.{i}" for i in range(15)}
    records = [record(c, c.task in right) for c in cells]
    report = build_run_report(run_info(cells, 1), records, tasks, {})

    (row,) = report.study.rows
    assert (row.read.correct, row.read.calls, row.act.correct, row.act.calls) == (81, 263, 15, 148)
    assert (row.read.low, row.read.high) == (pytest.approx(0.2553, abs=5e-5), pytest.approx(0.3662, abs=5e-5))
    assert (row.act.low, row.act.high) == (pytest.approx(0.0624, abs=5e-5), pytest.approx(0.1605, abs=5e-5))
    markdown = run_report_markdown(report)
    # 81/263 = 0.308, 15/148 = 0.101, to two decimals as printed
    assert "| 0.31 [0.26, 0.37] (81/263) | 0.10 [0.06, 0.16] (15/148) |" in markdown
    # one repeat: the mean is the accuracy over all 411 calls, 96/411 = 0.2336, and there is no t interval
    (spread,) = [s for s in report.over_repeats if s.kind == "all"]
    assert spread.per_repeat == [pytest.approx(96 / 411)] and (spread.low, spread.high) == (None, None)
    assert "| markdown | 0.31 (0.31) | 0.10 (0.10) | 0.23 (0.23) |" in markdown


def test_the_spread_over_repeats_is_the_hand_computed_t_interval() -> None:
    # five repeats of ten READ calls, right on 6, 7, 8, 7, 7: per-repeat 0.6, 0.7, 0.8, 0.7, 0.7, mean 0.7,
    # s = sqrt((0.01 + 0 + 0.01 + 0 + 0) / 4) = sqrt(0.005), s / sqrt(5) = sqrt(0.001), t(4) = 2.776
    rights = [6, 7, 8, 7, 7]
    tasks = [TaskInfo(id=f"read.{i}", page="p", kind="READ", location=None) for i in range(10)]
    cells = [Cell(repeat=r, page="p", task=t.id, representation="markdown") for r in range(5) for t in tasks]
    records = [record(c, int(c.task.split(".")[1]) < rights[c.repeat]) for c in cells]
    report = build_run_report(run_info(cells, 5), records, tasks, {})

    half = 2.776 * math.sqrt(0.001)  # 0.08778
    spreads = {s.kind: s for s in report.over_repeats}
    for kind in ("READ", "all"):
        s = spreads[kind]
        assert s.per_repeat == [0.6, 0.7, 0.8, 0.7, 0.7]
        assert s.mean == pytest.approx(0.7)
        assert s.low == pytest.approx(0.7 - half, abs=1e-6) and s.high == pytest.approx(0.7 + half, abs=1e-6)
    assert spreads["ACT"].per_repeat == [] and spreads["ACT"].mean is None
    # 0.7 - 0.0878 = 0.6122, 0.7 + 0.0878 = 0.7878
    spread = "0.70 [0.61, 0.79] (0.60, 0.70, 0.80, 0.70, 0.70)"
    assert f"| markdown | {spread} | - | {spread} |" in run_report_markdown(report)
    # the Wilson interval over the 50 calls is another figure: 35/50 -> 0.5625-0.8090 (scipy's binomtest
    # proportion_ci, method "wilson": 0.562496-0.808964)
    (row,) = report.study.rows
    assert (row.read.low, row.read.high) == (pytest.approx(0.5625, abs=5e-4), pytest.approx(0.8090, abs=5e-4))
