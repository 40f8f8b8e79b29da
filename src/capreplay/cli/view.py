"""``capreplay view [RESULTS_DIR]``: look at runs, episodes, study runs, snapshots and review sheets in a browser.

Serves a local, read-only web viewer on 127.0.0.1 (its address is the first line printed) until interrupted,
or with ``--export DIR`` writes the same pages as static files that open from disk.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
from pathlib import Path
from typing import Any

from capreplay.cli.serve import port
from capreplay.util.once import given_once


def add_parser(sub: Any) -> None:
    """Register the verb."""
    p = sub.add_parser("view", help="look at runs, snapshots and review sheets in a browser", description=__doc__)
    p.add_argument("results", nargs="?", type=Path, default=Path("results"), metavar="RESULTS_DIR",
                   help="the results folder: runs/ and anything holding study results or review sheets "
                        "(default: results)")
    p.add_argument("--port", type=port, default=0, help="the port on 127.0.0.1 (default: 0, any free port)")
    p.add_argument("--snapshot", action="append", type=Path, default=[], metavar="DIR",
                   help="show this snapshot too (repeatable; the snapshots runs name are shown anyway)")
    p.add_argument("--sheet", action="append", type=Path, default=[], metavar="FILE",
                   help="show this review sheet too (repeatable; sheets under RESULTS_DIR are found anyway)")
    p.add_argument("--benchmark", action="append", type=Path, default=[], metavar="DIR",
                   help="show this benchmark folder's page too: its applications, tasks and coverage (repeatable; "
                        "the real applications' benchmark is 'benchmark')")
    p.add_argument("--export", type=Path, metavar="DIR",
                   help="write the pages as static files into DIR (new or empty) instead of serving them")
    p.set_defaults(run=run)


async def _serve(inputs: Any, port_number: int) -> None:
    from capreplay.view.assemble import assemble
    from capreplay.view.serving import ViewServer

    server = ViewServer(lambda: assemble(inputs), port_number)
    await server.start()
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    try:
        sys.stdout.write(server.url + "\n")
        sys.stdout.flush()
        await stop.wait()
    finally:
        await server.stop()


def run(args: argparse.Namespace) -> int:
    """Serve until Ctrl-C or SIGTERM, or export and say where."""
    from capreplay.errors import InputError
    from capreplay.view.assemble import ViewInputs, assemble
    from capreplay.view.static_export import export_site

    given_once((str(p) for p in args.snapshot), "--snapshot")
    given_once((str(p) for p in args.sheet), "--sheet")
    if not args.results.is_dir():
        raise InputError("is not a folder: give the results folder (the one holding runs/)", args.results)
    given_once((str(p) for p in args.benchmark), "--benchmark")
    inputs = ViewInputs(args.results, list(args.snapshot), list(args.sheet), list(args.benchmark))
    if args.export is not None:
        count = export_site(assemble(inputs), args.export)
        print(f"wrote {count} files into {args.export}; open {args.export / 'index.html'}")
        return 0
    try:
        asyncio.run(_serve(inputs, args.port))
    except KeyboardInterrupt:
        return 0
    return 0
