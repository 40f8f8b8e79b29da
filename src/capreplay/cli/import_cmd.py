"""``capreplay import FILE.warc[.gz]|FILE.wacz|FILE.har ... -o DIR``: a snapshot from WARC, WACZ and HAR files
other tools wrote."""

from __future__ import annotations

import argparse
import logging
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from capreplay.archive.warc.digests import FORMS
from capreplay.browser.determinism import DEFAULT_SEED
from capreplay.models.manifest import DigestReport, Manifest
from capreplay.util.once import given_once


def add_parser(sub: Any) -> None:
    """Register the verb."""
    p = sub.add_parser("import", help="build a snapshot from WARC/WACZ/HAR files written by other tools",
                       description=__doc__)
    p.add_argument("inputs", nargs="+", type=Path, metavar="FILE",
                   help="WARC (.warc, .warc.gz), WACZ or HAR (.har) files, each once")
    p.add_argument("-o", "--out", required=True, type=Path, metavar="DIR",
                   help="the snapshot folder to write: new, or empty, or holding this very snapshot (required)")
    p.add_argument("--page", action="append", default=[], metavar="URL",
                   help="the snapshot's pages are exactly these archived URLs (repeatable, each once); "
                        "default: the inputs' pages lists, else the top-level navigations, else every "
                        "200 HTML response (framed documents left out)")
    p.add_argument("--seed", type=int, default=DEFAULT_SEED,
                   help=f"seed of the replayed page's Math.random and crypto (default: {DEFAULT_SEED})")
    p.add_argument("--allow-digest-mismatch", action="store_true",
                   help="import records and WACZ files whose digests match no known form of their bytes; "
                        "manifest.json lists every such digest (default: refuse them)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Import, print one line of totals on stdout and one line per warning on stderr."""
    from capreplay.archive.importer.snapshot import ImportOptions, import_archives

    given_once((str(path) for path in args.inputs), "FILE")
    given_once(args.page, "--page")
    opts = ImportOptions(inputs=args.inputs, out=args.out, pages=args.page, random_seed=args.seed,
                         allow_digest_mismatch=args.allow_digest_mismatch)  # fmt: skip
    result = import_archives(opts)
    for warning in result.warnings:
        print(f"capreplay import: warning: {warning}", file=sys.stderr)
    m = result.manifest
    if result.unchanged:
        print(f"{args.out} already holds this snapshot ({m.snapshot_id[:16]}); nothing written")
        return 0
    print(f"imported {_count(result.indexed, 'response')} ({_count(sum(result.records.values()), 'record')} read), "
          f"{_count(len(m.pages), 'page')} from {_count(len(m.hosts), 'host')} into {args.out} "
          f"(snapshot {m.snapshot_id[:16]})")
    for line in digest_lines(m.digests):
        print(line)
    _build_ready(args.out, m)
    return 0


def _build_ready(root: Path, manifest: Manifest) -> None:
    """Make the snapshot's ready responses in the cache now, so that its first ``serve`` sends them at once
    instead of building them in its background. The import is done whatever happens here: a server builds
    whatever is missing (see :mod:`capreplay.replay.ready.slot`)."""
    from capreplay.replay.ready.builder import open_ready
    from capreplay.replay.store import INDEX_FILE

    index = next((f for f in manifest.files if f.path == INDEX_FILE), None)
    if index is None:
        return
    try:
        opened = open_ready(root, manifest.snapshot_id, index.sha256)
    except Exception:  # derived state only: never the import's failure
        logging.getLogger("capreplay.import").debug("could not build the ready responses", exc_info=True)
        return
    if opened is not None:
        opened.close()


def digest_lines(report: DigestReport | None) -> list[str]:
    """The report's lines on digests: each file's digests over another form, and mismatches let through."""
    if report is None:
        return []
    counts = Counter((d.file, d.digest, d.form) for d in report.other_forms)
    lines = [f"digests: {_count(n, f'{digest} digest')} in {file} {'is' if n == 1 else 'are'} over {FORMS[form]}"
             f"{', not the payload as stored' if digest == 'payload' else ''}; accepted"
             for (file, digest, form), n in counts.items()]  # fmt: skip
    if report.mismatches:
        n = len(report.mismatches)
        lines.append(f"digests: {_count(n, 'digest')} matched nothing and {'was' if n == 1 else 'were'} imported "
                     "as --allow-digest-mismatch asks; manifest.json lists every one")  # fmt: skip
    return lines


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"
