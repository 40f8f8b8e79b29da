"""Coverage and cost of generated batches: what CAP and GTA report about their tasks, per batch and in all.

For each batch: CAP's action and perception types its tasks instantiate (of the taxonomy's 64 and 56),
GTA's page-coverage rate (the share of the site graph's first-level pages, depth 1, that a task's gold path
reaches), the tasks per flow pattern, the rejections by stage and reason, and the model calls, tokens and
seconds per accepted task. A task counts as accepted when it is in the ``accepted`` tasks file (a person's
review merged by ``tasks accept``), else when its proof held. The cost of the cards and proposals the
batches came from is counted once, in the total.

:func:`summarise` is pure; :func:`coverage_report` reads the files.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from capreplay.errors import InputError
from capreplay.models.workflow import WorkflowTask
from capreplay.runs.tasks_file import load_tasks_file
from capreplay.tasks.batch import BATCH_FILE, PROOFS_FILE, REJECTED_FILE, TASKS_FILE
from capreplay.tasks.generation import (
    BatchInfo,
    CardsFile,
    ProposalsFile,
    Rejection,
    StageCost,
    TaskProof,
    add_costs,
)
from capreplay.tasks.graph import SiteGraph
from capreplay.tasks.snapshot_pages import read_graph
from capreplay.tasks.taxonomy import taxonomy
from capreplay.util.files import read_model
from capreplay.util.tables import format_table


class Cost(BaseModel):
    """Model calls in all and per accepted task."""

    model_config = ConfigDict(frozen=True)

    calls: int
    input_tokens: int
    output_tokens: int
    seconds: float
    per_task: dict[str, float] | None = Field(description="calls, tokens and seconds per accepted task; None if none.")


class BatchCoverage(BaseModel):
    """One batch's coverage and cost."""

    model_config = ConfigDict(frozen=True)

    batch: str
    generator: str
    candidates: int
    proven: int
    accepted: int
    action_types: list[str]
    perception_types: list[str]
    first_level_pages: int = Field(description="Pages at depth 1 of the batch snapshot's site graph.")
    first_level_reached: int = Field(description="Of those, pages some accepted task's gold path reaches.")
    flows: dict[str, int]
    rejected: dict[str, dict[str, int]] = Field(description="Rejections by stage, then by reason.")
    cost: Cost


class CoverageReport(BaseModel):
    """Every batch, and the totals over them with the cards' and proposals' cost."""

    model_config = ConfigDict(frozen=True)

    batches: list[BatchCoverage]
    card_types: dict[str, list[str]] = Field(description="Types the cards hold, by kind (when cards are given).")
    action_types: list[str]
    perception_types: list[str]
    action_total: int = 64
    perception_total: int = 56
    page_coverage: float | None = Field(description="First-level pages reached over all first-level pages.")
    accepted: int
    cost: Cost


_VALUES = re.compile(r"('[^']*'|\"[^\"]*\"|https?://\S+|\d[\d.,]*)")


def reason_kind(rejection: Rejection) -> str:
    """The reason without its particulars: a proof's failed check, else the reason before its first colon,
    with quoted values, URLs and numbers replaced by ``…``."""
    head = rejection.reason.split(":", 1)[0].strip()
    return _VALUES.sub("…", head)[:80]


def _cost(stages: dict[str, StageCost], accepted: int) -> Cost:
    calls = sum(s.calls for s in stages.values())
    tokens_in = sum(s.input_tokens for s in stages.values())
    tokens_out = sum(s.output_tokens for s in stages.values())
    seconds = round(sum(s.seconds for s in stages.values()), 2)
    per_task = (
        {
            "calls": round(calls / accepted, 2),
            "input_tokens": round(tokens_in / accepted, 1),
            "output_tokens": round(tokens_out / accepted, 1),
            "seconds": round(seconds / accepted, 2),
        }
        if accepted
        else None
    )
    return Cost(calls=calls, input_tokens=tokens_in, output_tokens=tokens_out, seconds=seconds,
                per_task=per_task)  # fmt: skip


def first_level(graph: SiteGraph | None) -> set[str]:
    """The pages one link below a seed."""
    return {p.url for p in graph.pages if p.depth == 1} if graph else set()


def summarise(
    info: BatchInfo,
    tasks: Sequence[WorkflowTask],
    proofs: Sequence[TaskProof],
    rejected: Sequence[Rejection],
    accepted_ids: set[str] | None,
    graph: SiteGraph | None,
) -> BatchCoverage:
    """One batch's coverage; ``accepted_ids`` None counts every proven task as accepted."""
    accepted = [t for t in tasks if accepted_ids is None or t.id in accepted_ids]
    ids = {t.id for t in accepted}
    codes = {p.code for t in accepted for p in t.covered_points}
    reached = {url for p in proofs if p.task in ids for url in p.reached}
    level = first_level(graph)
    by_stage: dict[str, Counter[str]] = {}
    for rejection in rejected:
        by_stage.setdefault(rejection.stage, Counter())[reason_kind(rejection)] += 1
    return BatchCoverage(
        batch=info.batch,
        generator=info.generator,
        candidates=info.candidates,
        proven=len(info.proven),
        accepted=len(accepted),
        action_types=sorted(c for c in codes if c.startswith("AT")),
        perception_types=sorted(c for c in codes if c.startswith("PT")),
        first_level_pages=len(level),
        first_level_reached=len(level & reached),
        flows=dict(sorted(Counter(t.flow for t in accepted).items())),
        rejected={stage: dict(sorted(c.items())) for stage, c in sorted(by_stage.items())},
        cost=_cost(info.made.cost, len(accepted)),
    )


def _jsonl[M: BaseModel](path: Path, model: type[M]) -> list[M]:
    if not path.is_file():
        return []
    lines = path.read_text(encoding="utf-8").splitlines()
    try:
        return [model.model_validate_json(line) for line in lines if line.strip()]
    except ValueError as e:
        raise InputError(f"not a batch file: {str(e).splitlines()[0]}", path) from e


def coverage_report(
    batches: Sequence[Path], *, cards: Path | None = None, proposals: Path | None = None, accepted: Path | None = None
) -> CoverageReport:
    """Read the batches (and the cards, proposals and accepted tasks if given) and report their coverage."""
    accepted_ids = None
    if accepted is not None:
        merged = load_tasks_file(accepted).workflows
        accepted_ids = {t.id for t in merged.tasks} if merged else set()
    cards_file = read_model(cards, CardsFile, invalid="not a cards file") if cards else None
    proposals_file = read_model(proposals, ProposalsFile, invalid="not a proposals file") if proposals else None
    rows: list[BatchCoverage] = []
    level: set[str] = set()
    reached: set[str] = set()
    stages: list[dict[str, StageCost]] = []
    for folder in batches:
        info = read_model(folder / BATCH_FILE, BatchInfo, invalid="not a batch", missing="not a batch folder: no "
                          f"{BATCH_FILE}")  # fmt: skip
        tasks_path = folder / TASKS_FILE
        workflows = load_tasks_file(tasks_path).workflows if tasks_path.is_file() else None
        tasks = workflows.tasks if workflows else []
        proofs = _jsonl(folder / PROOFS_FILE, TaskProof)
        graph = read_graph(Path(info.snapshot)) if Path(info.snapshot).is_dir() else None
        row = summarise(info, tasks, proofs, _jsonl(folder / REJECTED_FILE, Rejection), accepted_ids, graph)
        rows.append(row)
        ids = {t.id for t in tasks if accepted_ids is None or t.id in accepted_ids}
        level |= first_level(graph)
        reached |= {url for p in proofs if p.task in ids for url in p.reached}
        stages.append(info.made.cost)
    upstream = [f.made.cost for f in (cards_file, proposals_file) if f is not None]
    total_accepted = sum(r.accepted for r in rows)
    card_types: dict[str, list[str]] = {}
    if cards_file is not None:
        card_types = {
            "action": sorted({i.code for c in cards_file.cards for i in c.execution_items}),
            "perception": sorted({i.code for c in cards_file.cards for i in c.perception_items}),
        }
    return CoverageReport(
        batches=rows,
        card_types=card_types,
        action_types=sorted({c for r in rows for c in r.action_types}),
        perception_types=sorted({c for r in rows for c in r.perception_types}),
        action_total=len(taxonomy().action_types),
        perception_total=len(taxonomy().perception_types),
        page_coverage=round(len(level & reached) / len(level), 4) if level else None,
        accepted=total_accepted,
        cost=_cost(add_costs(*upstream, *stages), total_accepted),
    )


def coverage_table(report: CoverageReport) -> str:
    """The report as plain-text tables."""
    rows = [["batch", "generator", "candidates", "proven", "accepted", "AT", "PT", "first-level pages", "flows",
             "calls/task", "tokens/task", "s/task"]]  # fmt: skip
    for b in report.batches:
        per = b.cost.per_task or {}
        rows.append([
            b.batch, b.generator, str(b.candidates), str(b.proven), str(b.accepted), str(len(b.action_types)),
            str(len(b.perception_types)), f"{b.first_level_reached}/{b.first_level_pages}",
            ", ".join(f"{k} {v}" for k, v in b.flows.items()) or "-",
            str(per.get("calls", "-")), str(per.get("input_tokens", 0) + per.get("output_tokens", 0)) if per else "-",
            str(per.get("seconds", "-")),
        ])  # fmt: skip
    lines = [format_table(rows).rstrip("\n"), ""]
    lines.append(f"action types instantiated: {len(report.action_types)} of {report.action_total} "
                 f"({', '.join(report.action_types) or 'none'})")  # fmt: skip
    lines.append(f"perception types instantiated: {len(report.perception_types)} of {report.perception_total} "
                 f"({', '.join(report.perception_types) or 'none'})")  # fmt: skip
    if report.card_types:
        lines.append(f"types in the cards: {len(report.card_types['action'])} action, "
                     f"{len(report.card_types['perception'])} perception")  # fmt: skip
    if report.page_coverage is not None:
        lines.append(f"page coverage (first-level pages reached): {report.page_coverage:.1%}")
    for b in report.batches:
        for stage, reasons in b.rejected.items():
            for reason, n in reasons.items():
                lines.append(f"{b.batch}: rejected at {stage}: {n} × {reason}")
    cost = report.cost
    per = cost.per_task or {}
    lines.append(f"model calls {cost.calls}, tokens {cost.input_tokens} in / "
                 f"{cost.output_tokens} out, {cost.seconds} s; per accepted task: "
                 + (f"{per['calls']} calls, {per['input_tokens'] + per['output_tokens']:.0f} tokens, {per['seconds']} s"
                    if per else "no task accepted"))  # fmt: skip
    return "\n".join(lines) + "\n"
