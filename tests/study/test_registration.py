"""Pre-registration: `capreplay register` hashes a run's inputs, and a check names every input that changed."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from capreplay.archive.snapshot.manifest import load_manifest
from capreplay.errors import InputError, SnapshotError, UsageError
from capreplay.llm.messages import ModelSettings
from capreplay.runs.registration import (
    PACKAGE_ROOT,
    check_registration,
    code_version,
    load_registration,
    register,
    source_tree_sha256,
)
from capreplay.runs.registration_file import Registration

REPO = Path(__file__).resolve().parents[2]
NOW = datetime(2026, 11, 30, 12, 0, 0, tzinfo=UTC)


@dataclass
class World:
    """A copy of tasks.json and its snapshots, a small stand-in package tree, and a results folder."""

    root: Path
    tasks: Path
    package: Path
    results: Path

    def doc(self) -> dict[str, Any]:
        data: dict[str, Any] = json.loads(self.tasks.read_text(encoding="utf-8"))
        return data

    def write(self, doc: dict[str, Any]) -> None:
        self.tasks.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")

    def register(self, registration_id: str = "reg-1") -> Registration:
        registration, _ = register(
            self.tasks, results_dir=self.results, registration_id=registration_id, now=NOW, package_root=self.package
        )
        return registration

    def check(self, **kwargs: Any) -> Registration:
        return check_registration("reg-1", results_dir=self.results, package_root=self.package, **kwargs)


@pytest.fixture
def world(tmp_path: Path) -> World:
    shutil.copy(REPO / "tasks.json", tmp_path / "tasks.json")
    for name in ("fixtures", "study", "world"):
        shutil.copytree(REPO / "snapshots" / name, tmp_path / "snapshots" / name)
    package = tmp_path / "pkg"
    (package / "sub" / "__pycache__").mkdir(parents=True)
    (package / "__init__.py").write_text('"""pkg"""\n')
    (package / "sub" / "mod.py").write_text("X = 1\n")
    (package / "sub" / "__pycache__" / "mod.cpython-312.pyc").write_bytes(b"\0bytecode")
    return World(tmp_path, tmp_path / "tasks.json", package, tmp_path / "results")


def test_a_registration_holds_every_input_and_checks_clean(world: World) -> None:
    registration = world.register()
    path = world.results / "registrations" / "reg-1.json"
    assert json.loads(path.read_text())["id"] == "reg-1"
    assert load_registration("reg-1", world.results) == registration
    inputs = registration.inputs
    assert inputs.model_settings == {
        "provider": "anthropic",
        "model": "claude-sonnet-5",
        "max_tokens": 512,
        "thinking": {"type": "disabled"},
        "timeout_s": 120.0,
        "temperature": None,
    }
    assert set(inputs.snapshots) == {"fixtures", "study", "world"}
    assert inputs.workflow_tasks_sha256 and inputs.judge_sha256 and inputs.agent_model_sha256
    study = inputs.snapshots["study"]
    assert study.path == "snapshots/study"
    assert study.snapshot_id == load_manifest(world.root / "snapshots" / "study").snapshot_id
    assert inputs.code.source_sha256 == source_tree_sha256(world.package)
    assert inputs.code.git_commit is None  # the stand-in package is in no git work tree
    assert world.check() == registration


def test_the_default_id_is_the_time_and_the_tasks_hash(world: World) -> None:
    registration, path = register(world.tasks, results_dir=world.results, now=NOW, package_root=world.package)
    assert registration.id == f"20261130T120000Z-{registration.inputs.tasks_sha256[:8]}"
    assert path == world.results / "registrations" / f"{registration.id}.json"


def _prompt(doc: dict[str, Any]) -> None:
    doc["study"]["protocol"]["prompt"]["system"] += " Be brief."


def _answer_format(doc: dict[str, Any]) -> None:
    doc["study"]["protocol"]["answer_formats"]["act"]["indexed_dom"]["instruction"] += " Only the number."


def _model(doc: dict[str, Any]) -> None:
    doc["study"]["protocol"]["model"]["model"] = "claude-sonnet-5-5"


def _seed(doc: dict[str, Any]) -> None:
    doc["study"]["protocol"]["seed"] += 1


def _task(doc: dict[str, Any]) -> None:
    doc["study"]["tasks"][0]["aliases"].append("03/03/2026")


def _workflow_rubric(doc: dict[str, Any]) -> None:
    doc["workflows"]["tasks"][0]["rubric"]["description"] += " (reworded)"


def _judge(doc: dict[str, Any]) -> None:
    doc["workflows"]["judge"]["model"]["max_tokens"] += 1


def _agent_model(doc: dict[str, Any]) -> None:
    doc["workflows"]["agent_model"]["model"] = "claude-other"


def _snapshot_path(doc: dict[str, Any]) -> None:
    doc["snapshots"]["study"] = "snapshots/study-copy"


def _manifest(world: World) -> None:
    # The same manifest written another way: still valid for the same files, but other bytes.
    path = world.root / "snapshots" / "study" / "manifest.json"
    path.write_text(json.dumps(json.loads(path.read_text()), indent=4) + "\n")


def _code(world: World) -> None:
    (world.package / "sub" / "mod.py").write_text("X = 2\n")


CHANGES: dict[str, tuple[Callable[[dict[str, Any]], None], list[str]]] = {
    "prompt": (_prompt, ["tasks file changed", "prompt template changed"]),
    "answer format": (_answer_format, ["tasks file changed", "prompt template changed"]),
    "model": (
        _model,
        ["tasks file changed", "model settings changed (model: 'claude-sonnet-5' -> 'claude-sonnet-5-5')"],
    ),
    "seed": (_seed, ["tasks file changed", "protocol changed (normalisation, scoring"]),
    "task": (_task, ["tasks file changed", "study pages or tasks changed"]),
    "workflow rubric": (_workflow_rubric, ["tasks file changed", "workflow tasks changed"]),
    "judge": (_judge, ["tasks file changed", "judge settings changed"]),
    "agent model": (_agent_model, ["tasks file changed", "agent model settings changed"]),
    "snapshot path": (
        _snapshot_path,
        ["tasks file changed", "snapshot 'study' moved from snapshots/study to snapshots/study-copy"],
    ),
}


@pytest.mark.parametrize("case", sorted(CHANGES))
def test_a_changed_tasks_file_is_refused_naming_what_changed(case: str, world: World) -> None:
    world.register()
    change, expected = CHANGES[case]
    doc = world.doc()
    change(doc)
    if case == "snapshot path":
        shutil.copytree(world.root / "snapshots" / "study", world.root / "snapshots" / "study-copy")
    world.write(doc)
    with pytest.raises(InputError) as caught:
        world.check()
    line = caught.value.line()
    assert line.startswith(f"{world.results / 'registrations' / 'reg-1.json'}: inputs changed since registration")
    assert "\n" not in line
    named = line.split("registration reg-1: ", 1)[1].split("; ")
    assert len(named) == len(expected), named
    for found, wanted in zip(named, expected, strict=True):
        assert found.startswith(wanted)


def test_whitespace_in_the_tasks_file_is_a_change_too(world: World) -> None:
    world.register()
    world.tasks.write_bytes(world.tasks.read_bytes() + b"\n")
    with pytest.raises(InputError, match=r"registration reg-1: tasks file changed$"):
        world.check()


@pytest.mark.parametrize(
    ("change", "expected"),
    [(_manifest, "snapshot 'study' manifest changed"), (_code, "code changed (source tree hash)")],
)
def test_a_changed_snapshot_manifest_or_code_is_refused(
    change: Callable[[World], None], expected: str, world: World
) -> None:
    world.register()
    change(world)
    with pytest.raises(InputError, match=rf"registration reg-1: {re.escape(expected)}$"):
        world.check()


def test_bytecode_is_not_code(world: World) -> None:
    world.register()
    (world.package / "sub" / "__pycache__" / "mod.cpython-312.pyc").write_bytes(b"\0other bytecode")
    world.check()


def test_a_tampered_snapshot_is_refused_before_anything_is_compared(world: World) -> None:
    world.register()
    warc = next((world.root / "snapshots" / "study" / "archive").glob("*.warc.gz"))
    data = bytearray(warc.read_bytes())
    data[-100] ^= 0xFF
    warc.write_bytes(bytes(data))
    with pytest.raises(SnapshotError, match=r"sha256 does not match manifest\.json: file changed"):
        world.check()


def test_the_run_settings_must_be_the_registered_ones(world: World) -> None:
    registration = world.register()
    assert registration.inputs.model_settings is not None
    registered = ModelSettings.model_validate(registration.inputs.model_settings)
    # The endpoint decides where a call goes, not what it asks: it is not registered.
    world.check(settings=registered.model_copy(update={"base_url": "http://127.0.0.1:9"}))
    with pytest.raises(InputError, match=r"the run's model settings differ .*max_tokens: 512 -> 1024\)$"):
        world.check(settings=registered.model_copy(update={"max_tokens": 1024}))


def test_registrations_are_never_replaced_and_ids_are_file_names(world: World) -> None:
    world.register()
    before = (world.results / "registrations" / "reg-1.json").read_bytes()
    with pytest.raises(InputError, match="a registration with this id exists"):
        world.register()
    assert (world.results / "registrations" / "reg-1.json").read_bytes() == before
    for bad in ("../escape", ".hidden", "a/b", ""):
        with pytest.raises(UsageError, match="must be letters, digits"):
            check_registration(bad, results_dir=world.results)
    with pytest.raises(InputError, match="no such registration"):
        check_registration("reg-2", results_dir=world.results)


def test_a_damaged_registration_is_one_line(world: World) -> None:
    world.register()
    path = world.results / "registrations" / "reg-1.json"
    path.write_text(path.read_text().replace('"tasks_sha256"', '"tasks_hash"'))
    with pytest.raises(InputError, match=r"reg-1\.json: invalid registration: inputs\.tasks_sha256: Field required"):
        world.check()


def test_the_code_version_of_the_installed_package() -> None:
    code = code_version()
    assert code.package_version == "0.1.0"
    assert code.source_sha256 == source_tree_sha256(PACKAGE_ROOT)
    assert {"anthropic", "pydantic", "markdownify", "playwright", "tiktoken"} <= set(code.dependencies)
    assert "not installed" not in code.dependencies.values()
    # The checkout is a git work tree: its commit is recorded.
    assert code.git_commit is not None and len(code.git_commit) == 40


def test_register_on_the_command_line(world: World) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "capreplay", "register", "--tasks", "tasks.json", "--id", "cli-1"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=world.root,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("registered cli-1: results/registrations/cli-1.json\n")
    registration = load_registration("cli-1", world.root / "results")
    assert registration.tasks_file == "tasks.json"
    assert registration.inputs.code.source_sha256 == source_tree_sha256(PACKAGE_ROOT)
    # The same file registered in-process hashes the same (the code is the installed package in both).
    assert registration.inputs.snapshots["study"].manifest_sha256 == world.register().inputs.snapshots[
        "study"
    ].manifest_sha256
