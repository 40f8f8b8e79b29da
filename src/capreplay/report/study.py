"""The report of a study run folder, from its records alone: per-representation tables, accuracy over
repeats, figures per page kind, and two plots.

Pure building (:func:`build_report`, :func:`build_run_report`, the Markdown) from what a run folder holds:
``run.json``, ``calls.jsonl`` (:class:`RunRecord`), ``tokens.jsonl`` (:class:`CallTokens`) and
``task_index.json`` (each task's kind and location, written when the run starts); :func:`report_folder`
and :func:`write_run_report` are the I/O at the edges.

Accuracy counts every recorded call, as the earlier study did: a failed call (error) and a reply with no
answer of the format (unparseable) count as incorrect, and are also counted apart. ``not representable``
failures are counted apart and never change accuracy. Tokens per correct answer divide the input tokens
billed over all calls of a representation by its correct answers; the representation's own share (the
offline ``representation_tokens``) per correct answer is given too.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from capreplay.errors import InputError
from capreplay.report import REPORT_JSON, REPORT_MD
from capreplay.report.plots import PagePoint, tokens_accuracy_png, tokens_per_page_png
from capreplay.report.repeats import RepeatSpread, repeat_spreads
from capreplay.runs.folder import read_run_info
from capreplay.study.records import CallTokens, Cell, PageFailureRecord, RunInfo, RunRecord, TaskIndex, TaskInfo
from capreplay.study.run_files import CALLS_FILE, TASK_INDEX_FILE, read_page_failures, read_records, read_tokens
from capreplay.util.files import read_model, write_atomic
from capreplay.util.stats import wilson_interval
from capreplay.util.tables import markdown_table

TOKENS_ACCURACY_PNG = "tokens_vs_accuracy.png"
TOKENS_PER_PAGE_PNG = "tokens_per_page.png"


class Accuracy(BaseModel):
    """Correct answers out of calls, with a 95% Wilson interval."""

    model_config = ConfigDict(frozen=True)

    correct: int
    calls: int
    accuracy: float | None = Field(description="correct / calls; None without calls.")
    low: float | None = Field(description="Lower end of the 95% Wilson score interval.")
    high: float | None = Field(description="Upper end of the 95% Wilson score interval.")


def accuracy(correct: int, calls: int) -> Accuracy:
    """``correct`` of ``calls`` with its 95% Wilson score interval (which stays inside [0, 1] for small counts)."""
    if calls == 0:
        return Accuracy(correct=0, calls=0, accuracy=None, low=None, high=None)
    low, high = wilson_interval(correct, calls)
    return Accuracy(correct=correct, calls=calls, accuracy=correct / calls, low=low, high=high)


class RepresentationRow(BaseModel):
    """The figures of one representation."""

    representation: str
    calls: int
    read: Accuracy
    act: Accuracy
    mean_tokens_o200k: float | None = Field(
        description="Mean offline representation_tokens per call (o200k_base; image rule for a screenshot)."
    )
    mean_tokens_api: float | None = Field(description="Mean representation_tokens by the provider's count.")
    mean_tokens_api_usage: float | None = Field(description="Mean billed input tokens minus the empty prompt.")
    input_tokens: int = Field(description="Input tokens billed over all calls.")
    tokens_per_correct: float | None = Field(description="input_tokens / correct answers; None with none correct.")
    representation_tokens_per_correct: float | None = Field(
        description="Offline representation_tokens over all calls / correct answers."
    )
    errors: int = Field(description="Calls that failed (no answer); counted as incorrect.")
    unparseable: int = Field(description="Replies with no answer of the format; counted as incorrect.")
    not_representable: int = Field(description="Incorrect answers on tasks the representation does not carry.")
    unscored: int = Field(description="Records without a verdict.")


class LocationRow(BaseModel):
    """Accuracy of one representation on tasks of one location tag."""

    representation: str
    location: str
    result: Accuracy


class StudyReport(BaseModel):
    """The whole report of a run."""

    run_id: str
    registration: str | None
    model: str
    planned: int
    recorded: int
    rows: list[RepresentationRow]
    by_location: list[LocationRow]


def _mean(values: Sequence[int]) -> float | None:
    return sum(values) / len(values) if values else None


def _per(total: int, correct: int) -> float | None:
    return total / correct if correct else None


def representation_row(name: str, records: Sequence[RunRecord], tasks: dict[str, TaskInfo],
                       tokens: dict[Cell, CallTokens]) -> RepresentationRow:  # fmt: skip
    """The figures of one representation from its records."""

    def correct(r: RunRecord) -> bool:
        return r.verdict is not None and r.verdict.correct

    read = [r for r in records if tasks[r.cell.task].kind == "READ"]
    act = [r for r in records if tasks[r.cell.task].kind == "ACT"]
    counted = [tokens[r.cell] for r in records if r.cell in tokens]
    right = sum(map(correct, records))
    input_tokens = sum(r.usage.input_tokens for r in records if r.usage is not None)
    return RepresentationRow(
        representation=name,
        calls=len(records),
        read=accuracy(sum(map(correct, read)), len(read)),
        act=accuracy(sum(map(correct, act)), len(act)),
        mean_tokens_o200k=_mean([t.offline for t in counted]),
        mean_tokens_api=_mean([t.api_count for t in counted if t.api_count is not None]),
        mean_tokens_api_usage=_mean([t.api_usage for t in counted if t.api_usage is not None]),
        input_tokens=input_tokens,
        tokens_per_correct=_per(input_tokens, right),
        representation_tokens_per_correct=_per(sum(t.offline for t in counted), right),
        errors=sum(r.error_kind is not None for r in records),
        unparseable=sum(r.error_kind is None and r.unparseable is not None for r in records),
        not_representable=sum(r.verdict is not None and r.verdict.reason == "not_representable" for r in records),
        unscored=sum(r.verdict is None for r in records),
    )


def build_report(info: RunInfo, records: Iterable[RunRecord], tasks: Sequence[TaskInfo],
                 tokens: dict[Cell, CallTokens]) -> StudyReport:  # fmt: skip
    """The report of a run, representations in the run's order."""
    by_id = {t.id: t for t in tasks}
    records = list(records)
    missing = sorted({r.cell.task for r in records} - set(by_id))
    if missing:
        raise ValueError(f"task {missing[0]!r} is recorded but not in the task index")
    rows, locations = [], []
    for name in info.representations:
        mine = [r for r in records if r.cell.representation == name]
        rows.append(representation_row(name, mine, by_id, tokens))
        tags = sorted({by_id[r.cell.task].location or "untagged" for r in mine})
        for tag in tags:
            tagged = [r for r in mine if (by_id[r.cell.task].location or "untagged") == tag]
            right = sum(r.verdict is not None and r.verdict.correct for r in tagged)
            locations.append(LocationRow(representation=name, location=tag, result=accuracy(right, len(tagged))))
    return StudyReport(run_id=info.run_id, registration=info.registration, model=str(info.model_settings.get("model")),
                       planned=len(info.planned), recorded=len(records), rows=rows,
                       by_location=locations)  # fmt: skip


def _acc(a: Accuracy) -> str:
    if a.accuracy is None or a.low is None or a.high is None:
        return "-"
    return f"{a.accuracy:.2f} [{a.low:.2f}, {a.high:.2f}] ({a.correct}/{a.calls})"


def _num(value: float | None, digits: int = 0) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"



def report_markdown(report: StudyReport) -> str:
    """The report as Markdown: one table per representation, one of accuracy by location tag."""
    lines = [f"# Study run {report.run_id}", "",
             f"Registration {report.registration}, model {report.model}: {report.recorded} of {report.planned} "
             "planned calls recorded. Accuracy: correct / calls, 95% Wilson interval; errors and unparseable "
             "replies count as incorrect and are also counted apart.", ""]  # fmt: skip
    header = ["representation", "calls", "tokens (o200k)", "tokens (API count)", "tokens (API usage)",
              "READ accuracy", "ACT accuracy", "input tokens / correct", "repr. tokens / correct", "errors",
              "unparseable", "not representable"]  # fmt: skip
    rows = [[r.representation, str(r.calls), _num(r.mean_tokens_o200k), _num(r.mean_tokens_api),
             _num(r.mean_tokens_api_usage), _acc(r.read), _acc(r.act), _num(r.tokens_per_correct),
             _num(r.representation_tokens_per_correct), str(r.errors), str(r.unparseable),
             str(r.not_representable)] for r in report.rows]  # fmt: skip
    lines += markdown_table(header, rows)
    names = [r.representation for r in report.rows]
    tags = list(dict.fromkeys(sorted(row.location for row in report.by_location)))
    cell = {(row.location, row.representation): row.result for row in report.by_location}
    by_tag = [[tag, *(_acc(cell[tag, n]) if (tag, n) in cell else "-" for n in names)] for tag in tags]
    lines += ["", "## Accuracy by location tag", "", *markdown_table(["location", *names], by_tag)]
    return "\n".join(lines) + "\n"


class RunReport(BaseModel):
    """Everything ``capreplay report`` writes about one run."""

    study: StudyReport = Field(description="The per-representation tables (Wilson intervals over calls).")
    repeats: int = Field(description="Repeats recorded.")
    over_repeats: list[RepeatSpread] = Field(description="Accuracy per repeat, its mean and 95% t interval.")
    pages: list[PagePoint] = Field(description="Tokens and accuracy per representation and page kind.")
    unstudied: list[PageFailureRecord] = Field(
        default_factory=list, description="Page sessions that failed and whose cells are still unrecorded."
    )


def still_unstudied(failures: Sequence[PageFailureRecord], records: Sequence[RunRecord]) -> list[PageFailureRecord]:
    """The last failure of each page session whose cells a later attempt has not recorded, with those cells."""
    recorded = {r.cell for r in records}
    last = {(f.repeat, f.page): f for f in failures}
    left = [f.model_copy(update={"cells": [c for c in f.cells if c not in recorded]}) for f in last.values()]
    return [f for f in left if f.cells]


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
    lines += markdown_table(["representation", "READ", "ACT", "all"], rows)
    pages = list(dict.fromkeys(p.page for p in report.pages))
    point = {(p.page, p.representation): p for p in report.pages}
    by_page = [[page, *(f"{point[page, n].tokens:,.0f} / {point[page, n].accuracy:.2f}"
                        if (page, n) in point and point[page, n].accuracy is not None else "-" for n in names)]
               for page in pages]  # fmt: skip
    lines += ["", "## Per page kind", "", "Mean representation tokens per call (o200k_base; the image rule for a "
              "screenshot) / accuracy over READ and ACT calls.", "",
              *markdown_table(["page", *names], by_page)]  # fmt: skip
    if report.unstudied:
        lines += ["", "## Pages not studied", "", "Page sessions that failed; their cells are unrecorded and "
                  "left out of every figure above, and rerunning the run retries them.", "",
                  *markdown_table(["page", "repeat", "cells", "why"],
                                  [[f.page, str(f.repeat), str(len(f.cells)), f.error] for f in report.unstudied])]
    lines += ["", "## Plots", "", f"![tokens against accuracy]({TOKENS_ACCURACY_PNG})", "",
              f"![tokens per page]({TOKENS_PER_PAGE_PNG})"]  # fmt: skip
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------------- I/O


def load_run(folder: Path) -> tuple[RunInfo, list[RunRecord], list[TaskInfo], dict[Cell, CallTokens]]:
    """Read a run folder; a missing or invalid file is one ``InputError`` line naming it."""
    info = read_run_info(folder, RunInfo, "a study run")
    index = read_model(folder / TASK_INDEX_FILE, TaskIndex, invalid=f"invalid {TASK_INDEX_FILE}",
                       missing=f"not a study run folder (no {TASK_INDEX_FILE})")  # fmt: skip
    return info, read_records(folder / CALLS_FILE).records, index.tasks, read_tokens(folder)


def report_folder(folder: Path) -> RunReport:
    """Read a run folder and build its report (nothing written); a bad folder is an ``InputError``."""
    info, records, tasks, tokens = load_run(folder)
    known = {t.id for t in tasks}
    missing = sorted({r.cell.task for r in records} - known)
    if missing:
        raise InputError(f"task {missing[0]!r} is recorded but not in the task index", folder / TASK_INDEX_FILE)
    try:
        report = build_run_report(info, records, tasks, tokens)
    except ValueError as e:
        raise InputError(str(e), folder / TASK_INDEX_FILE) from e
    return report.model_copy(update={"unstudied": still_unstudied(read_page_failures(folder), records)})


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
