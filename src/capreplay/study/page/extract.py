"""Reading a loaded page: each ``extract_*`` function reads one thing, and :func:`capture_views` reads
them all in the methodology's order. Formatting what was read is the representations' job.

Order: HTML, Markdown (made from that HTML), accessibility tree, its AI mode, screenshot, viewport text, and
browser-use last, since it attaches a client of its own to the browser over CDP; the HTML is read again
just before and just after it, and both copies are kept as an integrity check.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import TypeVar

from playwright.async_api import Page

from capreplay.browser.launch import cdp_url, page_target_id
from capreplay.models.geometry import Layout
from capreplay.study.page.browser_use import BrowserUseAdapter, IndexedDom
from capreplay.study.page.frameworks import StudyAdapters
from capreplay.study.page.layout import check_layout, read_layout, restore_layout
from capreplay.study.page.load import SETTLE_MS
from capreplay.study.page.stagehand import Snapshot
from capreplay.study.page.viewport_text import extract_viewport_text
from capreplay.study.page.views import PageViews
from capreplay.study.representations.markdown import to_markdown

T = TypeVar("T")


async def extract_html(page: Page) -> str:
    """``page.content()``: the serialized top document."""
    return await page.content()


async def extract_accessibility_tree(page: Page) -> str:
    """The ARIA snapshot of ``<body>``, default mode."""
    return await page.locator("body").aria_snapshot()


async def extract_aria_ai(page: Page) -> str:
    """Playwright's AI-mode ARIA snapshot of the page: iframes included, an element reference per node.

    Taking it gives the page's elements the refs its ``aria-ref=`` locator resolves (until the next one).
    """
    return await page.aria_snapshot(mode="ai")


async def extract_screenshot(page: Page) -> bytes:
    """The viewport as PNG, the caret left as it is."""
    # Playwright's default caret="hide" sets and then clears an inline caret-color on every text field,
    # which leaves style="" behind in the DOM: the page would no longer be the one the HTML was read from.
    return await page.screenshot(type="png", caret="initial")


async def extract_indexed_dom(page: Page, adapter: BrowserUseAdapter, *, audit: bool = False) -> IndexedDom:
    """browser-use's indexed DOM of the page, through the adapter attached to the page's browser over CDP (with
    the agent-default serialization for audit only when ``audit``: it costs as much again)."""
    return await adapter.indexed_dom(cdp_url(page.context), await page_target_id(page), agent_default=audit)


@dataclass(frozen=True)
class StagehandView:
    """Stagehand's snapshot of the page, read in its own browser before the study's page is loaded."""

    snapshot: Snapshot
    layout: Layout
    open_ms: float
    """Launching Stagehand's browser and loading the page in it: the load, which no other view's time holds."""
    snapshot_ms: float


async def extract_stagehand(url: str, adapters: StudyAdapters, settle_ms: int = SETTLE_MS) -> StagehandView:
    """Stagehand's snapshot of ``url``, loaded in a fresh browser of Stagehand's own (left open for resolving
    answers), and the layout it was taken in.

    It is read before the study's own views: a page that changes as time passes (a carousel, a live counter) is
    then read by the study's browser with nothing slow between its views and its ground truth.
    """
    assert adapters.stagehand is not None, "Stagehand's adapter was not started for this session"
    start = time.perf_counter()
    opened = await adapters.stagehand.open(url, adapters.stagehand_launch, settle_ms)
    loaded = time.perf_counter()
    snapshot = await adapters.stagehand.snapshot()
    return StagehandView(snapshot, opened.layout, (loaded - start) * 1000, (time.perf_counter() - loaded) * 1000)


async def capture_views(page: Page, adapters: StudyAdapters, stagehand: StagehandView | None, *,
                        audit: bool = False) -> PageViews:  # fmt: skip
    """Every view of the loaded page, read in the methodology's order, with how long each took; ``stagehand`` is
    Stagehand's, read before (None: not read); ``audit`` adds browser-use's agent-default serialization (the
    views written to disk keep it)."""
    timings = {"stagehand_open": stagehand.open_ms, "stagehand_snapshot": stagehand.snapshot_ms} if stagehand else {}

    async def timed(name: str, step: Awaitable[T]) -> T:
        start = time.perf_counter()
        result = await step
        timings[name] = (time.perf_counter() - start) * 1000
        return result

    raw_html = await timed("raw_html", extract_html(page))
    start = time.perf_counter()
    markdown = to_markdown(raw_html)
    timings["markdown"] = (time.perf_counter() - start) * 1000
    aria = await timed("accessibility_tree", extract_accessibility_tree(page))
    aria_ai = await timed("aria_ai", extract_aria_ai(page))
    layouts = {"html": await read_layout(page)}
    png = await timed("screenshot", extract_screenshot(page))
    layouts["screenshot"] = shown = await read_layout(page)
    check_layout(shown, layouts["html"], "between the HTML and the screenshot", page.url)
    viewport_text = await timed("viewport_text", extract_viewport_text(page))
    before = await extract_html(page)
    dom = await timed("indexed_dom", extract_indexed_dom(page, adapters.browser_use, audit=audit))
    layouts["browser_use"] = await read_layout(page)
    # browser-use's CDP client drops the viewport emulation: put back the layout the screenshot shows.
    await restore_layout(page, shown)
    layouts["restored"] = await read_layout(page)
    check_layout(shown, layouts["restored"], "after browser-use, and could not be restored", page.url)
    after = await extract_html(page)
    if stagehand is not None:
        layouts["stagehand"] = stagehand.layout
        check_layout(shown, stagehand.layout, "in Stagehand's browser", page.url)
    return PageViews(
        url=page.url,
        raw_html=raw_html,
        markdown=markdown,
        accessibility_tree=aria,
        aria_ai=aria_ai,
        screenshot_png=png,
        viewport_text=viewport_text,
        indexed_dom=dom,
        stagehand=stagehand.snapshot if stagehand else None,
        html_before_browser_use=before,
        html_after_browser_use=after,
        timings_ms=timings,
        layouts=layouts,
    )
