"""Registration: every workflow task of a tasks file under ``browsergym/capreplay.<task id>``; no browser starts."""

from __future__ import annotations

import json
from pathlib import Path

import gymnasium as gym
import pytest
from capreplay.errors import InputError
from capreplay.models.workflow import Workflows

import capreplay_browsergym
from capreplay_browsergym.env import CapreplayEnv
from capreplay_browsergym.registration import SNAPSHOT_VARIABLE, TASKS_VARIABLE, register_from_environment


def test_every_workflow_task_is_registered(tasks_file: Path, world: Path, workflows: Workflows) -> None:
    ids = capreplay_browsergym.register(tasks_file)
    assert ids == [f"browsergym/capreplay.{task.id}" for task in workflows.tasks]
    for task in workflows.tasks:
        spec = gym.spec(f"browsergym/capreplay.{task.id}")  # a '-' in a task id is part of gymnasium's name
        assert spec.namespace == "browsergym" and spec.name == f"capreplay.{task.id}" and spec.version is None
        assert spec.entry_point.func is CapreplayEnv  # type: ignore[union-attr]
        frozen = spec.entry_point.frozen_kwargs  # type: ignore[union-attr]
        assert frozen["task"] == task and frozen["snapshot"] == world.resolve()


def test_the_task_and_snapshot_are_frozen(tasks_file: Path) -> None:
    capreplay_browsergym.register(tasks_file)
    with pytest.raises(ValueError, match="frozen"):
        gym.make("browsergym/capreplay.budget-tent", snapshot="elsewhere")


def test_a_tasks_file_without_workflows_is_refused(tasks_file: Path, tmp_path: Path) -> None:
    data = json.loads(tasks_file.read_text())
    del data["workflows"]
    bare = tmp_path / "tasks.json"
    bare.write_text(json.dumps(data))
    with pytest.raises(InputError, match="has no 'workflows' section"):
        capreplay_browsergym.register(bare)


def test_a_snapshot_that_is_not_one_is_refused_at_once(tasks_file: Path, tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such folder"):
        capreplay_browsergym.register(tasks_file, tmp_path / "missing")


def test_the_environment_variable_registers_on_import(
    tasks_file: Path, world: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(TASKS_VARIABLE, raising=False)
    assert register_from_environment() == []
    monkeypatch.setenv(TASKS_VARIABLE, str(tasks_file))
    monkeypatch.setenv(SNAPSHOT_VARIABLE, str(world))
    ids = register_from_environment()
    assert "browsergym/capreplay.cold-bag-delivery" in ids
