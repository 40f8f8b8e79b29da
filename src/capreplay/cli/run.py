"""``capreplay run --agent NAME ...``: agents solve the workflow tasks on the served snapshot.

Each episode gets a fresh offline Chromium (through ``capreplay.browser``, with a CDP port) on its own ports
of one replay server; the agent runs as a subprocess speaking JSON lines (``capreplay.models.agent_protocol``).
Every step's screenshot, the answer, the usage, the time and every request with its replay result are kept in
RESULTS/runs/RUN_ID/. With ``--registration`` the run refuses to start unless every registered input is
unchanged. Rerunning the same command resumes: recorded episodes are never run again.
"""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path
from typing import Any

from capreplay.cli.options import positive_int
from capreplay.errors import UsageError
from capreplay.util.once import given_once

DEFAULT_TASKS = Path("tasks.json")


def add_parser(sub: Any) -> None:
    """Register the verb."""
    p = sub.add_parser("run", help="run agents on the workflow tasks, offline (resumes)", description=__doc__)
    p.add_argument(
        "--agent",
        action="append",
        required=True,
        metavar="NAME",
        help="gold or browser_use; repeat the option to run several agents, each once (required)",
    )
    p.add_argument(
        "--tasks",
        type=Path,
        default=DEFAULT_TASKS,
        metavar="FILE",
        help=f"the tasks file with the 'workflows' section (default: {DEFAULT_TASKS})",
    )
    p.add_argument(
        "--snapshot",
        type=Path,
        metavar="DIR",
        help="the world snapshot (default: the one the tasks file's workflows name; with --registration "
        "only that one is accepted)",
    )
    p.add_argument(
        "--registration",
        metavar="ID",
        help="refuse to start unless the inputs of this registration are unchanged (default: none)",
    )
    p.add_argument(
        "--run-id",
        metavar="ID",
        help="the run's folder name under RESULTS/runs (default: the registration id, else the agents' names "
        "joined by '-', e.g. gold-browser_use)",
    )
    p.add_argument(
        "--results",
        type=Path,
        default=Path("results"),
        metavar="DIR",
        help="the folder of registrations/ and runs/ (default: results)",
    )
    p.add_argument(
        "--task",
        action="append",
        metavar="ID",
        help="only this workflow task (repeatable, each once; default: every task)",
    )
    p.add_argument(
        "--repeats", type=positive_int, metavar="N", help="run every task N times (default: the workflows' repeats)"
    )
    p.add_argument(
        "--browsers",
        type=positive_int,
        default=1,
        metavar="N",
        help="episodes run at once, each with its own browser (default: 1)",
    )
    p.set_defaults(run=run)


def _once(option: str, values: list[str] | None) -> list[str]:
    """``values`` of a repeatable option; one given twice is refused (a slip, like ``--pages a,a``)."""
    return given_once(values or [], option)


def run(args: argparse.Namespace) -> int:
    """Plan (or resume) the run, execute it, print a summary; exit status 0 even if episodes failed."""
    from capreplay.agents.run import agent_spec, execute_run, new_run_info, start_agent_run
    from capreplay.errors import InputError
    from capreplay.runs.folder import run_dir as runs_folder
    from capreplay.runs.registration import check_registration
    from capreplay.runs.tasks_file import load_tasks_file

    tasks_file: Path = args.tasks
    agents = _once("--agent", args.agent)
    task_ids = _once("--task", args.task) or None
    tasks = load_tasks_file(tasks_file)
    if tasks.workflows is None:
        raise InputError("has no 'workflows' section: no tasks for agents", tasks_file)
    workflows = tasks.workflows
    if args.repeats:
        workflows = workflows.model_copy(update={"repeats": args.repeats})
    registered = tasks.snapshot_path(workflows.snapshot, tasks_file)
    if args.registration and args.snapshot and args.snapshot.resolve() != registered.resolve():
        raise UsageError(
            f"--snapshot {args.snapshot}: registration {args.registration} registered {registered}, "
            "and a registered run uses the registered snapshot"
        )
    if args.registration:
        check_registration(args.registration, results_dir=args.results, tasks_path=tasks_file)
    snapshot = args.snapshot or registered
    specs = {name: agent_spec(name, workflows, tasks_file) for name in agents}
    run_id = args.run_id or args.registration or "-".join(agents)
    folder = runs_folder(args.results, run_id)
    info = new_run_info(run_id, args.registration, tasks_file, workflows, snapshot, agents, specs, task_ids)
    info = start_agent_run(folder, info)

    def progress(record: Any) -> None:
        off = f", {len(record.off_snapshot)} requests off the snapshot" if record.off_snapshot else ""
        print(
            f"  {record.key.id()}: {record.status} in {record.duration_s:.1f} s, {len(record.steps)} steps{off}",
            flush=True,
        )

    summary = asyncio.run(
        execute_run(snapshot, info, workflows, specs, folder, browsers=args.browsers, on_episode=progress)
    )
    statuses = ", ".join(f"{k} {v}" for k, v in sorted(summary.statuses.items())) or "none"
    print(
        f"run {run_id}: {summary.planned} episodes planned, {summary.skipped} already recorded, {summary.ran} run "
        f"in {summary.elapsed_s:.1f} s ({statuses}); {summary.off_snapshot} left the snapshot"
    )
    print(f"records in {folder}; judge them: capreplay judge {folder}")
    return 0
