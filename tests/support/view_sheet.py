"""A real review sheet for the viewer's tests, made in well under a second and without a browser.

:func:`make_review_sheet` writes a batch folder of three committed world tasks (one sequential, one conditional,
one fan-in) as ``capreplay tasks review`` expects it (``batch.json``, ``tasks.json``, ``proofs.jsonl``,
``rejected.jsonl``, ``proof-run/``) and writes its sheet with :func:`capreplay.tasks.review.write_sheet`, the code
the verb runs. The gold run in ``proof-run/`` is built from the world snapshot itself: each step's screenshot is
the snapshot's capture of the page the step is on (the page as loaded until the gold path's actions there are
done, the page as the capture left it after), and each step's URL is the capture's. One screenshot is left out
on purpose, so a sheet's "no screenshot" case is there too. Given ``gold_run`` (a folder of ``capreplay run
--agent gold`` on the world's ``tasks.json``), its episodes and screenshots are used instead.

The gold answers are those the gold agent gives on the world (values its pages show).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

from capreplay.models.episode import EpisodeRecord
from capreplay.runs.episode_log import read_episodes
from capreplay.tasks.review import write_sheet
from tests.support.paths import ROOT

WORLD = ROOT / "snapshots" / "world"
BATCH = "wf-view"
SHEET_TASKS = ("budget-tent", "rain-tent", "kell-hut-choice")
GOLD_ANSWERS: dict[str, dict[str, str]] = {
    "budget-tent": {"listing_url": "https://www.fellgear.test/c/tents?min=100&max=250", "tent_price": "215",
                    "compare_url": "https://www.trailverdict.test/compare/tents?sort=score&dir=desc",
                    "tent_name": "Fellside 2 Lite", "tent_score": "8.6"},
    "rain-tent": {"october_rainfall": "171", "rainfall_url": "https://data.parkstats.test/regions/sunder-coast",
                  "specs_url": "https://www.fellgear.test/p/skerry-2?tab=specs", "tent_name": "Skerry 2",
                  "hydrostatic_head": "5000"},
    "kell-hut-choice": {"ashgill_price": "34", "ashgill_url": "https://book.hutnet.test/huts/ashgill-bothy",
                        "ridge_end_price": "42", "ridge_end_url": "https://book.hutnet.test/huts/ridge-end-hut",
                        "quieter_visitors": "2,910", "quieter_trail": "Kell Ridge Traverse",
                        "trail_url": "https://data.parkstats.test/trails/kell-ridge-traverse",
                        "chosen_hut": "Ridge End Hut"},
}  # fmt: skip
EXPECTED: dict[str, dict[str, str]] = {
    "budget-tent": {"tent_name": "Fellside 2 Lite", "tent_price": "215", "tent_score": "8.6"},
    "rain-tent": {"october_rainfall": "171", "tent_name": "Skerry 2", "hydrostatic_head": "5000"},
}
"""What a generator's instance stage would have written as each task's expected values (the world's tasks.json
has none); kell-hut-choice keeps none, so the sheet's dash for "no expected value" shows too."""
EVIDENCE = {"budget-tent": [{"url": "https://www.trailverdict.test/compare/tents?sort=score&dir=desc",
                             "text": "Fellside 2 Lite"}]}  # fmt: skip
MISSING_SHOT = ("rain-tent", 9)
"""The one step whose screenshot the proof run names but the folder does not hold."""
REJECTED = [
    {"candidate": "lost-tent", "stage": "proof", "reason": "values_on_pages: tent_price 199 is on no page the path "
                                                          "reached"},
    {"candidate": "hut-by-sea", "stage": "instance", "reason": "its gold path leaves the snapshot at "
                                                              "https://book.hutnet.test/huts/seal-bay-camp/book"},
]  # fmt: skip
WORLD_ID = "760e9b22324f9de7046603ea9921111405553abf184e882ee6b6939306ee4475"
"""The committed world snapshot's id, as its manifest.json states it."""


def _lines(path: Path, items: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(item, ensure_ascii=False) + "\n" for item in items), encoding="utf-8")


def _captures() -> list[dict[str, Any]]:
    pages: list[dict[str, Any]] = json.loads((WORLD / "manifest.json").read_text(encoding="utf-8"))["pages"]
    return pages


def _actions(steps: list[dict[str, Any]]) -> list[tuple[str, str | None]]:
    return [(s["type"], s.get("selector")) for s in steps if s["type"] not in ("read", "goto")]


def _capture(url: str, actions: list[tuple[str, str | None]]) -> dict[str, Any] | None:
    """The world's capture of ``url`` after exactly ``actions`` (type and selector), if it has one."""
    return next((p for p in _captures() if p["url"] == url and _actions(p["actions"]) == actions), None)


def _built_episode(task: dict[str, Any], run: Path) -> dict[str, Any]:
    """The gold run of ``task`` as the world's captures show it (see the module's docstring)."""
    segments: list[list[dict[str, Any]]] = []
    for step in task["gold_path"]:
        if step["type"] == "goto" or not segments:
            segments.append([])
        segments[-1].append(step)
    steps = []
    n = 0
    url = task["start_url"]
    for segment in segments:
        loaded = _capture(segment[0]["url"], [])
        done = _capture(segment[0]["url"], _actions(segment)) or loaded
        last_action = max((i for i, s in enumerate(segment) if s["type"] not in ("read", "goto")), default=0)
        for i, step in enumerate(segment):
            n += 1
            capture = done if i >= last_action else loaded or done
            url = capture["final_url"] if capture and i >= last_action else segment[0]["url"]
            shot = f"gold/0/{task['id']}/step-{n:03d}.png"
            if capture and (task["id"], n) != MISSING_SHOT:
                (run / shot).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(WORLD / capture["screenshot"], run / shot)
            args = {k: v for k, v in step.items() if k != "type"}
            steps.append({"n": n, "action": step["type"], "args": args, "url": url,
                          "screenshot": shot if capture else None, "at_s": round(0.6 * n, 1)})  # fmt: skip
    answer = json.dumps(GOLD_ANSWERS[task["id"]], indent=1, ensure_ascii=False)
    return {"key": {"repeat": 0, "task": task["id"], "agent": "gold"}, "started_at": "2026-12-01T04:00:00Z",
            "duration_s": round(0.6 * n + 1.5, 1), "status": "answered", "answer": answer, "steps": steps,
            "requests": [], "start_url": task["start_url"], "final_url": url}  # fmt: skip


def _copied_episode(task_id: str, gold_run: Path, run: Path) -> dict[str, Any]:
    """The first episode of ``task_id`` in ``gold_run``, its screenshots copied into ``run``."""
    record: EpisodeRecord = next(r for r in read_episodes(gold_run) if r.key.task == task_id)
    for step in record.steps:
        if step.screenshot and (gold_run / step.screenshot).is_file():
            (run / step.screenshot).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(gold_run / step.screenshot, run / step.screenshot)
    data: dict[str, Any] = json.loads(record.model_dump_json())
    return data


def _proof(task: dict[str, Any], episode: dict[str, Any]) -> dict[str, Any]:
    answer = json.loads(episode["answer"])
    steps = len(episode["steps"])
    reached = list(dict.fromkeys(step["url"] for step in episode["steps"]))
    checks = [
        ("gold_run", f"answered after {steps} steps in {episode['duration_s']:.1f} s"),
        ("on_snapshot", "every request of the gold run was answered by the snapshot"),
        ("values_on_pages", f"{len(task.get('expected') or {})} expected values found on the pages reached"),
        ("evidence_on_pages", f"{len(task.get('evidence', []))} evidence snippets found"),
        ("gold_scores_1", "the judge scored the gold answer 1.00"),
        ("mutations", "every changed value failed exactly the leaves that read it"),
    ]
    mutations = [{"output": name, "value": value + "0", "failed": [f"{name}-leaf"], "expected": [f"{name}-leaf"],
                  "passed": True} for name, value in list(answer.items())[:2]]  # fmt: skip
    return {"task": task["id"], "passed": True, "reached": reached, "answer": answer, "score": 1.0,
            "checks": [{"name": name, "passed": True, "detail": detail} for name, detail in checks],
            "mutations": mutations}  # fmt: skip


def make_review_batch(root: Path, *, name: str = BATCH, tasks: tuple[str, ...] = SHEET_TASKS,
                      gold_run: Path | None = None) -> Path:  # fmt: skip
    """The batch folder ``root/name`` of the world's ``tasks``, proven (see the module's docstring)."""
    folder = root / name
    run = folder / "proof-run"
    run.mkdir(parents=True)
    world = json.loads((ROOT / "tasks.json").read_text(encoding="utf-8"))["workflows"]
    by_id = {task["id"]: task for task in world["tasks"]}
    chosen = []
    for task_id in tasks:
        task = dict(by_id[task_id])
        if task_id in EXPECTED:
            task["expected"] = EXPECTED[task_id]
        task["evidence"] = EVIDENCE.get(task_id, [])
        chosen.append(task)
    header = {key: value for key, value in world.items() if key != "tasks"} | {"snapshot": "world", "repeats": 1}
    doc = {"schema_version": 1, "description": f"Tasks generated and proven on the world snapshot, batch {name}.",
           "snapshots": {"world": os.path.relpath(WORLD, folder)},
           "workflows": {**header, "tasks": chosen}}  # fmt: skip
    (folder / "tasks.json").write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    episodes = [_copied_episode(t["id"], gold_run, run) if gold_run else _built_episode(t, run) for t in chosen]
    _lines(run / "episodes.jsonl", episodes)
    proofs = [_proof(task, episode) for task, episode in zip(chosen, episodes, strict=True)]
    lost = {"task": "lost-tent", "passed": False, "reached": [], "answer": None, "score": None,
            "checks": [{"name": "values_on_pages", "passed": False, "detail": REJECTED[0]["reason"]}]}  # fmt: skip
    _lines(folder / "proofs.jsonl", [*proofs, lost])
    _lines(folder / "rejected.jsonl", REJECTED)
    info = {"schema_version": 1, "kind": "batch", "batch": name, "generator": "workflows", "snapshot": str(WORLD),
            "made": {"snapshot_id": WORLD_ID, "model": {"model": "claude-test"}, "prompts": {}},
            "candidates": len(chosen) + len(REJECTED), "proven": list(tasks),
            "rejected": {"instance": 1, "proof": 1}, "proof_s": 41.5}  # fmt: skip
    (folder / "batch.json").write_text(json.dumps(info, indent=1), encoding="utf-8")
    return folder


def make_review_sheet(root: Path, *, name: str = BATCH, tasks: tuple[str, ...] = SHEET_TASKS,
                      gold_run: Path | None = None) -> Path:  # fmt: skip
    """A batch folder under ``root`` and its untouched review sheet ``root/name/review.md``, as ``capreplay tasks
    review`` writes it; returns the sheet's path. Takes a fraction of a second (no browser)."""
    folder = make_review_batch(root, name=name, tasks=tasks, gold_run=gold_run)
    write_sheet(folder)
    return folder / "review.md"
