"""The benchmark's tasks file, compiled from its recipe files.

``benchmark/tasks/*.json`` hold the recipes as written (:mod:`.recipes`), one file per application and one per
group of tasks spanning several; ``benchmark/tasks.json`` is the tasks file every tool reads (``tasks check``,
``run``, ``judge``, ``report``): the recipes expanded, in file-name order, with the run settings of the
benchmark's version. The suite checks that the committed file is the compilation of the committed recipes.
"""

from __future__ import annotations

import json
from pathlib import Path

from capreplay.benchmark.recipes import RecipeFile, expand
from capreplay.errors import InputError
from capreplay.llm.messages import ModelSettings
from capreplay.models.task import TASKS_SCHEMA_VERSION, TasksFile
from capreplay.models.workflow import JudgeSettings, Workflows
from capreplay.util.files import read_model

RECIPES_FOLDER = "tasks"
TASKS_FILE = "tasks.json"
SNAPSHOT_FOLDER = "snapshot"
MODEL = ModelSettings(provider="anthropic", model="claude-sonnet-5", max_tokens=4096, thinking={"type": "disabled"},
                      timeout_s=120.0)  # fmt: skip
"""The judge's and the model-driven agents' model, as the world's tasks have it."""
SEED = 20261207


def recipe_files(benchmark: Path) -> list[Path]:
    """The recipe files of the benchmark folder, in name order."""
    return sorted((benchmark / RECIPES_FOLDER).glob("*.json"))


def compile_tasks(benchmark: Path, *, snapshot: str = SNAPSHOT_FOLDER) -> TasksFile:
    """The tasks file of every recipe under ``benchmark/tasks``; InputError naming the file of a bad recipe."""
    tasks = []
    for path in recipe_files(benchmark):
        recipes = read_model(path, RecipeFile, invalid="invalid recipe file")
        tasks += [expand(recipe) for recipe in recipes.tasks]
    if not tasks:
        raise InputError(f"no recipes in {RECIPES_FOLDER}/*.json", where=benchmark)
    seen: set[str] = set()
    for task in tasks:
        if task.id in seen:
            raise InputError(f"task id {task.id!r} is used twice", where=benchmark / RECIPES_FOLDER)
        seen.add(task.id)
    workflows = Workflows(snapshot="benchmark", judge=JudgeSettings(model=MODEL), agent_model=MODEL, repeats=1,
                          seed=SEED, step_limit=40, episode_timeout_s=600, tasks=tasks)  # fmt: skip
    return TasksFile(
        schema_version=TASKS_SCHEMA_VERSION,
        description="The benchmark of real web applications: tasks on its frozen snapshot, compiled from "
        f"{RECIPES_FOLDER}/*.json by 'capreplay benchmark tasks'; edit the recipes, not this file.",
        snapshots={"benchmark": snapshot},
        workflows=workflows,
    )


def tasks_json(tasks: TasksFile) -> str:
    """The file's text: indented JSON, defaults written out, so a diff shows what a recipe changed."""
    return json.dumps(tasks.model_dump(mode="json"), indent=1, ensure_ascii=False) + "\n"
