"""A HAR recorded by Playwright itself (``record_har_path``) while a plain Chromium browses a snapshot's replay.

The browser is launched by Playwright with nothing but the replay server's ``chromium_args``, and the HAR
is Playwright's own (``record_har_content="embed"``), so the import tests read the format as Playwright
writes it. ``python -m tests.support.har_recording OUT.har`` records the committed fixture
(``tests/archive/har_files/playwright-shop.har``) again from the committed fixture snapshot.
"""

from __future__ import annotations

import asyncio
import re
import sys
from pathlib import Path

from playwright.async_api import async_playwright

from capreplay.browser.launch import find_chromium
from capreplay.replay.server import ReplayServer
from tests.support.paths import ROOT

SNAPSHOT = ROOT / "snapshots" / "fixtures"
COMMITTED = ROOT / "tests" / "archive" / "har_files" / "playwright-shop.har"
"""The recording committed for tests that run without a browser."""
PAGES = ("https://www.shop.test/", "https://www.shop.test/redirect/start", "https://www.shop.test/cookie/set")
"""Pages loaded one after another; then the order form is filled in and sent (a POST)."""
FORM = "https://www.shop.test/form"
NO_FONTS = re.compile(r"^(?!.*\.woff2$)")
"""Fonts are left out of the recording: 40 KB that test nothing the stylesheets do not."""


async def record_har(out: Path, snapshot: Path = SNAPSHOT) -> None:
    """Browse ``snapshot`` (its replay) with Playwright recording a HAR with embedded bodies into ``out``."""
    server = ReplayServer(snapshot)
    info = await server.start()
    try:
        async with async_playwright() as pw:
            browser = await pw.chromium.launch(executable_path=find_chromium(), args=info.chromium_args)
            try:
                context = await browser.new_context(record_har_path=str(out), record_har_content="embed",
                                                    record_har_url_filter=NO_FONTS)  # fmt: skip
                page = await context.new_page()
                # network idle, not load: the home page fetches its products and then their images, and a
                # body still on its way when the page is left is missing from the HAR
                for url in PAGES:
                    await page.goto(url, wait_until="networkidle")
                page = await context.new_page()
                await page.goto(FORM, wait_until="networkidle")
                await page.fill("#name", "Ada Lovelace")
                await page.fill("#qty", "3")
                await page.select_option("#size", "M")
                async with page.expect_navigation(wait_until="networkidle"):
                    await page.click("#submit")
                await context.close()  # writes the HAR
            finally:
                await browser.close()
    finally:
        await server.stop()


if __name__ == "__main__":
    asyncio.run(record_har(Path(sys.argv[1]) if len(sys.argv) > 1 else COMMITTED))
