"""What ``capreplay run`` asks for, checked and turned into a run ready to execute.

:func:`open_run` does everything before the first episode: the tasks file (a benchmark's, or the one given),
the registration check, the snapshot the tasks name, the agents' specs, the run's id and shard, and the run
folder's ``run.json`` (written, or checked when the run resumes). A conflict between options is a
``UsageError``; a bad file an ``InputError``; nothing is written before every check has passed.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from capreplay.agents.harness import AgentSpec
from capreplay.agents.run import agent_spec, new_run_info, start_agent_run
from capreplay.errors import InputError, UsageError
from capreplay.models.episode import AgentRunInfo
from capreplay.models.workflow import Workflows
from capreplay.runs.folder import run_dir
from capreplay.runs.registration import check_registration, registration_path
from capreplay.runs.shards import sharded
from capreplay.runs.tasks_file import DEFAULT_TASKS, load_tasks_file
from capreplay.util.once import given_once


@dataclass(frozen=True)
class RunRequest:
    """The options of ``capreplay run``, as given (None: not given)."""

    agents: list[str]
    results: Path
    tasks: Path | None = None
    benchmark: Path | None = None
    snapshot: Path | None = None
    registration: str | None = None
    run_id: str | None = None
    task_ids: list[str] | None = None
    repeats: int | None = None
    shard: tuple[int, int] | None = None


@dataclass(frozen=True)
class OpenRun:
    """A run whose ``run.json`` is written: what its episodes need."""

    info: AgentRunInfo
    workflows: Workflows
    tasks_file: Path
    snapshot: Path
    specs: dict[str, AgentSpec]
    folder: Path


def tasks_file_of(request: RunRequest) -> Path:
    """The tasks file: a benchmark's ``DIR/tasks.json``, else ``--tasks``, else ``tasks.json``."""
    if request.benchmark is not None and request.tasks is not None:
        raise UsageError("give --benchmark DIR or --tasks FILE, not both: a benchmark's tasks are DIR/tasks.json")
    if request.benchmark is not None:
        return request.benchmark / DEFAULT_TASKS
    return request.tasks or DEFAULT_TASKS


def open_run(request: RunRequest) -> OpenRun:
    """Check the request and write (or check) the run's ``run.json``; see the module docstring."""
    tasks_file = tasks_file_of(request)
    agents = given_once(request.agents, "--agent")
    task_ids = given_once(request.task_ids or [], "--task") or None
    tasks = load_tasks_file(tasks_file)
    if tasks.workflows is None:
        raise InputError("has no 'workflows' section: no tasks for agents", tasks_file)
    workflows = tasks.workflows
    if request.repeats:
        workflows = workflows.model_copy(update={"repeats": request.repeats})
    registered = tasks.snapshot_path(workflows.snapshot, tasks_file)
    if request.registration:
        if request.snapshot and request.snapshot.resolve() != registered.resolve():
            raise UsageError(
                f"--snapshot {request.snapshot}: registration {request.registration} registered {registered}, "
                "and a registered run uses the registered snapshot"
            )
        held = request.results
        if request.benchmark is not None and registration_path(request.benchmark, request.registration).is_file():
            held = request.benchmark  # a benchmark commits its registrations beside its tasks
        check_registration(request.registration, results_dir=held, tasks_path=tasks_file)
    snapshot = request.snapshot or registered
    specs = {name: agent_spec(name, workflows, tasks_file) for name in agents}
    run_id = request.run_id or request.registration or "-".join(agents)
    run_dir(request.results, run_id)  # a bad id is refused before the snapshot is read
    info = new_run_info(run_id, request.registration, tasks_file, workflows, snapshot, agents, specs, task_ids)
    if request.shard is not None:
        info = sharded(info, *request.shard)
    folder = run_dir(request.results, info.run_id)
    info = start_agent_run(folder, info)
    return OpenRun(info, workflows, tasks_file, snapshot, specs, folder)
