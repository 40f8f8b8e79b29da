"""The study-run tests' shared pieces: a registered results folder, a :class:`FakeLLM` in a thread of its own,
and the wrong ACT answers of each representation (used by tests/study/test_study_run.py and the report's)."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from capreplay.models.task import Study
from capreplay.runs.registration import register
from capreplay.runs.tasks_file import load_tasks_file
from capreplay.testing.fake_llm import FakeLLM, Received, Script
from tests.support.paths import ROOT

REGISTRATION = "e2e"
WRONG_ACT: dict[str, dict[str, Any]] = {
    "raw_html": {"selector": "#capreplay-no-such-element"},
    "markdown": {"text": "zzz no such text"},
    "accessibility_tree": {"role": "button", "name": "zzz no such name"},
    "indexed_dom": {"index": 999_999},
    "screenshot": {"x": 1279, "y": 799},
    "aria_ai": {"ref": "e999999"},
    "stagehand_snapshot": {"id": "0-999999"},
}
"""An ACT answer of each representation's format that points at nothing on the page."""


@contextmanager
def fake_llm(script: Script) -> Iterator[FakeLLM]:
    """A :class:`FakeLLM` serving from its own thread and event loop, so ``main()`` (with its own loop) can call it."""
    fake = FakeLLM(script)
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    try:
        asyncio.run_coroutine_threadsafe(fake.start(), loop).result(10)
        yield fake
        asyncio.run_coroutine_threadsafe(fake.stop(), loop).result(10)
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()


def registered_results(folder: Path) -> Path:
    """``folder/results`` with a fresh registration of a copy of tasks.json (snapshots named by absolute path)."""
    doc = json.loads((ROOT / "tasks.json").read_text())
    doc["snapshots"] = {name: str(ROOT / path) for name, path in doc["snapshots"].items()}
    tasks = folder / "tasks.json"
    tasks.write_text(json.dumps(doc, indent=1))
    register(tasks, results_dir=folder / "results", registration_id=REGISTRATION)
    return folder / "results"


def study_of(results: Path) -> Study:
    """The study of the tasks file next to ``results``."""
    study = load_tasks_file(results.parent / "tasks.json").study
    assert study is not None
    return study


def answer_key(received: Received) -> str:
    """The prompt text after the page: the question and the answer format, unique per task and format."""
    return received.texts[-1]
