"""A task file whose ACT selector matches zero or two elements on the served page: ``capreplay study selftest``
exits with status 2 and one line naming the task, the selector and the count, before anything is scored.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from capreplay.cli import main
from capreplay.testing.fixtures.study.tasks import bundled_tasks_path
from tests.support.paths import ROOT

pytestmark = pytest.mark.browser  # resolving ACT selectors loads the page in Chromium

TASK = "login.act.2"


def login_tasks(tmp_path: Path, selector: str) -> Path:
    """The bundled login page and its tasks, with the target of :data:`TASK` replaced by ``selector``."""
    doc = json.loads(bundled_tasks_path().read_text())
    tasks = [t for t in doc["tasks"] if t["page"] == "login"]
    (task,) = [t for t in tasks if t["id"] == TASK]
    task["target"] = [selector]
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps({"pages": [p for p in doc["pages"] if p["id"] == "login"], "tasks": tasks}))
    return path


@pytest.mark.parametrize(
    ("selector", "count"),
    [("#capreplay-no-such-element", 0), ("#email, button.toggle-password", 2)],
    ids=["zero", "two"],
)
def test_an_act_selector_that_does_not_match_exactly_one_element_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], selector: str, count: int
) -> None:
    tasks = login_tasks(tmp_path, selector)
    code = main(["study", "selftest", "--tasks", str(tasks), "--snapshot", str(ROOT / "snapshots" / "study")])
    out, err = capsys.readouterr()
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1
    assert err.startswith(f"capreplay study: task {TASK}: selector 1 of 1 {selector!r} matched {count} elements, ")
    assert "not exactly one" in err and "Traceback" not in err
