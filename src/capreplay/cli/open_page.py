"""``capreplay open DIR URL``: one offline page load, saving what you ask for."""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from capreplay.cli.options import http_url
from capreplay.errors import OutputError, ReplayError, UsageError, os_reason


def add_parser(sub: Any) -> None:
    """Register the verb."""
    p = sub.add_parser("open", help="load one page offline", description=__doc__)
    p.add_argument("snapshot", type=Path, metavar="DIR", help="the snapshot folder to replay")
    p.add_argument("url", type=http_url, metavar="URL", help="the page to load: an http(s) URL on a snapshot host")
    p.add_argument("--screenshot", type=Path, metavar="PNG", help="save a viewport screenshot here (default: none)")
    p.add_argument("--html", type=Path, metavar="FILE", help="save the DOM as HTML here (default: none)")
    p.add_argument("--aria", type=Path, metavar="FILE", help="save the accessibility tree (YAML) here (default: none)")
    p.set_defaults(run=run)


def _check_outputs(args: argparse.Namespace) -> None:
    """Refuse an output file whose folder does not exist, or that is a folder, before any browser starts."""
    given = [(option, path) for option, path in (("--screenshot", args.screenshot), ("--html", args.html),
                                                 ("--aria", args.aria)) if path is not None]  # fmt: skip
    paths = [path.resolve() for _, path in given]
    for option, path in given:
        if path.is_dir():
            raise UsageError(f"{option}: is a folder, not a file", path)
        if not path.parent.is_dir():
            raise UsageError(f"{option}: its folder {path.parent} does not exist", path)
        if paths.count(path.resolve()) > 1:
            raise UsageError(f"{option}: the same file is given for two outputs", path)


def _write(path: Path, data: bytes) -> None:
    try:
        path.write_bytes(data)
    except OSError as e:
        raise OutputError(f"cannot write: {os_reason(e)}", path) from e


async def _open(args: argparse.Namespace) -> str:
    # Imported when the verb runs: importing every verb's libraries would slow every command's start-up.
    from playwright.async_api import Error as PlaywrightError

    from capreplay.browser.actions import load_page
    from capreplay.browser.launch import BrowserSettings, open_browser
    from capreplay.replay.server import ReplayServer

    server = ReplayServer(args.snapshot)
    hosts = server.store.hosts()
    host = urlsplit(args.url).hostname
    if host not in hosts:
        shown = ", ".join(hosts[:5]) + (f" and {len(hosts) - 5} more" if len(hosts) > 5 else "")
        raise UsageError(f"{args.snapshot} holds nothing from {host} (its hosts: {shown})", args.url)
    _check_outputs(args)
    info = await server.start()
    manifest = server.store.manifest
    try:
        settings = BrowserSettings(info.chromium_args, manifest.frozen_time, manifest.random_seed)
        async with open_browser(settings) as context:
            page = context.pages[0] if context.pages else await context.new_page()
            try:
                loaded = await load_page(page, args.url, [])
            except PlaywrightError as e:
                raise ReplayError(f"page did not load: {e.message.splitlines()[0]}", args.url) from e
            if args.screenshot:
                _write(args.screenshot, await page.screenshot(type="png"))
            if args.html:
                _write(args.html, (await page.content()).encode("utf-8"))
            if args.aria:
                _write(args.aria, (await page.locator("body").aria_snapshot() + "\n").encode("utf-8"))
    finally:
        await server.stop()
    misses = sum(s.result == "miss" for s in server.served)
    return f"{loaded.status} {loaded.final_url} {loaded.title!r}: {len(server.served)} requests, {misses} misses"


def run(args: argparse.Namespace) -> int:
    """Load the page and print its status, final URL, title and request counts."""
    print(asyncio.run(_open(args)))
    return 0
