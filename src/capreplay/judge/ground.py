"""URL grounding: a cited URL looked up in the snapshot the agent ran on, and rendered offline to read it.

:class:`Grounding` serves the snapshot and keeps one offline browser (through :mod:`capreplay.browser`) for the
whole judging session. ``archived(url)`` finds the archived response a new page load of ``url`` would get (the
replay's own matching, :mod:`capreplay.judge.archived`); ``sources(url)`` renders the page as a reader would see
it (loaded, scrolled to the end so lazy lists load, bounded) and returns its texts: the visible text and
attribute values of every frame, attributed to the page's archived response, and the body of every text or JSON
response the page loaded, attributed to that response's record. Each URL is rendered once per session."""

from __future__ import annotations

import asyncio
import contextlib
from contextlib import AsyncExitStack
from pathlib import Path
from types import TracebackType
from typing import Self

from playwright.async_api import BrowserContext, Error as PlaywrightError, Response

from capreplay.archive.warc.stored import StoredRecord
from capreplay.browser.actions import run_action
from capreplay.browser.launch import BrowserSettings, open_browser
from capreplay.browser.settle import settle
from capreplay.judge.archived import ArchivedLookup
from capreplay.judge.claims import Source
from capreplay.models.capture_plan import Autoscroll
from capreplay.replay.server import ReplayServer

SCROLL = Autoscroll(type="autoscroll", max_steps=25, pause_ms=150)
"""How far a cited page is scrolled before it is read: an infinite list's later items count as on the page."""
TEXT_TYPES = ("json", "text/", "javascript", "xml")

# Visible text of the document, then the values of the attributes a value may live in (tooltips, data-*,
# labels, alt texts, form values), in document order. Hidden panels (closed tabs, collapsed sections) are in
# textContent, not innerText: both are read, since the answer cites the page, not the panel state.
_PAGE_TEXT = """() => {
  const parts = [document.body ? document.body.innerText : "", document.body ? document.body.textContent : ""];
  for (const el of document.querySelectorAll("*")) {
    for (const attr of el.attributes) {
      const n = attr.name;
      if (n === "title" || n === "alt" || n === "value" || n === "aria-label" || n === "aria-valuenow"
          || n === "aria-valuetext" || n === "content" || n.startsWith("data-")) parts.push(attr.value);
    }
    if (el.shadowRoot) parts.push(el.shadowRoot.textContent || "");
  }
  return parts.join("\\n");
}"""


class Grounding:
    """The snapshot served, an offline browser on it, and the pages rendered so far."""

    def __init__(self, snapshot: Path) -> None:
        self.snapshot = snapshot
        self.server = ReplayServer(snapshot, keep_log=False)
        self._stack = AsyncExitStack()
        self._context: BrowserContext | None = None
        self._rendered: dict[str, list[Source] | str] = {}
        self._lookup = ArchivedLookup(self.server.store)
        self._locks: dict[str, asyncio.Lock] = {}

    async def __aenter__(self) -> Self:
        info = await self.server.start()
        self._stack.push_async_callback(self.server.stop)
        manifest = self.server.store.manifest
        settings = BrowserSettings(info.chromium_args, manifest.frozen_time, manifest.random_seed)
        self._context = await self._stack.enter_async_context(open_browser(settings))
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self._stack.aclose()

    def archived(self, url: str) -> StoredRecord | None:
        """The archived response a new page load of ``url`` is answered with on replay (the same for every call,
        see :mod:`capreplay.judge.archived`), or None if the snapshot has none."""
        return self._lookup.archived(url)

    async def sources(self, url: str) -> list[Source] | str:
        """The texts of the page at ``url`` rendered offline, or why it could not be rendered."""
        async with self._locks.setdefault(url, asyncio.Lock()):
            if url not in self._rendered:
                self._rendered[url] = await self._render(url)
            return self._rendered[url]

    async def _render(self, url: str) -> list[Source] | str:
        page_record = self.archived(url)
        if page_record is None:
            return "the cited URL is not in the snapshot"
        if page_record.status is not None and page_record.status >= 400:
            return f"the cited URL was captured with status {page_record.status}"
        assert self._context is not None
        page = await self._context.new_page()
        loaded: list[Response] = []

        def on_response(response: Response) -> None:
            loaded.append(response)

        page.on("response", on_response)
        try:
            await page.goto(url, wait_until="load")
            await settle(page)
            await run_action(page, SCROLL)
            texts = []
            for frame in page.frames:
                with contextlib.suppress(PlaywrightError):
                    texts.append(await frame.evaluate(_PAGE_TEXT))
            sources = [_source(url, page_record, "\n".join(texts))]
            for response in loaded:
                if response.url == url or not _is_text(response):
                    continue
                with contextlib.suppress(PlaywrightError):
                    body = await response.body()
                    record = self.archived(response.url) if response.request.method == "GET" else None
                    sources.append(_source(response.url, record, body.decode("utf-8", "replace")))
            return sources
        except PlaywrightError as e:
            return f"the cited page could not be rendered: {e.message.splitlines()[0]}"
        finally:
            await page.close()


def _is_text(response: Response) -> bool:
    kind = (response.headers.get("content-type") or "").lower()
    return any(t in kind for t in TEXT_TYPES)


def _source(url: str, record: StoredRecord | None, text: str) -> Source:
    return Source(
        url=url,
        record_id=record.record_id if record else None,
        payload_digest=record.warc_header("WARC-Payload-Digest") if record else None,
        text=text,
    )
