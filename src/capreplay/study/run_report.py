"""``capreplay study report RUN_DIR``: per-representation tables of a study run, from its records alone.

Pure table building (:func:`build_report`, :func:`report_markdown`) from what a run folder holds:
``run.json``, ``calls.jsonl`` (:class:`RunRecord`), ``tokens.jsonl`` (:class:`CallTokens`) and
``task_index.json`` (each task's kind and location, written when the run starts); :func:`load_run` and
:func:`write_report` are the I/O at the edges.

Accuracy counts every recorded call, as the earlier study did: a failed call (error) and a reply with no
answer of the format (unparseable) count as incorrect, and are also counted apart. ``not representable``
failures are counted apart and never change accuracy. Tokens per correct answer divide the input tokens
billed over all calls of a representation by its correct answers; the representation's own share (the
offline ``representation_tokens``) per correct answer is given too.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from capreplay.archive.writer import write_atomic
from capreplay.errors import InputError
from capreplay.models.task import Location, Study
from capreplay.study.call_tokens import CallTokens, read_tokens
from capreplay.study.runs import CALLS_FILE, RUN_FILE, Cell, RunInfo, RunRecord, read_records

TASK_INDEX_FILE = "task_index.json"
REPORT_MD = "report.md"
REPORT_JSON = "report.json"
Z_95 = 1.959963984540054


class TaskInfo(BaseModel):
    """What the report needs to know about a task."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    page: str
    kind: str = Field(description="READ or ACT.")
    location: Location | None


class TaskIndex(BaseModel):
    """``task_index.json``: the run's tasks, so a run folder can be reported on its own."""

    model_config = ConfigDict(extra="forbid")

    tasks: list[TaskInfo]


def task_index(study: Study) -> TaskIndex:
    """The index of a study's tasks."""
    return TaskIndex(tasks=[TaskInfo(id=t.id, page=t.page, kind=t.kind, location=t.location) for t in study.tasks])


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
    p, z2 = correct / calls, Z_95 * Z_95
    centre = (p + z2 / (2 * calls)) / (1 + z2 / calls)
    half = Z_95 * math.sqrt(p * (1 - p) / calls + z2 / (4 * calls * calls)) / (1 + z2 / calls)
    return Accuracy(correct=correct, calls=calls, accuracy=p, low=max(0.0, centre - half), high=min(1.0, centre + half))


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


def _markdown_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    return lines + ["| " + " | ".join(row) + " |" for row in rows]


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
    lines += _markdown_table(header, rows)
    names = [r.representation for r in report.rows]
    tags = list(dict.fromkeys(sorted(row.location for row in report.by_location)))
    cell = {(row.location, row.representation): row.result for row in report.by_location}
    by_tag = [[tag, *(_acc(cell[tag, n]) if (tag, n) in cell else "-" for n in names)] for tag in tags]
    lines += ["", "## Accuracy by location tag", "", *_markdown_table(["location", *names], by_tag)]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------------- I/O


def load_run(folder: Path) -> tuple[RunInfo, list[RunRecord], list[TaskInfo], dict[Cell, CallTokens]]:
    """Read a run folder; a missing or invalid file is one ``InputError`` line naming it."""
    loaded: list[BaseModel] = []
    for name, model in ((RUN_FILE, RunInfo), (TASK_INDEX_FILE, TaskIndex)):
        path = folder / name
        try:
            loaded.append(model.model_validate_json(path.read_bytes()))
        except FileNotFoundError as e:
            raise InputError("not a study run folder (no such file)", path) from e
        except OSError as e:
            raise InputError(f"cannot read: {e.strerror or e}", path) from e
        except ValidationError as e:
            first = e.errors()[0]
            raise InputError(f"invalid {name}: {'.'.join(map(str, first['loc']))}: {first['msg']}", path) from e
    info, index = loaded
    assert isinstance(info, RunInfo) and isinstance(index, TaskIndex)
    return info, read_records(folder / CALLS_FILE).records, index.tasks, read_tokens(folder)


def write_report(folder: Path, report: StudyReport) -> str:
    """Write ``report.md`` and ``report.json`` into the run folder; returns the Markdown."""
    markdown = report_markdown(report)
    write_atomic(folder / REPORT_MD, markdown.encode("utf-8"))
    write_atomic(folder / REPORT_JSON, (report.model_dump_json(indent=1) + "\n").encode("utf-8"))
    return markdown


def report_run(folder: Path) -> StudyReport:
    """Read a run folder and build its report (nothing written)."""
    info, records, tasks, tokens = load_run(folder)
    try:
        return build_report(info, records, tasks, tokens)
    except ValueError as e:
        raise InputError(str(e), folder / TASK_INDEX_FILE) from e
