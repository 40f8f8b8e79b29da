"""The frameworks a page session reads views through, each in its own process: browser-use, attached over CDP
to the study's browser, and Stagehand, which drives a browser of its own on the same replay server."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from capreplay.browser.launch import BrowserSettings, require_chromium
from capreplay.study.page.browser_use import BrowserUseAdapter
from capreplay.study.page.stagehand import StagehandAdapter, launch_request


@dataclass(frozen=True)
class StudyAdapters:
    """The running adapters, and how Stagehand launches its browser for each page."""

    browser_use: BrowserUseAdapter
    stagehand: StagehandAdapter | None
    """None when no representation of the run needs Stagehand's snapshot (its browser is not launched)."""
    stagehand_launch: dict[str, Any]
    """capreplay's Chromium and its offline flags, preferences and init scripts (``launch_request``)."""


@asynccontextmanager
async def study_adapters(settings: BrowserSettings, *, stagehand: bool = True) -> AsyncIterator[StudyAdapters]:
    """The adapters started (Stagehand's only if ``stagehand``); Stagehand's browsers get the flags of the study's
    own (``settings``)."""
    launch = launch_request(require_chromium(), settings)
    async with BrowserUseAdapter() as browser_use:
        if not stagehand:
            yield StudyAdapters(browser_use, None, launch)
            return
        async with StagehandAdapter() as running:
            yield StudyAdapters(browser_use, running, launch)
