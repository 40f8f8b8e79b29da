"""A run's folder: where it lives under the results folder, and its ``run.json``, written once.

Every kind of run (a study run, an agent run) is planned once: ``run.json`` holds the whole plan. A rerun
of the same run id reads it back and refuses to go on if the plan it would make now is another one.
"""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import BaseModel

from capreplay.errors import InputError, UsageError, os_reason
from capreplay.runs.registration_file import ID_PATTERN
from capreplay.util.files import read_model, write_atomic

RUNS = "runs"
"""The folder under the results folder that holds runs."""
RUN_FILE = "run.json"


def run_dir(results_dir: Path, run_id: str) -> Path:
    """The folder of run ``run_id``; an id that is not a plain file name is a ``UsageError``."""
    if not re.fullmatch(ID_PATTERN, run_id):
        raise UsageError(f"run id {run_id!r} must be letters, digits, '.', '_' or '-' (not starting with '.')")
    return results_dir / RUNS / run_id


def read_run_info[I: BaseModel](run_dir: Path, model: type[I], kind: str) -> I:
    """``run.json`` of ``kind`` ("a study run", "an agent run"); a missing or invalid one is one ``InputError``."""
    path = run_dir / RUN_FILE
    return read_model(path, model, invalid=f"not {kind}'s {RUN_FILE}", missing=f"not {kind} folder (no {RUN_FILE})")


def start_run[I: BaseModel](run_dir: Path, info: I, kind: str, planned_with: str) -> I:
    """Write ``run.json`` for a new run, or check that a resumed run was planned the same; returns the stored info.

    Two plans are the same when everything but their creation time is; ``planned_with`` names what a plan
    is made of, for the message when they differ.
    """
    path = run_dir / RUN_FILE
    if path.exists():
        stored = read_run_info(run_dir, type(info), kind)
        if stored.model_dump(exclude={"created_at"}) != info.model_dump(exclude={"created_at"}):
            raise InputError(f"this run was started with another plan ({planned_with})", path)
        return stored
    try:
        run_dir.mkdir(parents=True, exist_ok=True)
    except OSError as e:  # e.g. --results names a file
        raise InputError(f"cannot create the run folder: {os_reason(e)}", run_dir) from e
    write_atomic(path, (info.model_dump_json(indent=1) + "\n").encode("utf-8"))
    return info
