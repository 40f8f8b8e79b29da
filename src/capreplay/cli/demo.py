"""``capreplay demo``: capture the bundled fixture sites, serve them offline, verify, and print a summary; then
run the offline part of the representation study (self-test and token counts, no model) on the committed
study snapshot; then run the gold agent on one workflow task of each flow on the committed world snapshot
and judge the episodes, and print both summaries. The agent run and the offline study's results are kept under
--results, and the last line is the command that opens them in ``capreplay view``."""

from __future__ import annotations

import argparse
import asyncio
import shlex
import shutil
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from capreplay.study.offline.selftest import SelftestReport
    from capreplay.study.tokens.view_tokens import ViewTokens
    from capreplay.verify.page_loads import PageReport


def add_parser(sub: Any) -> None:
    """Register the verb."""
    p = sub.add_parser("demo", help="capture, serve and verify the fixture sites; offline study; gold agents judged",
                       description=__doc__)
    p.add_argument("--keep", type=Path, metavar="DIR",
                   help="keep the fixture sites' snapshot in this folder: new or empty (default: a temporary "
                        "folder, removed at the end)")
    p.add_argument("--results", type=Path, default=DEMO_RESULTS, metavar="DIR",
                   help=f"where the gold agents' run is kept, as runs/demo, replacing the demo's last run "
                        f"(default: {DEMO_RESULTS})")
    p.set_defaults(run=run)


async def _demo(out: Path) -> tuple[dict[str, float], list[PageReport]]:
    # Imported when the verb runs: importing every verb's libraries would slow every command's start-up.
    from capreplay.capture.plan_file import parse_maps
    from capreplay.capture.session import CaptureOptions, capture
    from capreplay.testing.fixtures.plan import fixture_plan
    from capreplay.testing.fixtures.sites import FixtureSites
    from capreplay.verify.page_loads import verify_pages

    sites = FixtureSites()
    await sites.start()
    try:
        t0 = time.perf_counter()
        result = await capture(CaptureOptions(out=out, plan=fixture_plan(), maps=parse_maps(sites.map_args()),
                                              progress=False))
        t1 = time.perf_counter()
    finally:
        await sites.stop()
    # The origin is down from here on: every byte the verification sees comes from the snapshot.
    reports = await verify_pages(out)
    t2 = time.perf_counter()
    archive_bytes = sum(f.size for f in result.manifest.files if f.path.startswith("archive/"))
    stats = {
        "pages": len(result.manifest.pages),
        "records": _records(out),
        "bytes": archive_bytes,
        "capture_s": t1 - t0,
        "verify_s": t2 - t1,
    }
    return stats, reports


def keep_verify_report(snapshot_id: str, reports: list[PageReport]) -> None:
    """Keep the report as ``capreplay verify`` does, for the viewer."""
    from capreplay.verify.last import save_last_report
    from capreplay.verify.report import page_json

    report = {"pages": [page_json(r) for r in reports], "misses": sum(r.misses for r in reports),
              "archived_misses": sum(r.archived_misses for r in reports)}  # fmt: skip
    save_last_report(snapshot_id, report)


def _records(root: Path) -> int:
    from capreplay.archive.warc.read import iter_records

    total = 0
    for path in sorted((root / "archive").glob("*.warc.gz")):
        with path.open("rb") as stream:
            total += sum(1 for _ in iter_records(stream, str(path)))
    return total


def summary(stats: dict[str, float], reports: list[PageReport]) -> str:
    """The demo's short table."""
    hits = sum(q.result == "hit" for r in reports for q in r.requests)
    fuzzy = sum(q.result == "fuzzy" for r in reports for q in r.requests)
    misses = sum(r.misses for r in reports)
    same = sum(bool(r.pixels and r.pixels.identical and r.text and r.text.identical) for r in reports)
    rows = [
        ("pages captured", f"{stats['pages']:.0f}"),
        ("WARC records", f"{stats['records']:.0f}"),
        ("archive bytes", f"{stats['bytes']:,.0f}"),
        ("replay hits", f"{hits} exact, {fuzzy} fuzzy"),
        ("replay misses", str(misses)),
        ("pages pixel- and text-identical", f"{same} of {len(reports)}"),
        ("capture seconds", f"{stats['capture_s']:.1f}"),
        ("verify seconds", f"{stats['verify_s']:.1f}"),
    ]
    width = max(len(k) for k, _ in rows)
    return "\n".join(f"{k.ljust(width)}  {v}" for k, v in rows)


async def _study() -> tuple[SelftestReport, list[ViewTokens], float]:
    from capreplay.cli.study import DEFAULT_SNAPSHOT
    from capreplay.study.offline.summary import offline_study
    from capreplay.study.run.tasks import load_study_tasks
    from capreplay.testing.fixtures.study.tasks import bundled_tasks_path

    # The same tasks and snapshot as `capreplay study selftest` without options.
    loaded = load_study_tasks(bundled_tasks_path())
    started = time.perf_counter()
    report, counts = await offline_study(loaded.snapshot or DEFAULT_SNAPSHOT, loaded.tasks, loaded.path)
    return report, counts, time.perf_counter() - started


DEMO_TASKS_FILE = Path("tasks.json")
DEMO_RESULTS = Path("results/demo")
DEMO_STUDY = "study-offline"
"""Where in the results folder the offline study's results go, so the viewer shows them beside the run."""
DEMO_RUN = "demo"


async def _agents(results: Path) -> tuple[list[Any], Any, float]:
    """The gold agent on the first task of each flow that needs no model to judge, two browsers; then the judge."""
    from capreplay.agents.run import agent_spec, execute_run, new_run_info, start_agent_run
    from capreplay.errors import InputError
    from capreplay.judge.run_verdicts import judge_run
    from capreplay.models.rubric import ClaimOnPage
    from capreplay.runs.episode_log import read_episodes
    from capreplay.runs.tasks_file import load_tasks_file

    tasks = load_tasks_file(DEMO_TASKS_FILE)
    if tasks.workflows is None:
        raise InputError("has no 'workflows' section", DEMO_TASKS_FILE)
    workflows = tasks.workflows.model_copy(update={"repeats": 1})
    chosen: dict[str, str] = {}
    for task in workflows.tasks:
        needs_model = any(isinstance(leaf.check, ClaimOnPage) and leaf.check.match == "model"
                          for leaf in task.rubric.leaves())  # fmt: skip
        if not needs_model:
            chosen.setdefault(task.flow, task.id)
    snapshot = tasks.snapshot_path(workflows.snapshot, DEMO_TASKS_FILE)
    specs = {"gold": agent_spec("gold", workflows, DEMO_TASKS_FILE)}
    run_dir = results / "runs" / DEMO_RUN
    # The demo's own run, made afresh each time (a run folder left from before would be resumed, not run).
    shutil.rmtree(run_dir, ignore_errors=True)
    info = new_run_info(DEMO_RUN, None, DEMO_TASKS_FILE, workflows, snapshot, ["gold"], specs, list(chosen.values()))
    started = time.perf_counter()
    await execute_run(snapshot, start_agent_run(run_dir, info), workflows, specs, run_dir, browsers=2)
    judged = await judge_run(run_dir, None)
    return read_episodes(run_dir), judged, time.perf_counter() - started


def agents_summary(episodes: list[Any], judged: Any, seconds: float) -> str:
    """The agents part's short table."""
    (gold,) = judged.metrics.agents
    steps = sum(len(e.steps) for e in episodes)
    rows = [
        ("gold episodes", f"{len(episodes)} ({', '.join(sorted(e.key.task for e in episodes))})"),
        ("steps replayed", str(steps)),
        ("requests off the snapshot", str(sum(len(e.off_snapshot) for e in episodes))),
        ("judge: partial completion", f"{gold.partial_completion.value:.2f}"),
        ("judge: success rate", f"{gold.success_rate.value:.2f}"),
        ("leaves checked", str(sum(len(v.leaves) for v in judged.verdicts))),
        ("agents + judge seconds", f"{seconds:.1f}"),
    ]
    width = max(len(k) for k, _ in rows)
    return "\n".join(f"{k.ljust(width)}  {v}" for k, v in rows)


def check_inputs(keep: Path | None, results: Path) -> None:
    """Refuse, before any site or browser starts, what would stop the demo half-way: a --keep folder that holds
    files, a --results folder that cannot be made, or a working folder without the project's tasks file and
    committed snapshots."""
    from capreplay.archive.snapshot.manifest import load_manifest
    from capreplay.capture.session import prepare_output
    from capreplay.cli.study import DEFAULT_SNAPSHOT
    from capreplay.errors import InputError, UsageError
    from capreplay.runs.tasks_file import load_tasks_file
    from capreplay.study.run.tasks import load_study_tasks
    from capreplay.testing.fixtures.study.tasks import bundled_tasks_path
    from capreplay.util.files import refuse_unmakeable_folder

    if keep is not None:
        prepare_output(keep)
    refuse_unmakeable_folder(results)
    if not DEMO_TASKS_FILE.is_file():
        raise UsageError(f"no {DEMO_TASKS_FILE} here: run `capreplay demo` in the project folder, which holds "
                         f"{DEMO_TASKS_FILE} and snapshots/", Path.cwd().as_posix())  # fmt: skip
    tasks = load_tasks_file(DEMO_TASKS_FILE)
    if tasks.workflows is None:
        raise InputError("has no 'workflows' section", DEMO_TASKS_FILE)
    load_manifest(tasks.snapshot_path(tasks.workflows.snapshot, DEMO_TASKS_FILE))
    load_manifest(load_study_tasks(bundled_tasks_path()).snapshot or DEFAULT_SNAPSHOT)


BENCHMARK = Path("benchmark")
"""The real applications' benchmark, beside the fixture world, when the demo runs in the project's folder."""


def closing_lines(results: Path, keep: Path | None, benchmark: Path | None) -> list[str]:
    """The demo's last lines: the benchmark of real applications, when there is one here, then the command that
    opens what the demo made (and the benchmark) in the viewer."""
    view = ["capreplay", "view", str(results)] + (["--snapshot", str(keep)] if keep else [])
    lines = []
    if benchmark is not None:
        view += ["--benchmark", str(benchmark)]
        run = ["capreplay", "run", "--benchmark", str(benchmark), "--agent", "gold", "--browsers", "2"]
        lines.append(f"the fixture world is small; the benchmark of eight real applications, frozen in {benchmark}/, "
                     f"runs offline too: {shlex.join(run)}")
    lines.append(f"look at the run, its episodes, the offline study and the snapshot in a browser: {shlex.join(view)}")
    return lines


def run(args: argparse.Namespace) -> int:
    """Run the demo; exit 1 if any page missed or failed, or any self-test check scored unexpectedly."""
    from capreplay.study.offline.results_folder import write_offline_results
    from capreplay.study.offline.summary import offline_summary

    check_inputs(args.keep, args.results)
    if args.keep:
        from capreplay.archive.snapshot.manifest import load_manifest

        stats, reports = asyncio.run(_demo(args.keep))
        keep_verify_report(load_manifest(args.keep).snapshot_id, reports)
    else:
        with tempfile.TemporaryDirectory(prefix="capreplay-demo-") as tmp:
            stats, reports = asyncio.run(_demo(Path(tmp) / "snapshot"))
    print(summary(stats, reports))
    selftest, counts, seconds = asyncio.run(_study())
    write_offline_results(args.results / DEMO_STUDY, selftest, counts)
    print()
    print(offline_summary(selftest, counts))
    print(f"study seconds  {seconds:.1f} (offline: no model was called)")
    episodes, judged, agent_seconds = asyncio.run(_agents(args.results))
    print()
    print(agents_summary(episodes, judged, agent_seconds))
    print()
    benchmark = BENCHMARK if (BENCHMARK / "tasks.json").is_file() else None
    print("\n".join(closing_lines(args.results, args.keep, benchmark)))
    failed = [r for r in reports if r.status != "ok" or r.misses]
    imperfect = [v for v in judged.verdicts if v.score != 1.0] + [e for e in episodes if e.off_snapshot]
    return 1 if failed or selftest.failures or imperfect else 0
