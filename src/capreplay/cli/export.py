"""``capreplay export DIR -o FILE.wacz|FILE.har``: write a snapshot as a WACZ that pywb and ReplayWeb.page open,
or as a HAR that Playwright's ``route_from_har`` replays."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from capreplay.errors import UsageError


def add_parser(sub: Any) -> None:
    """Register the verb."""
    p = sub.add_parser("export", help="write a snapshot as a WACZ or HAR file", description=__doc__)
    p.add_argument("snapshot", type=Path, metavar="DIR", help="the snapshot folder to export (checked first)")
    # --out as every other verb spells it; --output, its first spelling, still works.
    p.add_argument("-o", "--out", "--output", dest="out", type=Path, required=True, metavar="FILE",
                   help="the file to write: a WACZ if its name ends in .wacz, a HAR if it ends in .har (required)")
    p.add_argument("--force", action="store_true", help="replace FILE if it exists (default: refuse)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Verify the snapshot, write the WACZ or HAR, print one line saying what was written."""
    suffix = args.out.suffix.lower()
    if suffix == ".har":
        return _har(args)
    if suffix != ".wacz":
        raise UsageError("the output file name must end in .wacz (a WACZ) or .har (a HAR)", where=args.out)
    # Imported when the verb runs: importing every verb's libraries would slow every command's start-up.
    from capreplay.archive.wacz.export import export_wacz

    result = export_wacz(args.snapshot, args.out, force=args.force)
    print(f"wrote {result.path}: {result.size} bytes, {result.warcs} WARC file(s), "
          f"{result.records} indexed records, {result.pages} pages")
    return 0


def _har(args: argparse.Namespace) -> int:
    from capreplay.archive.har.from_snapshot import export_har

    result = export_har(args.snapshot, args.out, force=args.force)
    for url in result.left_out:
        print(f"capreplay export: warning: revisit of {url} left out: the response it repeats is not in the "
              "snapshot", file=sys.stderr)
    for url in result.still_encoded:
        print(f"capreplay export: warning: {url}: its Content-Encoding could not be undone; the body is kept "
              "encoded, with its header", file=sys.stderr)
    print(f"wrote {result.path}: {result.size} bytes, {result.entries} entries, {result.pages} pages")
    return 0
