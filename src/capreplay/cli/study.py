"""``capreplay study STEP``: the representation study on a served snapshot.

Steps: ``measure`` writes into the task file where every task is and what each ACT target is, as
measured on the snapshot (``--check`` compares instead); ``views`` writes every page's representations and
their token counts; ``selftest`` checks resolution and scoring offline with answers built from those
measured records (exit status 1 if any check fails), and with ``-o DIR`` writes what ``views`` writes from
the same page loads;
``run`` makes the model calls of a pre-registered run (resuming where it stopped); ``report`` writes
and prints the tables of a run.
The tasks come from ``--tasks`` (a tasks.json with a ``study`` section, whose snapshot is then the
default, or a bare task file of pages and tasks); without it, the study fixture sites' bundled tasks.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from capreplay.cli.options import (
    add_backend_options,
    add_base_url_option,
    check_backend_options,
    id_list,
    positive_int,
)
from capreplay.llm.access import model_base_url

if TYPE_CHECKING:
    from capreplay.study.offline.selftest import SelftestReport
    from capreplay.study.page.failures import PageFailure
    from capreplay.study.representations import Representation
    from capreplay.study.run.tasks import LoadedTasks
    from capreplay.study.tokens.view_tokens import ViewTokens

DEFAULT_SNAPSHOT = Path("snapshots/study")


def add_parser(sub: Any) -> None:
    """Register the verb and its steps."""
    p = sub.add_parser("study", help="the representation study: views and tokens, offline self-test",
                       description=__doc__)
    steps = p.add_subparsers(dest="step", required=True, metavar="STEP")

    measure = steps.add_parser("measure", help="measure every task's location and ACT target into the task file",
                               description="Load every page offline (no browser-use attached, so in the screenshot's "
                               "layout), and write each task's location tag and each ACT target's measured record "
                               "(box, click point, names, ARIA node, ref, XPath) into the task file; exit status 2 "
                               "naming the task if a chain or an answer is not found.")
    _snapshot_and_tasks(measure)
    measure.add_argument("--check", action="store_true",
                         help="write nothing; exit status 1 if the file's measures differ from the snapshot's")
    measure.set_defaults(run=run_measure)

    selftest = steps.add_parser("selftest", help="score perfect and wrong answers built from measured records",
                                description="For every task and representation, score the answer a perfect model "
                                "would give and a wrong one; exit status 1 if any scores unexpectedly.")
    _snapshot_and_tasks(selftest)
    _representations(selftest)
    selftest.add_argument("--json", action="store_true", help="print every check as one JSON object")
    selftest.add_argument("-o", "--out", type=Path, metavar="DIR",
                          help="also write what `study views -o DIR` writes, from the same page loads")
    selftest.set_defaults(run=run_selftest)

    views = steps.add_parser("views", help="write every page's representations and their token counts",
                             description="Write DIR/<page>/<representation>.txt|png, page.json and DIR/tokens.json, "
                             "and print tokens per page and representation.")
    _snapshot_and_tasks(views)
    _representations(views)
    views.add_argument("-o", "--out", type=Path, required=True, metavar="DIR", help="folder to write into")
    views.set_defaults(run=run_views)

    run = steps.add_parser("run", help="call the model for every cell of a pre-registered run (resumes)",
                           description="Check the registration, serve its study snapshot, and call the model once "
                           "per (repeat, page, task, representation) not yet recorded in RESULTS/runs/RUN_ID/.")
    run.add_argument("--registration", required=True, metavar="ID", help="the registration to check and run")
    run.add_argument("--run-id", metavar="ID", help="the run's folder name (default: the registration id)")
    run.add_argument("--results", type=Path, default=Path("results"), metavar="DIR", help="default: results")
    add_base_url_option(run, "study", "the study's")
    run.add_argument("--provider", choices=("anthropic", "openai_compatible"),
                     help="must be the registered provider (default: the registered one)")
    run.add_argument("--pages", type=id_list, metavar="A,B", help="only these page ids (default: all)")
    run.add_argument("--repeats", type=positive_int, metavar="N", help="repeats (default: the protocol's)")
    add_backend_options(run, "page session")
    run.set_defaults(run=run_run)

    report = steps.add_parser("report", help="the same as `capreplay report RUN_DIR -o RUN_DIR`",
                              description="An alias of `capreplay report RUN_DIR -o RUN_DIR` (the same code): "
                              "print the Markdown report of RUN_DIR and write report.md, report.json and the "
                              "plots into RUN_DIR.")
    report.add_argument("run_dir", type=Path, metavar="RUN_DIR", help="a run folder, e.g. results/runs/ID")
    report.add_argument("--json", action="store_true", help="print the report as JSON instead of Markdown")
    report.set_defaults(run=run_report)


def _snapshot_and_tasks(p: argparse.ArgumentParser) -> None:
    p.add_argument("--snapshot", type=Path, metavar="DIR",
                   help=f"the snapshot the pages are served from (default: the one the tasks file names, "
                   f"else {DEFAULT_SNAPSHOT})")
    p.add_argument("--tasks", type=Path, metavar="FILE", help="the task file (default: the bundled study tasks)")


def _representations(p: argparse.ArgumentParser) -> None:
    p.add_argument("--representations", type=id_list, metavar="A,B",
                   help="only these representations (default: all); Stagehand's browser starts only for "
                   "stagehand_snapshot")


def _chosen(args: argparse.Namespace) -> list[Representation] | None:
    """The representations ``--representations`` names (a ``UsageError`` for an unknown one), or None: all."""
    from capreplay.study.representations import get_representation

    return [get_representation(name) for name in args.representations] if args.representations else None


def _load(args: argparse.Namespace, *, measures: bool = True) -> tuple[LoadedTasks, Path]:
    """The tasks (with their measured records, or without), and the snapshot to serve."""
    from capreplay.study.run.tasks import load_study_tasks
    from capreplay.testing.fixtures.study.tasks import bundled_tasks_path

    loaded = load_study_tasks(args.tasks if args.tasks is not None else bundled_tasks_path(), measures=measures)
    return loaded, args.snapshot or loaded.snapshot or DEFAULT_SNAPSHOT


def exit_status(report: SelftestReport) -> int:
    """1 if any check scored unexpectedly or any page could not be checked, else 0."""
    return 1 if report.failures or report.page_failures else 0


def run_selftest(args: argparse.Namespace) -> int:
    """Run the self-test and print its table (or JSON)."""
    # Imported when the step runs: importing every verb's libraries would slow every command's start-up.
    from capreplay.study.offline.results_folder import selftest_document
    from capreplay.study.offline.selftest import selftest_table
    from capreplay.study.offline.study_pass import offline_pass

    loaded, snapshot = _load(args)
    done = asyncio.run(offline_pass(snapshot, loaded.tasks, loaded.path, _chosen(args), out=args.out))
    report = done.report
    assert report is not None  # the pass was asked for the self-test
    if args.json:
        print(json.dumps(selftest_document(report)))
    else:
        print(selftest_table(report))
        if args.out is not None:
            _print_tokens(done.counts, args.out)
    _say_failed_pages(report.page_failures)
    return exit_status(report)


def run_measure(args: argparse.Namespace) -> int:
    """Measure the tasks and write the measures into the task file (or, with ``--check``, compare)."""
    from capreplay.study.offline.measure import location_table, measure_changes, measure_snapshot, measured_json
    from capreplay.util.files import write_atomic

    loaded, snapshot = _load(args, measures=args.check)
    measured = asyncio.run(measure_snapshot(snapshot, loaded.tasks))
    print(location_table(loaded.tasks, measured.locations))
    if args.check:
        changes = measure_changes(loaded.tasks, measured)
        for line in changes:
            print(f"capreplay study: {loaded.path}: {line}", file=sys.stderr)
        return 1 if changes else 0
    doc = measured_json(json.loads(loaded.path.read_bytes()), measured)
    write_atomic(loaded.path, (json.dumps(doc, indent=2, ensure_ascii=False) + "\n").encode())
    print(f"wrote {loaded.path}")
    return 0


def run_views(args: argparse.Namespace) -> int:
    """Write the representations and print the token table."""
    from capreplay.study.offline.study_pass import dump_views

    loaded, snapshot = _load(args)
    dumped = asyncio.run(dump_views(snapshot, loaded.tasks, args.out, _chosen(args)))
    _print_tokens(dumped.counts, args.out)
    _say_failed_pages(dumped.failures)
    return 1 if dumped.failures else 0


def _print_tokens(counts: Sequence[ViewTokens], out: Path) -> None:
    """The token table of the views written into ``out``, if any page was."""
    from capreplay.study.tokens.view_tokens import token_table

    if counts:
        print(token_table(counts))
        print(f"wrote {out}")


def _say_failed_pages(failures: Sequence[PageFailure]) -> None:
    """One line on stderr per page that could not be studied."""
    for failure in failures:
        print(f"capreplay study: {failure.line()}", file=sys.stderr)


def run_run(args: argparse.Namespace) -> int:
    """Run or resume a registered study run and print what it did; exit status 0 even if calls failed, 1 if a
    page session failed (its cells are left for a rerun)."""
    from capreplay.study.run.execute import RunOptions, SessionsRunner, run_study

    check_backend_options(args)
    base_url = model_base_url("study", args.base_url, None, os.environ)
    options = RunOptions(registration=args.registration, run_id=args.run_id, results=args.results,
                         base_url=base_url, provider=args.provider, pages=args.pages, repeats=args.repeats)
    sessions: SessionsRunner | None = None
    if args.backend == "ray":
        from capreplay.cluster.study_sessions import ray_sessions

        sessions = ray_sessions(args.ray_address)
    result = asyncio.run(run_study(options, sessions=sessions))
    s = result.summary
    errors = ", ".join(f"{kind} {n}" for kind, n in sorted(s.errors.items())) or "none"
    print(f"run {result.run_id}: {s.planned} cells planned, {s.skipped} already recorded, {s.called} called "
          f"in {result.sessions} page sessions; errors: {errors}; unparseable: {s.unparseable}")
    print(f"records in {result.run_dir}; tables: capreplay study report {result.run_dir}")
    for failure in result.page_failures:
        print(f"capreplay study: page {failure.page} (repeat {failure.repeat}): {failure.error}; "
              f"{len(failure.cells)} cells left for a rerun", file=sys.stderr)
    return 1 if result.page_failures else 0


def run_report(args: argparse.Namespace) -> int:
    """``capreplay report RUN_DIR -o RUN_DIR``."""
    from capreplay.cli.report import report_run_folder

    return report_run_folder(args.run_dir, args.run_dir, as_json=args.json)
