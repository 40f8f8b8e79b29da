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
    stagehand: StagehandAdapter
    stagehand_launch: dict[str, Any]
    """capreplay's Chromium and its offline flags, preferences and init scripts (``launch_request``)."""


@asynccontextmanager
async def study_adapters(settings: BrowserSettings) -> AsyncIterator[StudyAdapters]:
    """Both adapters started; Stagehand's browsers get the flags of the study's own (``settings``)."""
    executable = require_chromium()
    async with BrowserUseAdapter() as browser_use, StagehandAdapter() as stagehand:
        yield StudyAdapters(browser_use, stagehand, launch_request(executable, settings))
