"""``capreplay open DIR URL``: one offline page load, saving what you ask for."""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path
from typing import Any

from capreplay.errors import ReplayError


def add_parser(sub: Any) -> None:
    """Register the verb."""
    p = sub.add_parser("open", help="load one page offline", description=__doc__)
    p.add_argument("snapshot", type=Path, metavar="DIR")
    p.add_argument("url", metavar="URL")
    p.add_argument("--screenshot", type=Path, metavar="PNG", help="save a viewport screenshot")
    p.add_argument("--html", type=Path, metavar="FILE", help="save the DOM as HTML")
    p.add_argument("--aria", type=Path, metavar="FILE", help="save the accessibility tree (YAML)")
    p.set_defaults(run=run)


async def _open(args: argparse.Namespace) -> str:
    # Imported when the verb runs: importing every verb's libraries would slow every command's start-up.
    from playwright.async_api import Error as PlaywrightError

    from capreplay.browser.actions import load_page
    from capreplay.browser.launch import BrowserSettings, open_browser
    from capreplay.replay.server import ReplayServer

    server = ReplayServer(args.snapshot)
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
                args.screenshot.write_bytes(await page.screenshot(type="png"))
            if args.html:
                args.html.write_text(await page.content(), encoding="utf-8")
            if args.aria:
                args.aria.write_text(await page.locator("body").aria_snapshot() + "\n", encoding="utf-8")
    finally:
        await server.stop()
    misses = sum(s.result == "miss" for s in server.served)
    return f"{loaded.status} {loaded.final_url} {loaded.title!r}: {len(server.served)} requests, {misses} misses"


def run(args: argparse.Namespace) -> int:
    """Load the page and print its status, final URL, title and request counts."""
    print(asyncio.run(_open(args)))
    return 0
