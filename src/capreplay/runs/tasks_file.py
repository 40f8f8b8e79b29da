"""The tasks file (``tasks.json``): read once, so that the bytes hashed for a registration are the bytes that run."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from capreplay.errors import InputError, os_reason
from capreplay.models.task import TasksFile, parse_tasks_file

DEFAULT_TASKS = Path("tasks.json")
"""The tasks file a verb reads unless told otherwise, and the name of a benchmark's, in its folder."""


def canonical_sha256(data: Any) -> str:
    """sha256 of the canonical JSON of ``data`` (sorted keys, no spaces, UTF-8)."""
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def read_tasks_file(path: Path) -> tuple[bytes, TasksFile]:
    """The bytes of the tasks file at ``path`` and the file they parse to; any problem is one ``InputError`` line."""
    try:
        data = path.read_bytes()
    except OSError as e:
        raise InputError(f"cannot read: {os_reason(e)}", path) from e
    return data, parse_tasks_file(data, path)


def load_tasks_file(path: Path) -> TasksFile:
    """Read and validate a tasks file; bad JSON or an invalid field is one ``InputError`` line (exit status 2)."""
    return read_tasks_file(path)[1]
