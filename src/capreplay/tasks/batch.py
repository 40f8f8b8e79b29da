"""A batch folder: the generated candidates proven on the snapshot, the proven ones written as a tasks file.

    BATCH/batch.json      BatchInfo: generator, snapshot, prompts, model, costs, what was proven and rejected
    BATCH/tasks.json      the proven tasks, a tasks file ``capreplay run`` takes (absent when none was proven)
    BATCH/proofs.jsonl    one TaskProof per candidate that reached the proof
    BATCH/rejected.jsonl  one Rejection per candidate that did not make it, with the stage and the reason
    BATCH/candidates.json every candidate, as the gold agent of the proof read them
    BATCH/proof-run/      the proof's gold run (episodes, step screenshots), which review sheets show

A candidate is never written into ``tasks.json`` unless its proof holds. The folder must not exist (or be
empty); if making it fails half way, it is removed, so no half-written batch is left.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from capreplay.errors import UsageError
from capreplay.llm.client import ModelClient
from capreplay.llm.messages import ModelSettings
from capreplay.models.task import TasksFile
from capreplay.models.workflow import JudgeSettings, Workflows, WorkflowTask
from capreplay.tasks.generation import BatchInfo, Made, Rejection, TaskProof
from capreplay.tasks.proof import prove_tasks, write_tasks_file
from capreplay.util.files import refuse_unmakeable_folder, write_atomic

BATCH_FILE = "batch.json"
TASKS_FILE = "tasks.json"
PROOFS_FILE = "proofs.jsonl"
REJECTED_FILE = "rejected.jsonl"
SNAPSHOT_NAME = "snapshot"
"""The name the batch's tasks file gives its snapshot."""


def file_sha256(path: Path) -> str:
    """sha256 of a file's bytes."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def claim_folder(out: Path) -> None:
    """Make the batch folder ``out``; it must not exist, or be empty (a UsageError otherwise)."""
    refuse_unmakeable_folder(out)
    if out.exists() and any(out.iterdir()):
        raise UsageError(f"{out} exists and is not empty: give a new folder for the batch")
    out.mkdir(parents=True, exist_ok=True)


def split_duplicates(tasks: Sequence[WorkflowTask]) -> tuple[list[WorkflowTask], list[Rejection]]:
    """The tasks with unique ids, and a rejection for each later task reusing an id."""
    kept: list[WorkflowTask] = []
    rejected: list[Rejection] = []
    seen: set[str] = set()
    for task in tasks:
        if task.id in seen:
            rejected.append(Rejection(candidate=task.id, stage="instance", reason="the task id is used twice"))
        else:
            seen.add(task.id)
            kept.append(task)
    return kept, rejected


def _lines(items: Sequence[TaskProof | Rejection]) -> bytes:
    return b"".join(item.model_dump_json().encode("utf-8") + b"\n" for item in items)


def batch_tasks_file(snapshot: Path, out: Path, settings: ModelSettings, tasks: list[WorkflowTask]) -> TasksFile:
    """The tasks file of the proven tasks, naming the snapshot relative to the batch folder; judged by ``settings``."""
    workflows = Workflows(snapshot=SNAPSHOT_NAME, judge=JudgeSettings(model=settings), agent_model=None, tasks=tasks)
    relative = os.path.relpath(snapshot.resolve(), out.resolve())
    return TasksFile(schema_version=1, description=f"Tasks generated and proven on the snapshot, batch {out.name}.",
                     snapshots={SNAPSHOT_NAME: relative}, workflows=workflows)  # fmt: skip


async def prove_and_write(
    out: Path,
    *,
    generator: Literal["workflows", "multihop"],
    snapshot: Path,
    made: Made,
    settings: ModelSettings,
    candidates: Sequence[WorkflowTask],
    rejected: Sequence[Rejection],
    judge_client: ModelClient | None,
    inputs: dict[str, str] | None = None,
) -> BatchInfo:
    """Prove every candidate on ``snapshot`` and write the batch folder ``out`` (already claimed); if anything
    fails on the way, ``out`` is removed."""
    try:
        return await _write(out, generator, snapshot, made, settings, candidates, rejected, judge_client, inputs)
    except BaseException:
        shutil.rmtree(out, ignore_errors=True)
        raise


async def _write(out: Path, generator: Literal["workflows", "multihop"], snapshot: Path, made: Made,
                 settings: ModelSettings, candidates: Sequence[WorkflowTask], rejected: Sequence[Rejection],
                 judge_client: ModelClient | None, inputs: dict[str, str] | None) -> BatchInfo:  # fmt: skip
    tasks, twice = split_duplicates(candidates)
    refused = [*rejected, *twice]
    proofs: list[TaskProof] = []
    clock = time.monotonic()
    if tasks:
        workflows = Workflows(
            snapshot=SNAPSHOT_NAME, judge=JudgeSettings(model=settings), agent_model=None, tasks=tasks
        )
        proofs = await prove_tasks(snapshot, workflows, out, judge_client)
    proof_s = round(time.monotonic() - clock, 2)
    proven = [task for task, proof in zip(tasks, proofs, strict=True) if proof.passed]
    refused += [Rejection(candidate=p.task, stage="proof", reason=p.reason) for p in proofs if not p.passed]
    if proven:
        write_tasks_file(out / TASKS_FILE, batch_tasks_file(snapshot, out, settings, proven))
    write_atomic(out / PROOFS_FILE, _lines(proofs))
    write_atomic(out / REJECTED_FILE, _lines(refused))
    stages: dict[str, int] = {}
    for rejection in refused:
        stages[rejection.stage] = stages.get(rejection.stage, 0) + 1
    info = BatchInfo(
        batch=out.name,
        generator=generator,
        snapshot=str(snapshot),
        made=made,
        inputs=inputs or {},
        candidates=len(candidates),
        proven=[t.id for t in proven],
        rejected=dict(sorted(stages.items())),
        proof_s=proof_s,
    )
    write_atomic(out / BATCH_FILE, info.model_dump_json(indent=1).encode("utf-8") + b"\n")
    return info
