"""``capreplay capture URL... -o DIR``: freeze pages into a snapshot folder."""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from capreplay.browser.determinism import DEFAULT_SEED
from capreplay.errors import UsageError
from capreplay.models.capture_plan import CrawlPlan

if TYPE_CHECKING:
    from capreplay.capture.session import CaptureOptions, CaptureResult


def _crawl_limit(field: str) -> Callable[[str], int]:
    """An option type for a crawl limit: a whole number the plan model's crawl section accepts for ``field``."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be a whole number, not {text!r}") from None
        try:
            CrawlPlan.model_validate({"seeds": ["https://seed.test/"], field: value})
        except ValidationError as e:
            raise argparse.ArgumentTypeError(f"{value}: {e.errors()[0]['msg']}") from None
        return value

    return parse


def add_parser(sub: Any) -> None:
    """Register the verb."""
    p = sub.add_parser("capture", help="freeze pages into a WARC snapshot", description=__doc__)
    p.add_argument("urls", nargs="*", metavar="URL",
                   help="pages to capture, each once (or use --plan); with --depth or --max-pages, the crawl's seeds")
    p.add_argument("-o", "--out", required=True, type=Path, metavar="DIR",
                   help="the snapshot folder to write: new, or empty (required)")
    p.add_argument("--plan", type=Path, metavar="PLAN.json",
                   help="capture plan JSON (pages, actions, crawl) instead of URLs; --depth, --max-pages and "
                        "--same-site then change the plan's crawl section (refused if it has none)")
    p.add_argument("--depth", type=_crawl_limit("depth"), metavar="N",
                   help="crawl: follow links at most N hops from the URLs (default: no crawl; 1 with --max-pages "
                        "alone; with --plan: the plan's)")
    p.add_argument("--max-pages", type=_crawl_limit("max_pages"), metavar="N",
                   help="crawl: stop after N pages in all (default: 50 when crawling; with --plan: the plan's)")
    p.add_argument("--same-site", action="store_true",
                   help="crawl: only follow links to the URLs' own hosts (default: follow links to any host; "
                        "with --plan: the plan's). Needs --depth or --max-pages, or a plan with a crawl")
    p.add_argument("--map", action="append", default=[], metavar="HOST=127.0.0.1:PORT",
                   help="send HOST to a local origin during capture; the archive keeps HOST (repeatable, each "
                        "host once). With --map, unmapped hosts are refused (default: no maps, every host is fetched)")
    p.add_argument("--seed", type=int, default=DEFAULT_SEED,
                   help=f"seed of the page's Math.random and crypto, kept for replay (default: {DEFAULT_SEED})")
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr (default: show one)")
    p.add_argument("--screenshots", choices=("png", "webp"), default="png",
                   help="the format of each page's screenshot: png (default) or lossless webp, the same pixels in "
                   "about a third of the bytes (for snapshots kept in a repository)")
    p.set_defaults(run=run)


async def _capture_until_stopped(opts: CaptureOptions) -> CaptureResult:
    """Capture; SIGTERM (a user or a scheduler stopping the job) ends it like Ctrl-C does."""
    from capreplay.capture.session import capture

    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    assert task is not None
    loop.add_signal_handler(signal.SIGTERM, task.cancel)
    try:
        return await capture(opts)
    finally:
        loop.remove_signal_handler(signal.SIGTERM)


def run(args: argparse.Namespace) -> int:
    """Capture, then print one line of totals."""
    # Imported here, not at the top: every verb's start-up would otherwise pay for mitmproxy and Playwright.
    from capreplay.capture.plan_file import load_plan, parse_maps, plan_from_urls, with_crawl_options
    from capreplay.capture.session import CaptureOptions, prepare_output

    if args.plan and args.urls:
        raise UsageError("give URLs or --plan, not both")
    if args.plan:
        plan = with_crawl_options(load_plan(args.plan), args.plan, depth=args.depth, max_pages=args.max_pages,
                                  same_site=args.same_site)  # fmt: skip
    elif args.urls:
        plan = plan_from_urls(args.urls, depth=args.depth, max_pages=args.max_pages, same_site=args.same_site)
    else:
        raise UsageError("give at least one URL or --plan PLAN.json")
    maps = parse_maps(args.map)
    prepare_output(args.out)
    opts = CaptureOptions(out=args.out, plan=plan, maps=maps, seed=args.seed, progress=not args.no_progress,
                          screenshots=args.screenshots)
    try:
        result = asyncio.run(_capture_until_stopped(opts))
    except asyncio.CancelledError:
        print(f"capreplay capture: terminated; {args.out} holds what was captured (complete: false)", file=sys.stderr)
        return 143
    m = result.manifest
    print(f"captured {len(m.pages)} pages from {len(m.hosts)} hosts into {args.out} (snapshot {m.snapshot_id[:16]})")
    for failure in result.failed:
        print(f"failed: {failure}", file=sys.stderr)
    for error in result.errors:
        print(f"no response: {error}", file=sys.stderr)
    return 1 if result.failed else 0
