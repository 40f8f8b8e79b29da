"""The benchmark's tasks: the committed tasks file is the compilation of its recipes, every URL a task starts
from or goes to is a page of the committed snapshot, and the set is as large and as varied as issue 29 asks."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from capreplay.archive.snapshot.manifest import load_manifest
from capreplay.benchmark.task_files import compile_tasks, tasks_json
from capreplay.models.workflow import Goto
from capreplay.tasks.taxonomy import taxonomy

BENCHMARK = Path(__file__).resolve().parents[2] / "benchmark"
TASKS = json.loads((BENCHMARK / "tasks.json").read_text(encoding="utf-8"))["workflows"]["tasks"]


def test_the_committed_tasks_file_is_its_recipes_compiled() -> None:
    assert (BENCHMARK / "tasks.json").read_text(encoding="utf-8") == tasks_json(compile_tasks(BENCHMARK))


def test_every_task_starts_and_goes_only_to_pages_of_the_snapshot() -> None:
    pages = {p.final_url for p in load_manifest(BENCHMARK / "snapshot").pages}
    pages |= {p.url for p in load_manifest(BENCHMARK / "snapshot").pages}
    hosts = set(load_manifest(BENCHMARK / "snapshot").hosts)
    compiled = compile_tasks(BENCHMARK).workflows
    assert compiled is not None
    for task in compiled.tasks:
        assert task.start_url in pages, task.id
        assert set(task.sites) <= hosts, task.id
        gotos = [step.url for step in task.gold_path if isinstance(step, Goto)]
        assert all(url.split("#")[0].split("/")[2] in hosts for url in gotos), task.id


def test_the_benchmark_is_as_large_and_varied_as_asked() -> None:
    flows = Counter(task["flow"] for task in TASKS)
    cross = [task for task in TASKS if len(task["sites"]) >= 2]
    assert len(TASKS) >= 150, flows
    assert len(cross) >= 60
    assert set(flows) == {"sequential", "fan_in", "fan_out", "conditional", "multi_hop"}
    codes = {point["code"] for task in TASKS for point in task["covered_points"]}
    known = {t.code for t in [*taxonomy().action_types, *taxonomy().perception_types]}
    actions = {c for c in codes if c.startswith("AT")}
    perceptions = {c for c in codes if c.startswith("PT")}
    assert codes <= known
    # Issue 29 asks for 40 action types and 30 perception types. An audit of every covered point against the
    # component CAP pairs its code with left 23 and 28 honestly covered; tasks on the applications' real
    # interfaces written since (among them the dashboard's release calendar and its popovers, the map's
    # sliders, drag to reorder in the shop admin's category tree, the wiki's editor toolbar and its uploads)
    # make it 41 and 31. A floor, so that coverage never shrinks unnoticed; METHODOLOGY.md lists the rest.
    assert len(actions) >= 41, sorted({t.code for t in taxonomy().action_types} - actions)
    assert len(perceptions) >= 31, sorted({t.code for t in taxonomy().perception_types} - perceptions)
    sites = {site for task in TASKS for site in task["sites"]}
    assert len(sites) >= 8
