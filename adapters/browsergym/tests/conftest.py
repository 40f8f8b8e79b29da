"""Shared paths: the repository's tasks file and the committed world snapshot its workflows run on."""

from __future__ import annotations

from pathlib import Path

import pytest
from capreplay.models.workflow import Workflows
from capreplay.runs.tasks_file import load_tasks_file

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="session")
def tasks_file() -> Path:
    """The repository's tasks file."""
    return ROOT / "tasks.json"


@pytest.fixture(scope="session")
def world() -> Path:
    """The committed snapshot of the world the workflows run on."""
    return ROOT / "snapshots" / "world"


@pytest.fixture(scope="session")
def workflows(tasks_file: Path) -> Workflows:
    """The tasks file's workflows."""
    found = load_tasks_file(tasks_file).workflows
    assert found is not None
    return found
