"""``capreplay benchmark``: the real applications of the benchmark, one at a time on 127.0.0.1.

    capreplay benchmark list                     every application: kind, version, source, licence, data
    capreplay benchmark start NAME [--work DIR]  install (once), fill and serve it until interrupted
    capreplay benchmark freeze [NAME...] -o DIR  capture each with benchmark/plans/NAME.json, join them into DIR
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
    freeze.add_argument("names", nargs="*", metavar="NAME", help="the applications (default: all, in list order)")
    freeze.add_argument("-o", "--out", type=Path, required=True, metavar="DIR", help="the new snapshot (required)")
    freeze.add_argument("--benchmark", type=Path, default=Path("benchmark"), metavar="DIR",
                        help="the benchmark's folder, with plans/NAME.json (default: benchmark)")
    freeze.add_argument("--parts", type=Path, metavar="DIR",
                        help="keep each application's own snapshot in DIR/NAME (default: a temporary folder)")
    freeze.set_defaults(run=run_freeze)


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
    from capreplay.benchmark.roster import application, names

    chosen = args.names or names()
    for name in chosen:
        application(name)  # an unknown name is refused before anything starts
    with tempfile.TemporaryDirectory(prefix="capreplay-parts-") as scratch:
        manifest = freeze_benchmark(chosen, args.benchmark, args.parts or Path(scratch), args.out)
    print(f"froze {len(manifest.pages)} pages of {len(chosen)} applications into {args.out} "
          f"(snapshot {manifest.snapshot_id[:16]})")
    return 0
