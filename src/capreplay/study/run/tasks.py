"""Reading the tasks the study runs: a ``tasks.json`` with a ``study`` section (protocol, snapshot, pages,
tasks), or a bare task file of pages and tasks such as the one the study's fixture sites ship with."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from capreplay.errors import InputError, os_reason, validation_reason
from capreplay.models.task import PagesAndTasks, Study, parse_tasks_file

StudyTasks = PagesAndTasks | Study
"""Pages and the tasks on them; both kinds of file give one."""


@dataclass(frozen=True)
class LoadedTasks:
    """A task file as the study reads it."""

    tasks: StudyTasks
    path: Path
    snapshot: Path | None
    """The snapshot folder the file names (a tasks.json's study snapshot), or None for a bare task file."""


def _task_list(raw: object) -> list[object]:
    """The task objects of a parsed task file (a tasks.json's study section, or a bare file), or none."""
    holder = raw.get("study", raw) if isinstance(raw, dict) and "tasks" not in raw else raw
    tasks = holder.get("tasks") if isinstance(holder, dict) else None
    return tasks if isinstance(tasks, list) else []


def load_study_tasks(path: Path, *, measures: bool = True) -> LoadedTasks:
    """Read ``path``; any problem is one ``InputError`` line naming the file.

    With ``measures=False`` the tasks' measured records are left out, as the step that measures them again
    does: a record written by an older version must not stop its own replacement.
    """
    try:
        data = path.read_bytes()
    except OSError as e:
        raise InputError(f"cannot read: {os_reason(e)}", path) from e
    try:
        raw = json.loads(data)
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise InputError(f"not valid JSON: {e}", path) from e
    if not measures:
        for task in _task_list(raw):
            if isinstance(task, dict):
                task.pop("measured", None)
        data = json.dumps(raw).encode()
    if isinstance(raw, dict) and "schema_version" in raw:
        tasks_file = parse_tasks_file(data, path)
        if tasks_file.study is None:
            raise InputError("the tasks file has no 'study' section", path)
        snapshot = tasks_file.snapshot_path(tasks_file.study.snapshot, path)
        return LoadedTasks(tasks_file.study, path, snapshot)
    try:
        return LoadedTasks(PagesAndTasks.model_validate(raw), path, None)
    except ValidationError as e:
        raise InputError(f"invalid task file: {validation_reason(e)}", path) from e
