"""``capreplay benchmark``: the real applications of the benchmark, one at a time on 127.0.0.1.

    capreplay benchmark list                     every application: kind, version, source, licence, data
    capreplay benchmark start NAME [--work DIR]  install (once), fill and serve it until interrupted
    capreplay benchmark freeze [NAME...] -o DIR  capture each with benchmark/plans/NAME.json, join them into DIR
    capreplay benchmark join NAME=DIR... -o DIR  join snapshots captured one by one (freeze's last step)
    capreplay benchmark tasks [-o FILE]          compile benchmark/tasks/*.json into benchmark/tasks.json
    capreplay benchmark cards [--check]          compile benchmark/cards/*.json into benchmark/cards.json
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path
from typing import Any


def add_parser(sub: Any) -> None:
    """Register the verb and its steps."""
    verb = sub.add_parser("benchmark", help="the benchmark's real applications: list them, start one",
                          description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    steps = verb.add_subparsers(dest="step", required=True, metavar="STEP")
    listing = steps.add_parser("list", help="list the applications")
    listing.set_defaults(run=run_list)
    start = steps.add_parser("start", help="install, fill and serve one application on 127.0.0.1 until interrupted")
    start.add_argument("name", metavar="NAME", help="the application (see 'capreplay benchmark list')")
    start.add_argument("--work", type=Path, metavar="DIR",
                       help="the folder for its files and data (default: a new temporary folder)")  # fmt: skip
    start.set_defaults(run=run_start)
    freeze = steps.add_parser("freeze", help="capture applications with their plans and join them into one snapshot")
    freeze.add_argument("names", nargs="*", metavar="NAME",
                        help="the applications and parts (default: all in list order, then shopadmin)")  # fmt: skip
    freeze.add_argument("-o", "--out", type=Path, required=True, metavar="DIR", help="the new snapshot (required)")
    _benchmark_folder(freeze, "plans/NAME.json")
    freeze.add_argument("--parts", type=Path, metavar="DIR",
                        help="keep each application's own snapshot in DIR/NAME (default: a temporary folder)")
    freeze.set_defaults(run=run_freeze)
    join = steps.add_parser("join", help="join snapshots captured one by one into one snapshot")
    join.add_argument("parts", nargs="+", metavar="NAME=DIR", help="each part's name (its WARC's prefix) and folder")
    join.add_argument("-o", "--out", type=Path, required=True, metavar="DIR", help="the new snapshot (required)")
    join.add_argument("--strict", action="append", default=[], metavar="HOST",
                      help="replay this host without the nearest-query rule, as freeze does for every application "
                      "but the static ones (repeatable; default: none)")
    join.set_defaults(run=run_join)
    tasks = steps.add_parser("tasks", help="compile the task recipes into the benchmark's tasks file")
    _benchmark_folder(tasks, "tasks/*.json", out="tasks.json")
    tasks.add_argument("--snapshot", metavar="PATH",
                       help="the snapshot the file names, relative to the file (default: snapshot)")
    tasks.set_defaults(run=run_tasks)
    cards = steps.add_parser("cards", help="compile the site cards into the benchmark's cards file")
    _benchmark_folder(cards, "cards/*.json and snapshot/", out="cards.json")
    cards.add_argument("--check", action="store_true",
                       help="also load every item's page on the replay and check its selector (a browser; minutes)")
    cards.add_argument("--only", action="append", default=[], metavar="HOST",
                       help="check only this card (repeatable; default: every card)")
    cards.set_defaults(run=run_cards)


def _benchmark_folder(step: argparse.ArgumentParser, holds: str, out: str | None = None) -> None:
    """The ``--benchmark DIR`` option of a step (and its ``-o FILE``, written into DIR by default)."""
    step.add_argument("--benchmark", type=Path, default=Path("benchmark"), metavar="DIR",
                      help=f"the benchmark's folder, with {holds} (default: benchmark)")  # fmt: skip
    if out is not None:
        step.add_argument("-o", "--out", type=Path, metavar="FILE", help=f"default: DIR/{out}")


def run_list(args: argparse.Namespace) -> int:
    """One line per application."""
    from capreplay.benchmark.roster import application, names

    for name in names():
        app = application(name)
        print(f"{app.name}\t{app.kind}\t{app.title} {app.version}\t{app.source}\t{app.licence}\t{app.data}")
    return 0


def run_start(args: argparse.Namespace) -> int:
    """Serve the application; the first line on stdout is one JSON object saying where."""
    from capreplay.benchmark.roster import application
    from capreplay.benchmark.start import serve_application

    application(args.name)  # an unknown name is refused before anything is created
    if args.work is not None:
        serve_application(args.name, args.work)
        return 0
    with tempfile.TemporaryDirectory(prefix=f"capreplay-{args.name}-") as work:
        serve_application(args.name, Path(work))
    return 0


def run_freeze(args: argparse.Namespace) -> int:
    """Freeze the applications; one line per application, then one for the joined snapshot."""
    from capreplay.benchmark.freeze import freeze_benchmark
    from capreplay.benchmark.roster import part_application, part_names

    chosen = args.names or part_names()
    for name in chosen:
        part_application(name)  # an unknown name is refused before anything starts
    with tempfile.TemporaryDirectory(prefix="capreplay-parts-") as scratch:
        manifest = freeze_benchmark(chosen, args.benchmark, args.parts or Path(scratch), args.out)
    print(f"froze {len(manifest.pages)} pages of {len(chosen)} parts into {args.out} "
          f"(snapshot {manifest.snapshot_id[:16]})")  # fmt: skip
    return 0


def run_join(args: argparse.Namespace) -> int:
    """Join the parts; one line saying what was written."""
    from capreplay.capture.join import join_snapshots
    from capreplay.errors import UsageError

    parts: dict[str, Path] = {}
    for value in args.parts:
        name, sep, folder = value.partition("=")
        if not sep or not name or not folder or name in parts:
            raise UsageError(f"{value!r}: expected NAME=DIR, each name once")
        parts[name] = Path(folder)
    manifest = join_snapshots(parts, args.out, strict_hosts=args.strict)
    print(f"joined {len(parts)} snapshots, {len(manifest.pages)} pages, into {args.out} "
          f"(snapshot {manifest.snapshot_id[:16]})")
    return 0


def run_tasks(args: argparse.Namespace) -> int:
    """Compile and write the tasks file; one line saying how many tasks."""
    from capreplay.benchmark.task_files import SNAPSHOT_FOLDER, TASKS_FILE, compile_tasks, tasks_json
    from capreplay.util.files import write_atomic

    compiled = compile_tasks(args.benchmark, snapshot=args.snapshot or SNAPSHOT_FOLDER)
    out = args.out or args.benchmark / TASKS_FILE
    write_atomic(out, tasks_json(compiled).encode("utf-8"))
    assert compiled.workflows is not None
    print(f"wrote {out}: {len(compiled.workflows.tasks)} tasks")
    return 0


def run_cards(args: argparse.Namespace) -> int:
    """Compile and write the cards file; with ``--check``, one line per item the replay does not bear out (exit 1)."""
    import asyncio

    from capreplay.benchmark.site_cards import CARDS_FILE, cards_json, check_cards, compile_cards
    from capreplay.benchmark.task_files import SNAPSHOT_FOLDER
    from capreplay.util.files import write_atomic

    snapshot = args.benchmark / SNAPSHOT_FOLDER
    compiled = compile_cards(args.benchmark, snapshot)
    out = args.out or args.benchmark / CARDS_FILE
    write_atomic(out, cards_json(compiled).encode("utf-8"))
    items = sum(len(c.execution_items) + len(c.perception_items) for c in compiled.cards)
    print(f"wrote {out}: {len(compiled.cards)} cards, {items} items")
    if not args.check:
        return 0
    chosen = [c for c in compiled.cards if not args.only or c.site in args.only]
    problems = asyncio.run(check_cards(chosen, snapshot))
    for p in problems:
        print(f"{p.site} {(p.item or {}).get('id')} on {p.page}: {p.reason}")
    checked = sum(len(c.execution_items) + len(c.perception_items) for c in chosen)
    print(f"checked {checked} items of {len(chosen)} cards on the replay: {len(problems)} not borne out")
    return 1 if problems else 0
