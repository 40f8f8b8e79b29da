"""``capreplay verify DIR``: load pages offline and account for every request each page made."""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from capreplay.cli.options import http_url
from capreplay.util.once import given_once

if TYPE_CHECKING:
    from capreplay.verify.page_loads import PageReport


def add_parser(sub: Any) -> None:
    """Register the verb."""
    p = sub.add_parser("verify", help="replay pages offline and report hits, misses and fidelity",
                       description=__doc__)
    p.add_argument("snapshot", type=Path, metavar="DIR", help="the snapshot folder to replay")
    p.add_argument("--url", action="append", type=http_url, default=[], metavar="URL",
                   help="only this page, with the actions of its last capture (repeatable, each once; "
                        "default: every page of the snapshot, in capture order)")
    p.add_argument("--json", action="store_true",
                   help="print one JSON object (pages, misses, archived_misses, and the fidelity threshold's "
                        "verdicts; a page that opened WebSockets lists them) instead of a table")
    p.add_argument("--strict", action="store_true",
                   help="exit status 1 on any miss, also of things the snapshot never captured, and on any "
                        "WebSocket conversation that differs from its capture (default: misses of archived "
                        "URLs, failed pages and pages beyond the fidelity threshold)")
    p.set_defaults(run=run)


def exit_status(reports: list[PageReport], *, strict: bool = False) -> int:
    """1 if any page failed to load, a request for something archived was not served (``strict``: any
    miss at all, or any WebSocket conversation that deviated), or a page's replay differs from its capture
    beyond the fidelity threshold, else 0. A favicon or tracker that was never captured is a capture gap, not a
    defect."""
    from capreplay.verify.threshold import page_verdict
    from capreplay.verify.websockets import deviates

    failed = any(r.status != "ok" or r.archived_misses or (strict and r.misses) for r in reports)
    # --strict: a WebSocket conversation that differs from the capture's fails too
    failed = failed or (strict and any(deviates(c) for r in reports for c in r.websockets))
    differs = any((v := page_verdict(r)) is not None and not v.passed for r in reports)
    return 1 if failed or differs else 0


def run(args: argparse.Namespace) -> int:
    """Verify and print the report."""
    # Imported when the verb runs: importing every verb's libraries would slow every command's start-up.
    from capreplay.archive.snapshot.manifest import load_manifest
    from capreplay.verify.last import save_last_report
    from capreplay.verify.page_loads import verify_pages
    from capreplay.verify.report import fidelity_json, page_json, verify_table

    given_once(args.url, "--url")
    reports = asyncio.run(verify_pages(args.snapshot, args.url or None))
    misses = sum(r.misses for r in reports)
    archived = sum(r.archived_misses for r in reports)
    report = {"pages": [page_json(r) for r in reports], "misses": misses, "archived_misses": archived}
    report |= fidelity_json(reports)
    # Kept for `capreplay view`, which shows each snapshot's last report.
    save_last_report(load_manifest(args.snapshot).snapshot_id, report)
    if args.json:
        print(json.dumps(report))
    else:
        print(verify_table(reports))
    return exit_status(reports, strict=args.strict)
