"""Merge a reviewed sheet's accepted tasks into a tasks file, and log its rejections beside it.

:func:`accept_sheet` reads the sheet strictly (:func:`capreplay.tasks.review.parse.read_sheet`), then works out
both files whole before writing either: the tasks file with the accepted tasks added (created from the
batch's own tasks file's header when absent; when present it must run its workflows on the batch's snapshot,
by the id in that snapshot's manifest), and the rejection log ``<stem>.rejections.jsonl`` with a line for
each rejected task. A task already in the file is left alone if it is the same task and refused if it is
another one of the same id. Each file is replaced atomically, and accepting the same sheet twice changes
nothing the second time.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from capreplay.archive.snapshot.manifest import load_manifest
from capreplay.errors import InputError
from capreplay.models.task import TasksFile, parse_tasks_file
from capreplay.runs.log import read_lines
from capreplay.runs.tasks_file import read_tasks_file
from capreplay.tasks.generation import ReviewRejection
from capreplay.tasks.review.batch_folder import ReviewBatch
from capreplay.tasks.review.parse import ReviewedSheet, read_sheet
from capreplay.util.files import write_atomic

LOG_SUFFIX = ".rejections.jsonl"


class AcceptSummary(BaseModel):
    """What accepting a sheet did."""

    model_config = ConfigDict(frozen=True)

    batch: str
    reviewer: str
    into: str = Field(description="The tasks file merged into.")
    log: str = Field(description="The rejection log beside it.")
    accepted: list[str] = Field(description="Tasks the reviewer accepted, in sheet order.")
    added: list[str] = Field(description="Accepted tasks written into the file now (the others were there already).")
    rejected: list[str] = Field(description="Tasks the reviewer rejected, each logged with its reason.")
    undecided: list[str] = Field(description="Tasks with no box ticked: neither merged nor logged.")
    created: bool = Field(description="The tasks file did not exist and was written from the batch's header.")


def rejection_log(into: Path) -> Path:
    """The rejection log of the tasks file ``into``: ``<stem>.rejections.jsonl`` beside it."""
    return into.with_name(into.stem + LOG_SUFFIX)


def _moved(path: str, src: Path, dest: Path) -> str:
    """A snapshot path of the tasks file ``src``, made relative to ``dest`` instead (absolute ones stay)."""
    if Path(path).is_absolute():
        return path
    return Path(os.path.relpath((src.parent / path).resolve(), dest.parent.resolve())).as_posix()


def _dump(raw: dict[str, Any], like: bytes | None) -> bytes:
    """``raw`` as JSON, indented and escaped as the file it replaces was (the project's style for a new one)."""
    indent, ascii_only = 1, False
    if like is not None:
        second = like.split(b"\n", 2)[1] if like.count(b"\n") >= 1 else b""
        spaces = len(second) - len(second.lstrip(b" "))
        indent, ascii_only = spaces or 1, like.isascii()
    return json.dumps(raw, indent=indent, ensure_ascii=ascii_only).encode("utf-8") + b"\n"


def _section_header(batch: ReviewBatch) -> dict[str, Any]:
    return {key: value for key, value in batch.raw["workflows"].items() if key != "tasks"}


def merged(batch: ReviewBatch, accepted: list[str], into: Path) -> tuple[bytes | None, list[str], bool]:
    """The new bytes of ``into`` with ``accepted`` added (None: nothing to write), the ids added, and whether
    the file is new. Every refusal is an InputError naming ``into`` and nothing is written here."""
    name = batch.workflows.snapshot
    where_from = batch.raw["snapshots"][name]
    like: bytes | None = None
    if into.exists():
        like, have = read_tasks_file(into)
        raw = json.loads(like)
        if have.workflows is None:
            raw["workflows"] = {**_section_header(batch), "tasks": []}
            raw["snapshots"].setdefault(name, _moved(where_from, batch.tasks_path, into))
    else:
        if not into.parent.is_dir():
            raise InputError("cannot be created: its folder does not exist", into)
        have = None
        raw = {
            "schema_version": batch.raw["schema_version"],
            "description": f"Workflow tasks accepted in review (first from batch {batch.info.batch}).",
            "snapshots": {name: _moved(where_from, batch.tasks_path, into)},
            "workflows": {**_section_header(batch), "tasks": []},
        }
    held = {task.id: task for task in have.workflows.tasks} if have and have.workflows else {}
    added: list[str] = []
    for task_id in accepted:
        task = batch.workflows.task(task_id)
        if task_id in held:
            if held[task_id] != task:
                raise InputError(f"already holds a task {task_id!r} that differs from the one accepted from batch "
                                 f"{batch.info.batch!r}; rename one of them", into)  # fmt: skip
            continue
        raw["workflows"]["tasks"].append(batch.task_json(task_id))
        added.append(task_id)
    if not added:
        # nothing to write; a file that is there must still be of this snapshot, as its log will sit beside it
        if have is not None and have.workflows is not None:
            _same_snapshot(have, into, batch)
        return None, [], False
    data = _dump(raw, like)
    _same_snapshot(parse_tasks_file(data, into), into, batch)
    return data, added, like is None


def _same_snapshot(tasks_file: TasksFile, into: Path, batch: ReviewBatch) -> None:
    """An InputError unless the workflows of ``tasks_file`` (at ``into``) run on the batch's snapshot."""
    assert tasks_file.workflows is not None
    name = tasks_file.workflows.snapshot
    manifest = load_manifest(tasks_file.snapshot_path(name, into))
    if manifest.snapshot_id != batch.snapshot_id:
        raise InputError(f"its workflows run on snapshot {name!r} ({manifest.snapshot_id}), but batch "
                         f"{batch.info.batch!r} was proven on {batch.snapshot_id}", into)  # fmt: skip


def logged(reviewed: ReviewedSheet, log: Path) -> bytes | None:
    """The log's new bytes with a line for each rejection not logged yet; None when there is none."""
    sheet, batch = reviewed.sheet, reviewed.batch
    relative = Path(os.path.relpath(reviewed.path.resolve(), log.parent.resolve())).as_posix()
    entries = [
        ReviewRejection(task=task.task, task_sha256=task.sha256, reviewer=sheet.reviewer, reason=task.reason,
                        sheet=relative, batch=batch.info.batch, snapshot_id=batch.snapshot_id)
        for task in sheet.tasks if task.verdict == "reject"
    ]  # fmt: skip
    read = read_lines(log, ReviewRejection, lambda entry: entry, "review rejection", lambda e: f"task {e.task!r}")
    known = set(read.records)
    new = [entry for entry in entries if entry not in known]
    if not new:
        return None
    kept = log.read_bytes()[: read.complete_bytes] if read.complete_bytes else b""
    return kept + b"".join(entry.model_dump_json().encode("utf-8") + b"\n" for entry in new)


def accept_sheet(sheet_path: Path, into: Path) -> AcceptSummary:
    """Merge the tasks accepted on the sheet at ``sheet_path`` into the tasks file ``into``; log the rejected ones.

    A malformed sheet, a sheet of tasks that changed, a tasks file of another snapshot or holding another task
    of an accepted id: an InputError, and neither file is touched.
    """
    reviewed = read_sheet(sheet_path)
    sheet = reviewed.sheet
    accepted = sheet.decided("accept")
    data, added, created = merged(reviewed.batch, accepted, into)
    log = rejection_log(into)
    log_data = logged(reviewed, log)
    if log_data is not None:
        write_atomic(log, log_data)
    if data is not None:
        write_atomic(into, data)
    return AcceptSummary(batch=sheet.batch, reviewer=sheet.reviewer, into=str(into), log=str(log), accepted=accepted,
                         added=added, rejected=sheet.decided("reject"), undecided=sheet.decided(None),
                         created=created)  # fmt: skip
