"""Pre-registration on disk: hash a run's inputs, write ``results/registrations/<id>.json``, check them again.

The inputs are the tasks file's bytes, its prompt text and model settings (also hashed apart, so a
refusal can say which part changed), every snapshot manifest it names (each snapshot is verified against
its manifest first, so the manifest's hash stands for every byte), and the code version
(:class:`capreplay.runs.registration_file.CodeVersion`). :func:`check_registration` computes them again and
raises one :class:`InputError` line naming everything that differs.

The tasks file is read once and the same bytes are both hashed and parsed, so what is registered is
exactly what runs.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import platform
import re
import subprocess
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from capreplay.archive.snapshot.manifest import MANIFEST_NAME, checked_manifest
from capreplay.errors import CapreplayError, InputError, UsageError, os_reason, validation_reason
from capreplay.llm.messages import ModelSettings
from capreplay.models.episode import DEFAULT_SETTLING
from capreplay.runs.registration_file import ID_PATTERN, CodeVersion, RegisteredInputs, Registration, SnapshotInput
from capreplay.runs.tasks_file import canonical_sha256, read_tasks_file
from capreplay.util.files import write_atomic

PACKAGE_ROOT = Path(__file__).resolve().parent.parent
"""The installed ``capreplay`` package folder, whose files make up the code version."""
REGISTRATIONS = "registrations"
"""The folder under the results folder that holds registrations."""
_REQUIREMENT_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*")


def model_settings_data(settings: ModelSettings) -> dict[str, Any]:
    """The registered part of model settings: all of them but the endpoint."""
    return settings.model_dump(mode="json", exclude={"base_url"})


# ---------------------------------------------------------------------------------------------- code version


def source_tree_sha256(root: Path) -> str:
    """sha256 over every file under ``root`` (its posix path and content hash, sorted by path), no bytecode."""
    digest = hashlib.sha256()
    files = [p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"]
    for path in sorted(files, key=lambda p: p.relative_to(root).as_posix()):
        try:
            content = hashlib.sha256(path.read_bytes()).hexdigest()
        except OSError as e:
            raise CapreplayError(f"cannot read the source tree: {os_reason(e)}", path) from e
        digest.update(f"{path.relative_to(root).as_posix()}\0{content}\n".encode())
    return digest.hexdigest()


def _git(root: Path, *args: str) -> str | None:
    """The output of one git command in ``root``, or None when there is no git or no work tree."""
    try:
        done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def _installed(name: str) -> str:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def code_version(package_root: Path = PACKAGE_ROOT) -> CodeVersion:
    """The code version of the package at ``package_root``: source hash, versions, and git state if any."""
    try:
        package_version = importlib.metadata.version("capreplay")
        requirements = importlib.metadata.requires("capreplay") or []
    except importlib.metadata.PackageNotFoundError:
        package_version, requirements = "not installed", []
    names = sorted(
        {m.group(0).lower() for r in requirements if "extra ==" not in r and (m := _REQUIREMENT_NAME.match(r))}
    )
    status = _git(package_root, "status", "--porcelain", "--", ".")
    return CodeVersion(
        package_version=package_version,
        source_sha256=source_tree_sha256(package_root),
        python=platform.python_version(),
        dependencies={name: _installed(name) for name in names},
        git_commit=_git(package_root, "rev-parse", "HEAD"),
        git_dirty=None if status is None else bool(status),
    )


# ---------------------------------------------------------------------------------------------- inputs


def _snapshot_input(folder: Path, given: str) -> SnapshotInput:
    manifest = checked_manifest(folder)
    try:
        manifest_bytes = (folder / MANIFEST_NAME).read_bytes()
    except OSError as e:
        raise InputError(f"cannot read: {os_reason(e)}", folder / MANIFEST_NAME) from e
    return SnapshotInput(
        path=given, manifest_sha256=hashlib.sha256(manifest_bytes).hexdigest(), snapshot_id=manifest.snapshot_id
    )


def collect_inputs(tasks_path: Path, *, package_root: Path = PACKAGE_ROOT) -> RegisteredInputs:
    """Hash everything registered for the tasks file at ``tasks_path``; a bad file or snapshot is an InputError."""
    data, tasks = read_tasks_file(tasks_path)
    snapshots = {
        name: _snapshot_input(tasks.snapshot_path(name, tasks_path), given) for name, given in tasks.snapshots.items()
    }
    study, workflows = tasks.study, tasks.workflows
    settings = model_settings_data(study.protocol.model) if study else None
    return RegisteredInputs(
        tasks_sha256=hashlib.sha256(data).hexdigest(),
        prompt_sha256=canonical_sha256(study.protocol.model_dump(mode="json", include={"prompt", "answer_formats"}))
        if study
        else None,
        model_settings=settings,
        model_settings_sha256=canonical_sha256(settings) if settings is not None else None,
        protocol_sha256=canonical_sha256(study.protocol.model_dump(mode="json")) if study else None,
        study_tasks_sha256=canonical_sha256(study.model_dump(mode="json", include={"pages", "tasks"}))
        if study
        else None,
        workflow_tasks_sha256=canonical_sha256([t.model_dump(mode="json") for t in workflows.tasks])
        if workflows
        else None,
        judge_sha256=canonical_sha256(model_settings_data(workflows.judge.model)) if workflows else None,
        agent_model_sha256=canonical_sha256(model_settings_data(workflows.agent_model))
        if workflows and workflows.agent_model
        else None,
        agent_settling=DEFAULT_SETTLING if workflows else None,
        snapshots=snapshots,
        code=code_version(package_root),
    )


def _changed_keys(old: dict[str, Any] | None, new: dict[str, Any] | None) -> str:
    old, new = old or {}, new or {}
    keys = sorted(set(old) | set(new))
    return ", ".join(f"{k}: {old.get(k)!r} -> {new.get(k)!r}" for k in keys if old.get(k) != new.get(k))


def differences(registered: RegisteredInputs, current: RegisteredInputs) -> list[str]:
    """What differs between registered and current inputs, one short phrase each, in a fixed order."""
    found: list[str] = []
    if registered.tasks_sha256 != current.tasks_sha256:
        found.append("tasks file changed")
    if registered.prompt_sha256 != current.prompt_sha256:
        found.append("prompt template changed")
    if registered.model_settings_sha256 != current.model_settings_sha256:
        found.append(f"model settings changed ({_changed_keys(registered.model_settings, current.model_settings)})")
    rest_of_protocol = (
        registered.protocol_sha256 != current.protocol_sha256
        and registered.prompt_sha256 == current.prompt_sha256
        and registered.model_settings_sha256 == current.model_settings_sha256
    )
    if rest_of_protocol:
        found.append("protocol changed (normalisation, scoring, representations, concurrency, repeats or seed)")
    if registered.study_tasks_sha256 != current.study_tasks_sha256:
        found.append("study pages or tasks changed")
    if registered.workflow_tasks_sha256 != current.workflow_tasks_sha256:
        found.append("workflow tasks changed")
    if registered.judge_sha256 != current.judge_sha256:
        found.append("judge settings changed")
    if registered.agent_model_sha256 != current.agent_model_sha256:
        found.append("agent model settings changed")
    if registered.agent_settling != current.agent_settling and current.agent_settling is not None:
        old_settling = registered.agent_settling or "network-idle"
        found.append(f"agent settling changed ({old_settling} -> {current.agent_settling})")
    for name in sorted(set(registered.snapshots) | set(current.snapshots)):
        old, new = registered.snapshots.get(name), current.snapshots.get(name)
        if new is None:
            found.append(f"snapshot {name!r} no longer named")
        elif old is None:
            found.append(f"snapshot {name!r} added")
        elif old.path != new.path:
            found.append(f"snapshot {name!r} moved from {old.path} to {new.path}")
        elif old.manifest_sha256 != new.manifest_sha256:
            found.append(f"snapshot {name!r} manifest changed")
    old_code, new_code = registered.code, current.code
    if old_code.source_sha256 != new_code.source_sha256:
        found.append("code changed (source tree hash)")
    if old_code.package_version != new_code.package_version:
        found.append(f"capreplay version {old_code.package_version} -> {new_code.package_version}")
    if old_code.python != new_code.python:
        found.append(f"python {old_code.python} -> {new_code.python}")
    if old_code.dependencies != new_code.dependencies:
        found.append(f"dependencies changed ({_changed_keys(old_code.dependencies, new_code.dependencies)})")
    return found


# ---------------------------------------------------------------------------------------------- files


def registration_path(results_dir: Path, registration_id: str) -> Path:
    """Where registration ``registration_id`` lives; an id that is not a plain file name is a ``UsageError``."""
    if not re.fullmatch(ID_PATTERN, registration_id):
        raise UsageError(
            f"registration id {registration_id!r} must be letters, digits, '.', '_' or '-' (not starting with '.')"
        )
    return results_dir / REGISTRATIONS / f"{registration_id}.json"


def register(
    tasks_path: Path,
    *,
    results_dir: Path,
    registration_id: str | None = None,
    now: datetime | None = None,
    package_root: Path = PACKAGE_ROOT,
) -> tuple[Registration, Path]:
    """Hash the inputs of ``tasks_path`` and write the registration; an existing id is never overwritten.

    The default id is the UTC time and the first 8 hex digits of the tasks file's sha256.
    """
    if registration_id is not None:
        registration_path(results_dir, registration_id)  # a bad id is refused before anything is hashed
    inputs = collect_inputs(tasks_path, package_root=package_root)
    created = now or datetime.now(UTC)
    reg_id = registration_id or f"{created.astimezone(UTC):%Y%m%dT%H%M%SZ}-{inputs.tasks_sha256[:8]}"
    path = registration_path(results_dir, reg_id)
    if path.exists():
        raise InputError("a registration with this id exists; a registration is never replaced", path)
    registration = Registration(id=reg_id, created_at=created, tasks_file=str(tasks_path), inputs=inputs)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:  # e.g. --results names a file
        raise InputError(f"cannot create the registrations folder: {os_reason(e)}", path.parent) from e
    write_atomic(path, (registration.model_dump_json(indent=2) + "\n").encode("utf-8"))
    return registration, path


def load_registration(registration_id: str, results_dir: Path) -> Registration:
    """Read registration ``registration_id``; a missing or invalid file is one ``InputError`` line."""
    path = registration_path(results_dir, registration_id)
    try:
        data = path.read_bytes()
    except FileNotFoundError as e:
        raise InputError("no such registration (run `capreplay register` first)", path) from e
    except OSError as e:
        raise InputError(f"cannot read: {os_reason(e)}", path) from e
    try:
        registration = Registration.model_validate_json(data)
    except ValidationError as e:
        raise InputError(f"invalid registration: {validation_reason(e)}", path) from e
    if registration.id != registration_id:
        raise InputError(f"the file holds registration {registration.id!r}, not {registration_id!r}", path)
    return registration


def check_registration(
    registration_id: str,
    *,
    results_dir: Path = Path("results"),
    tasks_path: Path | None = None,
    settings: ModelSettings | None = None,
    package_root: Path = PACKAGE_ROOT,
) -> Registration:
    """The registration, if every registered input is unchanged; otherwise one ``InputError`` naming each change.

    ``tasks_path`` defaults to the file the registration was made from. ``settings``, when given, are the
    model settings the run will use (after command-line overrides); they must equal the registered ones.
    """
    registration = load_registration(registration_id, results_dir)
    path = tasks_path if tasks_path is not None else Path(registration.tasks_file)
    current = collect_inputs(path, package_root=package_root)
    found = differences(registration.inputs, current)
    if settings is not None and model_settings_data(settings) != registration.inputs.model_settings:
        found.append(
            "the run's model settings differ from the registered ones "
            f"({_changed_keys(registration.inputs.model_settings, model_settings_data(settings))})"
        )
    if found:
        raise InputError(
            f"inputs changed since registration {registration_id}: {'; '.join(found)}",
            registration_path(results_dir, registration_id),
        )
    return registration
