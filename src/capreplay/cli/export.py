"""``capreplay export DIR -o FILE.wacz``: write a snapshot as a WACZ that pywb and ReplayWeb.page open."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any


def add_parser(sub: Any) -> None:
    """Register the verb."""
    p = sub.add_parser("export", help="write a snapshot as a WACZ file", description=__doc__)
    p.add_argument("snapshot", type=Path, metavar="DIR", help="the snapshot folder to export (checked first)")
    p.add_argument("-o", "--output", type=Path, required=True, metavar="FILE.wacz",
                   help="the WACZ file to write; its name must end in .wacz (required)")
    p.add_argument("--force", action="store_true", help="replace FILE.wacz if it exists (default: refuse)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Verify the snapshot, write the WACZ, print one line saying what was written."""
    # Imported when the verb runs: importing every verb's libraries would slow every command's start-up.
    from capreplay.archive.wacz.export import export_wacz

    result = export_wacz(args.snapshot, args.output, force=args.force)
    print(f"wrote {result.path}: {result.size} bytes, {result.warcs} WARC file(s), "
          f"{result.records} indexed records, {result.pages} pages")
    return 0
