"""``capreplay import FILE.warc[.gz]|FILE.wacz ... -o DIR``: a snapshot from WARC/WACZ files other tools wrote."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from capreplay.browser.determinism import DEFAULT_SEED


def add_parser(sub: Any) -> None:
    """Register the verb."""
    p = sub.add_parser("import", help="build a snapshot from WARC/WACZ files written by other tools",
                       description=__doc__)
    p.add_argument("inputs", nargs="+", type=Path, metavar="FILE", help="WARC (.warc, .warc.gz) or WACZ files")
    p.add_argument("-o", "--out", required=True, type=Path, help="new snapshot folder")
    p.add_argument("--page", action="append", default=[], metavar="URL",
                   help="the snapshot's pages are exactly these archived URLs (repeatable); "
                        "default: the inputs' pages lists, else every 200 HTML response")
    p.add_argument("--seed", type=int, default=DEFAULT_SEED, help="seed of the replayed page's Math.random and crypto")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Import, print one line of totals on stdout and one line per warning on stderr."""
    from capreplay.archive.importer import ImportOptions, import_archives

    result = import_archives(ImportOptions(inputs=args.inputs, out=args.out, pages=args.page, random_seed=args.seed))
    for warning in result.warnings:
        print(f"capreplay import: warning: {warning}", file=sys.stderr)
    m = result.manifest
    if result.unchanged:
        print(f"{args.out} already holds this snapshot ({m.snapshot_id[:16]}); nothing written")
        return 0
    print(f"imported {_count(result.indexed, 'response')} ({_count(sum(result.records.values()), 'record')} read), "
          f"{_count(len(m.pages), 'page')} from {_count(len(m.hosts), 'host')} into {args.out} "
          f"(snapshot {m.snapshot_id[:16]})")
    return 0


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"
