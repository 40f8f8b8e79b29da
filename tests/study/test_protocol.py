"""The repository's tasks.json and its models: it loads, it holds the study's protocol, bad files are refused."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from capreplay.errors import InputError
from capreplay.models.task import (
    ACT_ANSWER_SHAPES,
    READ_NORMALIZATION,
    REPRESENTATIONS,
    TasksFile,
    parse_tasks_file,
)
from capreplay.runs.tasks_file import load_tasks_file
from capreplay.testing.fixtures.study.tasks import bundled_tasks_path, load_tasks
from capreplay.util.answer_text import normalize_answer

REPO = Path(__file__).resolve().parents[2]
TASKS_JSON = REPO / "tasks.json"


@pytest.fixture(scope="module")
def tasks() -> TasksFile:
    return load_tasks_file(TASKS_JSON)


def test_the_repository_tasks_file_holds_the_study_and_the_replay_checks(tasks: TasksFile) -> None:
    assert tasks.schema_version == 1
    assert tasks.snapshots == {"fixtures": "snapshots/fixtures", "study": "snapshots/study", "world": "snapshots/world"}
    for name in tasks.snapshots:
        assert (tasks.snapshot_path(name, TASKS_JSON) / "manifest.json").is_file()
    study = tasks.study
    assert study is not None and study.snapshot == "study"
    assert len(study.pages) == 10
    assert len(study.tasks) == 80
    for page in study.pages:
        kinds = sorted(t.kind for t in study.page_tasks(page.id))
        assert kinds == ["ACT"] * 3 + ["READ"] * 5, page.id
    checks = ["fixtures-read-price", "fixtures-read-redirect", "fixtures-act-order"]
    assert [c.id for c in tasks.replay_checks] == checks


def test_the_protocol_values(tasks: TasksFile) -> None:
    assert tasks.study is not None
    protocol = tasks.study.protocol
    model = protocol.model
    assert (model.provider, model.model, model.max_tokens, model.thinking, model.timeout_s) == (
        "anthropic",
        "claude-sonnet-5",
        512,
        {"type": "disabled"},
        120.0,
    )
    assert model.base_url is None and model.temperature is None
    assert (protocol.concurrency, protocol.repeats) == (4, 3)
    assert tuple(protocol.representations) == REPRESENTATIONS
    assert set(protocol.answer_formats.act) == set(ACT_ANSWER_SHAPES)


def test_the_study_tasks_are_the_fixture_sites_tasks(tasks: TasksFile) -> None:
    # The fixture sites ship their own task file (the location measurement rewrites it); the two must not drift.
    fixture = load_tasks(bundled_tasks_path())
    assert tasks.study is not None
    assert tasks.study.pages == fixture.pages
    assert tasks.study.tasks == fixture.tasks


# Each normalisation step the protocol names, and a string only that step changes: ties the names to the scorer.
STEP_EXAMPLES = {
    "nfkc": ("ﬁle", "file"),
    "dashes": ("2019–2020", "2019-2020"),
    "markdown_unescape": ("snake\\_case", "snake_case"),
    "whitespace": ("  two \n words ", "two words"),
    "trailing_period": ("done.", "done"),
    "casefold": ("Straße", "strasse"),
}


def test_the_normalisation_steps_are_the_scorers(tasks: TasksFile) -> None:
    assert tasks.study is not None
    assert tuple(s.name for s in tasks.study.protocol.read_normalization) == READ_NORMALIZATION
    assert tuple(STEP_EXAMPLES) == READ_NORMALIZATION
    for step, (raw, normal) in STEP_EXAMPLES.items():
        assert normalize_answer(raw) == normal, step


# -------------------------------------------------------------------------------------------- bad files


def _protocol(doc: dict[str, Any]) -> dict[str, Any]:
    protocol: dict[str, Any] = doc["study"]["protocol"]
    return protocol


def _set(path: str, value: object) -> Callable[[dict[str, Any]], None]:
    def change(doc: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        node: Any = doc
        for part in parents:
            node = node[int(part)] if isinstance(node, list) else node[part]
        if isinstance(node, list):
            node[int(last)] = value
        else:
            node[last] = value

    return change


def _delete(path: str) -> Callable[[dict[str, Any]], None]:
    def change(doc: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        node: Any = doc
        for part in parents:
            node = node[int(part)] if isinstance(node, list) else node[part]
        del node[last]

    return change


def _reorder_steps(doc: dict[str, Any]) -> None:
    steps = _protocol(doc)["read_normalization"]
    steps[1], steps[2] = steps[2], steps[1]


def _duplicate_task(doc: dict[str, Any]) -> None:
    doc["study"]["tasks"].append(copy.deepcopy(doc["study"]["tasks"][0]))


BAD = {
    "schema version": (_set("schema_version", 2), "schema_version: Value error, schema_version 2 is not supported"),
    "missing model": (_delete("study.protocol.model"), "study.protocol.model: Field required"),
    "unknown key": (_set("study.protocol.temperature", 0), "study.protocol.temperature: Extra inputs"),
    "unknown snapshot": (_set("study.snapshot", "nowhere"), "names snapshot 'nowhere'"),
    "task on no page": (_set("study.tasks.0.page", "nowhere"), "names page 'nowhere'"),
    "duplicate task": (_duplicate_task, "duplicate task id 'article.read.1'"),
    "empty target": (_set("study.tasks.5.target", []), "study.tasks.5.ACT.target: List should have at least 1"),
    "no page slot": (
        _set("study.protocol.prompt.user", "{question} {answer_format}"),
        "must hold {page} exactly once, not 0 times",
    ),
    "wrong answer shape": (
        _set("study.protocol.answer_formats.act.raw_html.fields.0.name", "css"),
        "the raw_html ACT answer must be {selector: string}",
    ),
    "optional made required": (
        _set("study.protocol.answer_formats.act.markdown.fields.1.required", True),
        "the markdown ACT answer must be {text: string, occurrence: integer?}",
    ),
    "steps out of order": (_reorder_steps, "the steps must be the scorer's, in its order"),
    "no act format": (_delete("study.protocol.answer_formats.act.screenshot"), "has no format for screenshot"),
    "zero concurrency": (_set("study.protocol.concurrency", 0), "study.protocol.concurrency: Input should be greater"),
    "bad location": (_set("study.tasks.0.location", "sideways"), "study.tasks.0.READ.location: Input should be"),
    "replay check snapshot": (_set("replay_checks.0.snapshot", "gone"), "replay check 'fixtures-read-price'"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_an_invalid_tasks_file_is_one_line_naming_the_file_and_field(case: str, tmp_path: Path) -> None:
    change, expected = BAD[case]
    doc = json.loads(TASKS_JSON.read_text(encoding="utf-8"))
    change(doc)
    bad = tmp_path / "tasks.json"
    bad.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(InputError) as caught:
        load_tasks_file(bad)
    line = caught.value.line()
    assert "\n" not in line
    assert line.startswith(f"{bad}: invalid tasks file: ")
    assert expected in line
    assert caught.value.exit_code == 2


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b'{"schema_version": 1,', "not valid JSON: Expecting property name enclosed in double quotes at line 1"),
        (b"\xff\xfe{}", "not valid JSON"),
        (b"[]", "invalid tasks file: (top level): Input should be a valid dictionary"),
    ],
)
def test_a_file_that_is_not_a_tasks_object_is_refused(data: bytes, expected: str) -> None:
    with pytest.raises(InputError, match=r"^tasks\.json: ") as caught:
        parse_tasks_file(data, "tasks.json")
    assert expected in caught.value.line()


def test_a_missing_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="cannot read: No such file"):
        load_tasks_file(tmp_path / "absent.json")


def test_a_file_without_a_study_loads() -> None:
    # Other task families (replay checks now, workflow tasks later) need no study section.
    doc = {"schema_version": 1, "snapshots": {"fixtures": "snapshots/fixtures"}}
    assert parse_tasks_file(json.dumps(doc), "t.json").study is None


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b"{not json", "not valid JSON: Expecting property name enclosed in double quotes at line 1 column 2"),
        (None, "invalid tasks file: study.protocol.model: Field required"),
    ],
)
def test_the_command_line_refuses_a_bad_tasks_file_with_exit_status_2(
    content: bytes | None, expected: str, tmp_path: Path
) -> None:
    if content is None:
        doc = json.loads(TASKS_JSON.read_text(encoding="utf-8"))
        del doc["study"]["protocol"]["model"]
        content = json.dumps(doc).encode()
    bad = tmp_path / "tasks.json"
    bad.write_bytes(content)
    results = tmp_path / "results"
    done = subprocess.run(
        [sys.executable, "-m", "capreplay", "register", "--tasks", str(bad), "--results", str(results)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    assert done.stderr.count("\n") == 1
    assert done.stderr.startswith(f"capreplay register: {bad}: {expected}")
    assert not results.exists()
