"""What a review reads of a batch folder: its info, its tasks file with each task's hash, and the proof's evidence.

A batch folder holds ``batch.json`` (:class:`BatchInfo`), ``tasks.json`` (the proven tasks as a tasks file),
``proofs.jsonl`` (one :class:`TaskProof` per candidate), ``rejected.jsonl`` (one :class:`Rejection` a line) and
``proof-run/``, the gold agent's run, whose step screenshots a sheet links to. Every task is hashed as the
canonical JSON of its object in ``tasks.json``, so a sheet can name exactly the version of a task it reviewed.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from capreplay.errors import InputError
from capreplay.models.episode import EpisodeRecord
from capreplay.models.task import TasksFile
from capreplay.models.workflow import Workflows
from capreplay.runs.episode_log import EPISODES_FILE, read_episodes
from capreplay.runs.log import read_lines
from capreplay.runs.tasks_file import canonical_sha256, read_tasks_file
from capreplay.tasks.generation import BatchInfo, Rejection, TaskProof
from capreplay.util.files import read_model

BATCH_FILE = "batch.json"
TASKS_FILE = "tasks.json"
PROOFS_FILE = "proofs.jsonl"
REJECTED_FILE = "rejected.jsonl"
PROOF_RUN = "proof-run"


@dataclass(frozen=True)
class ReviewBatch:
    """A batch folder's info and its tasks file, as read once: the bytes hashed are the bytes parsed."""

    folder: Path
    info: BatchInfo
    tasks_path: Path
    tasks_sha256: str
    raw: dict[str, Any]
    tasks_file: TasksFile

    @property
    def workflows(self) -> Workflows:
        """The tasks file's workflows section (a batch's tasks file always has one)."""
        assert self.tasks_file.workflows is not None
        return self.tasks_file.workflows

    @property
    def snapshot_id(self) -> str:
        """The id of the snapshot the batch was made and proven on."""
        return self.info.made.snapshot_id

    def task_json(self, task_id: str) -> dict[str, Any]:
        """The task's object as ``tasks.json`` holds it; KeyError if there is none."""
        for task in self.raw["workflows"]["tasks"]:
            if task["id"] == task_id:
                return dict(task)
        raise KeyError(task_id)

    def task_sha256(self, task_id: str) -> str:
        """sha256 of the canonical JSON of the task's object."""
        return canonical_sha256(self.task_json(task_id))


@dataclass(frozen=True)
class BatchEvidence:
    """What the proof left for a person to look at: each task's proof, the gold episodes, the rejections."""

    proofs: dict[str, TaskProof]
    episodes: dict[str, EpisodeRecord]
    rejected: list[Rejection]
    missing_shots: frozenset[str]
    """Screenshots the episodes name (relative to ``proof-run/``) that the folder does not hold."""


def read_batch(folder: Path) -> ReviewBatch:
    """The batch at ``folder``: ``batch.json`` and ``tasks.json``, which must hold exactly the proven tasks."""
    if not folder.is_dir():
        raise InputError("not a batch folder: no such folder", folder)
    info = read_model(folder / BATCH_FILE, BatchInfo, invalid=f"invalid {BATCH_FILE}",
                      missing=f"not a batch folder (no {BATCH_FILE})")  # fmt: skip
    if not info.proven:
        raise InputError("no task of this batch passed the proof: there is nothing to review", folder / BATCH_FILE)
    tasks_path = folder / TASKS_FILE
    if not tasks_path.is_file():
        raise InputError(f"the batch's {BATCH_FILE} lists proven tasks, but there is no {TASKS_FILE}", tasks_path)
    data, tasks_file = read_tasks_file(tasks_path)
    if tasks_file.workflows is None:
        raise InputError("a batch's tasks file holds its proven tasks in 'workflows', but it has none", tasks_path)
    held = [task.id for task in tasks_file.workflows.tasks]
    if sorted(held) != sorted(info.proven):
        missing = sorted(set(info.proven) - set(held))
        extra = sorted(set(held) - set(info.proven))
        detail = f"lacks proven task {missing[0]!r}" if missing else f"holds {extra[0]!r}, which is not proven"
        raise InputError(f"does not match {BATCH_FILE}: it {detail}", tasks_path)
    raw = json.loads(data)
    return ReviewBatch(folder, info, tasks_path, hashlib.sha256(data).hexdigest(), raw, tasks_file)


def read_evidence(batch: ReviewBatch) -> BatchEvidence:
    """The proofs, gold episodes and rejections of ``batch``; a proven task without a proof or episode is refused."""
    folder = batch.folder
    proofs = read_lines(folder / PROOFS_FILE, TaskProof, lambda p: p.task, "task proof", lambda t: f"task {t!r}")
    # two rejections may say the same thing: each line is its own record
    rejected = read_lines(folder / REJECTED_FILE, Rejection, id, "rejection")
    run = folder / PROOF_RUN
    episodes: dict[str, EpisodeRecord] = {}
    for record in read_episodes(run):
        episodes.setdefault(record.key.task, record)
    by_task = {proof.task: proof for proof in proofs.records}
    for task_id in batch.info.proven:
        if task_id not in by_task:
            raise InputError(f"proven task {task_id!r} has no proof here", folder / PROOFS_FILE)
        if task_id not in episodes:
            raise InputError(f"proven task {task_id!r} has no gold episode here", run / EPISODES_FILE)
    shots = {step.screenshot for record in episodes.values() for step in record.steps if step.screenshot}
    missing = frozenset(shot for shot in shots if not (run / shot).is_file())
    return BatchEvidence(by_task, episodes, rejected.records, missing)
