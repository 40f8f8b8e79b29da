"""The full report of a study run folder: the tables of :mod:`capreplay.study.run_report`, accuracy over
repeats, the figures per page kind, and the two plots.

:func:`build_run_report` and :func:`run_report_markdown` are pure; :func:`report_folder` reads the run folder
and :func:`write_run_report` writes ``report.md``, ``report.json`` and the PNGs into the output folder.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, Field

from capreplay.archive.writer import write_atomic
from capreplay.errors import InputError
from capreplay.report.plots import PagePoint, tokens_accuracy_png, tokens_per_page_png
from capreplay.report.repeats import RepeatSpread, repeat_spreads
from capreplay.study.call_tokens import CallTokens
from capreplay.study.run_report import TASK_INDEX_FILE, StudyReport, TaskInfo, build_report, load_run, report_markdown
from capreplay.study.runs import Cell, RunInfo, RunRecord

REPORT_MD = "report.md"
REPORT_JSON = "report.json"
TOKENS_ACCURACY_PNG = "tokens_vs_accuracy.png"
TOKENS_PER_PAGE_PNG = "tokens_per_page.png"


class RunReport(BaseModel):
    """Everything ``capreplay report`` writes about one run."""

    study: StudyReport = Field(description="The per-representation tables (Wilson intervals over calls).")
    repeats: int = Field(description="Repeats recorded.")
    over_repeats: list[RepeatSpread] = Field(description="Accuracy per repeat, its mean and 95% t interval.")
    pages: list[PagePoint] = Field(description="Tokens and accuracy per representation and page kind.")


def page_points(info: RunInfo, records: Sequence[RunRecord], tokens: dict[Cell, CallTokens]) -> list[PagePoint]:
    """Per representation and page, in run order: mean offline representation tokens per call, and accuracy."""
    pages = list(dict.fromkeys(c.page for c in info.planned))
    points = []
    for name in info.representations:
        for page in pages:
            mine = [r for r in records if r.cell.representation == name and r.cell.page == page]
            counted = [tokens[r.cell].offline for r in mine if r.cell in tokens]
            if not counted:
                continue
            right = sum(bool(r.verdict and r.verdict.correct) for r in mine)
            points.append(PagePoint(representation=name, page=page, tokens=sum(counted) / len(counted),
                                    accuracy=right / len(mine)))  # fmt: skip
    return points


def build_run_report(info: RunInfo, records: Sequence[RunRecord], tasks: Sequence[TaskInfo],
                     tokens: dict[Cell, CallTokens]) -> RunReport:  # fmt: skip
    """The report of a run from its records alone."""
    by_id = {t.id: t for t in tasks}
    return RunReport(study=build_report(info, records, tasks, tokens),
                     repeats=len({r.cell.repeat for r in records}),
                     over_repeats=repeat_spreads(info.representations, records, by_id),
                     pages=page_points(info, records, tokens))  # fmt: skip


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    return lines + ["| " + " | ".join(row) + " |" for row in rows]


def _spread(s: RepeatSpread) -> str:
    if s.mean is None:
        return "-"
    if s.low is None or s.high is None:
        return f"{s.mean:.2f}"
    return f"{s.mean:.2f} [{s.low:.2f}, {s.high:.2f}]"


def run_report_markdown(report: RunReport) -> str:
    """The report as Markdown: the run's tables, accuracy over repeats, figures per page, and the plots."""
    lines = [report_markdown(report.study).rstrip("\n"), "", "## Accuracy over repeats", "",
             f"{report.repeats} repeat(s). Mean of the per-repeat accuracies with its 95% Student t interval "
             "(none with fewer than 2 repeats); the per-repeat accuracies in parentheses.", ""]  # fmt: skip
    cell = {(s.representation, s.kind): s for s in report.over_repeats}
    names = list(dict.fromkeys(s.representation for s in report.over_repeats))
    rows = []
    for name in names:
        row = [name]
        for kind in ("READ", "ACT", "all"):
            s = cell[name, kind]
            row.append(f"{_spread(s)} ({', '.join(f'{v:.2f}' for v in s.per_repeat)})" if s.per_repeat else "-")
        rows.append(row)
    lines += _table(["representation", "READ", "ACT", "all"], rows)
    pages = list(dict.fromkeys(p.page for p in report.pages))
    point = {(p.page, p.representation): p for p in report.pages}
    by_page = [[page, *(f"{point[page, n].tokens:,.0f} / {point[page, n].accuracy:.2f}"
                        if (page, n) in point and point[page, n].accuracy is not None else "-" for n in names)]
               for page in pages]  # fmt: skip
    lines += ["", "## Per page kind", "", "Mean representation tokens per call (o200k_base; the image rule for a "
              "screenshot) / accuracy over READ and ACT calls.", "", *_table(["page", *names], by_page)]  # fmt: skip
    lines += ["", "## Plots", "", f"![tokens against accuracy]({TOKENS_ACCURACY_PNG})", "",
              f"![tokens per page]({TOKENS_PER_PAGE_PNG})"]  # fmt: skip
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------------- I/O


def report_folder(folder: Path) -> RunReport:
    """Read a run folder and build its report (nothing written); a bad folder is an ``InputError``."""
    info, records, tasks, tokens = load_run(folder)
    known = {t.id for t in tasks}
    missing = sorted({r.cell.task for r in records} - known)
    if missing:
        raise InputError(f"task {missing[0]!r} is recorded but not in the task index", folder / TASK_INDEX_FILE)
    return build_run_report(info, records, tasks, tokens)


def write_run_report(out: Path, report: RunReport) -> list[Path]:
    """Write the Markdown, the JSON and both plots into ``out`` (created if needed); returns the paths."""
    out.mkdir(parents=True, exist_ok=True)
    files = {
        REPORT_MD: run_report_markdown(report).encode("utf-8"),
        REPORT_JSON: (report.model_dump_json(indent=1) + "\n").encode("utf-8"),
        TOKENS_ACCURACY_PNG: tokens_accuracy_png(report.pages, f"Tokens against accuracy, run {report.study.run_id}"),
        TOKENS_PER_PAGE_PNG: tokens_per_page_png(report.pages, f"Tokens per page, run {report.study.run_id}"),
    }
    for name, data in files.items():
        write_atomic(out / name, data)
    return [out / name for name in files]
