"""``capreplay run``: agents solve the workflow tasks on the served snapshot; shards of a run are merged.

    capreplay run [start] --agent NAME ...           plan (or resume) a run and run it (the default step)
    capreplay run ... --shard I/N                    run only shard I of N (0 <= I < N) into a folder of its own
    capreplay run merge RUN_DIR... [--run-id ID]     join the N shard folders of one run into one run folder

Each episode gets a fresh offline Chromium (through ``capreplay.browser``, with a CDP port) on its own ports
of one replay server; the agent runs as a subprocess speaking JSON lines (``capreplay.agents.protocol``).
Every step's screenshot, the answer, the usage, the time and every request with its replay result are kept in
RESULTS/runs/RUN_ID/. With ``--registration`` the run refuses to start unless every registered input is
unchanged. Rerunning the same command resumes: recorded episodes are never run again.
"""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path
from typing import Any

from capreplay.cli import StepsWithDefault
from capreplay.cli.options import add_backend_options, check_backend_options, positive_int
from capreplay.errors import UsageError


def shard_option(text: str) -> tuple[int, int]:
    """``I/N``: shard I of N, counted from 0 (Kubernetes' JOB_COMPLETION_INDEX, Slurm's --array=0-7)."""
    from capreplay.runs.shards import parse_shard

    try:
        return parse_shard(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def add_parser(sub: Any) -> None:
    """Register the verb and its steps: ``start`` (also the default, ``capreplay run --agent ...``) and ``merge``."""
    verb = sub.add_parser("run", help="run agents on the workflow tasks, offline (resumes); merge shards",
                          description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    steps = verb.add_subparsers(dest="step", required=True, metavar="STEP", action=StepsWithDefault,
                                default_step="start")
    p = steps.add_parser("start", help="plan (or resume) a run and run its episodes (the default step)",
                         description="Plan (or resume) an agent run and run every episode not yet recorded. "
                         "Rerunning the same command resumes.")  # fmt: skip
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
        metavar="FILE",
        help="the tasks file with the 'workflows' section (default: tasks.json)",
    )
    p.add_argument(
        "--benchmark",
        type=Path,
        metavar="DIR",
        help="run a benchmark's tasks: those of DIR/tasks.json on its frozen snapshot (the real applications' "
        "benchmark is the folder 'benchmark'); instead of --tasks",
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
        metavar="N",
        help="episodes run at once on this machine, each with its own browser (default: 1; local backend only)",
    )
    add_backend_options(p, "episode")
    p.add_argument(
        "--shard",
        type=shard_option,
        metavar="I/N",
        help="run only shard I of N, counted from 0 (0 <= I < N): episode k of the seeded plan belongs to shard "
        "k mod N; it runs into RESULTS/runs/<run id>.shard-I-of-N, and `capreplay run merge` joins the N shards "
        "(default: the whole run)",
    )
    p.set_defaults(run=run_start)

    m = steps.add_parser("merge", help="join the shard folders of one run into one run folder",
                         description="Check that the shard folders (made by `capreplay run --shard I/N`) are one "
                         "run's, every shard 0..N-1 once and complete, and write them as one run folder: run.json "
                         "of the whole plan, episodes.jsonl in plan order, every screenshot (hard-linked where "
                         "possible). A gap or an overlap is refused with one line; nothing is written.")  # fmt: skip
    m.add_argument(
        "run_dirs",
        nargs="+",
        type=Path,
        metavar="RUN_DIR",
        help="the shard folders, e.g. results/runs/gold.shard-0-of-2 results/runs/gold.shard-1-of-2",
    )
    m.add_argument(
        "--run-id",
        metavar="ID",
        help="the merged run's folder name (default: the whole run's id the shards record, e.g. gold)",
    )
    m.add_argument(
        "--results",
        type=Path,
        metavar="DIR",
        help="write the merged run into DIR/runs (default: the folder holding the first shard)",
    )
    m.set_defaults(run=run_merge)  # fmt: skip


def run_start(args: argparse.Namespace) -> int:
    """Plan (or resume) the run, execute it, print a summary; exit status 0 even if episodes failed."""
    from capreplay.agents.request import RunRequest, open_run
    from capreplay.agents.run import execute_run

    if args.backend == "ray" and args.browsers is not None:
        raise UsageError("--browsers is for the local backend: on Ray each episode asks for a core, and the cluster "
                         "runs as many at once as it has")  # fmt: skip
    check_backend_options(args)
    request = RunRequest(agents=args.agent, results=args.results, tasks=args.tasks, benchmark=args.benchmark,
                         snapshot=args.snapshot, registration=args.registration, run_id=args.run_id,
                         task_ids=args.task, repeats=args.repeats, shard=args.shard)  # fmt: skip
    opened = open_run(request)
    info, folder, run_id = opened.info, opened.folder, opened.info.run_id

    def progress(record: Any) -> None:
        off = f", {len(record.off_snapshot)} requests off the snapshot" if record.off_snapshot else ""
        print(
            f"  {record.key.id()}: {record.status} in {record.duration_s:.1f} s, {len(record.steps)} steps{off}",
            flush=True,
        )

    if args.backend == "ray":
        from capreplay.cluster.episodes import execute_run_ray

        summary = execute_run_ray(opened.snapshot, info, opened.workflows, opened.tasks_file, folder,
                                  address=args.ray_address, on_episode=progress)  # fmt: skip
    else:
        summary = asyncio.run(execute_run(opened.snapshot, info, opened.workflows, opened.specs, folder,
                                          browsers=args.browsers or 1, on_episode=progress))  # fmt: skip
    statuses = ", ".join(f"{k} {v}" for k, v in sorted(summary.statuses.items())) or "none"
    print(
        f"run {run_id}: {summary.planned} episodes planned, {summary.skipped} already recorded, {summary.ran} run "
        f"in {summary.elapsed_s:.1f} s ({statuses}); {summary.off_snapshot} left the snapshot"
    )
    if info.shard is not None:
        print(
            f"records of shard {info.shard.index} of {info.shard.count} in {folder}; when every shard is done, "
            f"merge them: capreplay run merge {folder.parent / info.shard.run_id}.shard-*-of-{info.shard.count}"
        )
    else:
        print(f"records in {folder}; judge them: capreplay judge {folder}")
    return 0


def run_merge(args: argparse.Namespace) -> int:
    """Merge the shard folders into one run folder; print what was written."""
    from capreplay.runs.folder import run_dir as runs_folder
    from capreplay.runs.merge import check_shards, write_merged

    folders: list[Path] = args.run_dirs
    if args.run_id:
        runs_folder(Path(), args.run_id)  # a bad id is refused before any shard is read
    shards = check_shards(folders)
    first = shards[0].info.shard
    assert first is not None
    run_id = args.run_id or first.run_id
    # beside the shards by default, whatever their folder is called
    out = runs_folder(args.results, run_id) if args.results else folders[0].parent / run_id
    merged = write_merged(shards, out, run_id)
    print(f"run {run_id}: {merged.shards} shards merged, {merged.episodes} episodes, {merged.files} files")
    print(f"records in {out}; judge them: capreplay judge {out}")
    return 0
