"""Registering a tasks file's workflow tasks as gymnasium environments: ``browsergym/capreplay.<task id>``.

Registered as BrowserGym's ``register_task`` registers its tasks (the ``browsergym/`` namespace, the task's own
arguments frozen, ``nondeterministic``), with :class:`~capreplay_browsergym.env.CapreplayEnv` as the environment,
since BrowserGym's own ``BrowserEnv`` cannot launch its Chromium with the snapshot's arguments. gymnasium accepts
every capreplay task id in a name (letters, digits, ``.``, ``_`` and ``-``); one that ends in ``-v<digits>`` is read
by gymnasium as a version of the name before it, which ``gym.make`` with the same id still finds.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import gymnasium as gym
from browsergym.core.registration import frozen_partial
from capreplay.archive.snapshot.manifest import load_manifest
from capreplay.errors import InputError
from capreplay.runs.tasks_file import load_tasks_file

from capreplay_browsergym.env import CapreplayEnv

NAMESPACE = "browsergym"
PREFIX = "capreplay."
TASKS_VARIABLE = "CAPREPLAY_TASKS"
"""When set, ``import capreplay_browsergym`` registers the tasks of this tasks file."""
SNAPSHOT_VARIABLE = "CAPREPLAY_SNAPSHOT"
"""With ``CAPREPLAY_TASKS``: the snapshot folder to serve instead of the one the tasks file names."""


def env_id(task_id: str) -> str:
    """The gymnasium id of a capreplay task: ``browsergym/capreplay.<task id>``."""
    return f"{NAMESPACE}/{PREFIX}{task_id}"


def register(tasks_file: str | Path, snapshot: str | Path | None = None, **env_kwargs: Any) -> list[str]:
    """Register every workflow task of ``tasks_file`` and return the ids, in the file's order.

    ``snapshot``: the snapshot folder to serve (default: the one the tasks file names for its workflows).
    ``env_kwargs``: default arguments of every environment (``results_dir``, ``headless``, ``action_mapping``,
    ...), which ``gym.make`` may override; the task, the snapshot and the judge's model are frozen. A tasks file
    without workflows, or a snapshot without a readable manifest, is an :class:`~capreplay.errors.InputError`.
    """
    path = Path(tasks_file)
    tasks = load_tasks_file(path)
    workflows = tasks.workflows
    if workflows is None:
        raise InputError("has no 'workflows' section", path)
    folder = Path(snapshot) if snapshot is not None else tasks.snapshot_path(workflows.snapshot, path)
    load_manifest(folder)  # fails now, in one line, rather than at the first reset
    ids = []
    for task in workflows.tasks:
        # Registering again replaces the environment (another snapshot, other defaults) without gymnasium's warning.
        gym.registry.pop(env_id(task.id), None)
        gym.register(
            id=env_id(task.id),
            entry_point=frozen_partial(
                CapreplayEnv, task=task, snapshot=folder.resolve(), judge_model=workflows.judge.model
            ),
            nondeterministic=True,
            kwargs=dict(env_kwargs),
        )
        ids.append(env_id(task.id))
    return ids


def register_from_environment() -> list[str]:
    """Register the tasks of ``$CAPREPLAY_TASKS`` (on ``$CAPREPLAY_SNAPSHOT`` if set); nothing when it is unset."""
    tasks_file = os.environ.get(TASKS_VARIABLE)
    if not tasks_file:
        return []
    return register(tasks_file, os.environ.get(SNAPSHOT_VARIABLE) or None)
