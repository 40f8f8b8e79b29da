"""Whether anything was done to a browser's pages between two moments: input, scrolling, a navigation, a new tab.

A harness that waits for the network to go quiet after each step of an agent needs no wait after a step that did
nothing to the page (the agent only read it): nothing can have started a request. :data:`WATCH_SCRIPT` counts, in
every document, the events an input or a script acting like one fires (pointer, mouse, keys, touch, wheel,
scroll, focus, form input, submit, drag); :class:`Touches` adds the navigations and new tabs of the context, seen
by Playwright. The count lives under a symbol of ``window``, so the page's own scripts do not come across it
(``Object.keys`` and ``for ... in`` skip symbols).
"""

from __future__ import annotations

import asyncio
import contextlib

from playwright.async_api import BrowserContext, Error as PlaywrightError, Frame, Page

_EVENTS = (
    "pointerdown", "pointerup", "pointermove", "mousedown", "mouseup", "mousemove", "mouseover", "click",
    "dblclick", "contextmenu", "keydown", "keyup", "touchstart", "touchend", "wheel", "scroll", "focusin",
    "input", "change", "submit", "dragstart", "drop",
)  # fmt: skip

WATCH_SCRIPT = (
    "(() => { const key = Symbol.for('capreplay.touches'); window[key] = 0;"
    " const count = () => { window[key] += 1; };"
    f" for (const type of {list(_EVENTS)!r}) {{ addEventListener(type, count, {{capture: true, passive: true}}); }}"
    " })();"
)
"""An init script: counts the events of input in the document (capture phase, so none is missed)."""

_READ = "() => window[Symbol.for('capreplay.touches')] ?? -1"


class Touches:
    """Input, navigations and new tabs in one browser context since the last :meth:`mark`.

    The context must have :data:`WATCH_SCRIPT` among its init scripts from before its pages load."""

    def __init__(self, context: BrowserContext) -> None:
        self.context = context
        self.changed = 0.0
        """The loop time a main frame last navigated or a tab opened."""
        self._marked: tuple[Page, int, float] | None = None
        for page in context.pages:
            self._watch(page)
        context.on("page", self._opened)

    def _opened(self, page: Page) -> None:
        self._changed()
        self._watch(page)

    def _watch(self, page: Page) -> None:
        def navigated(frame: Frame) -> None:
            if frame.parent_frame is None:
                self._changed()

        page.on("framenavigated", navigated)

    def _changed(self) -> None:
        self.changed = asyncio.get_running_loop().time()

    async def _count(self, page: Page) -> int:
        with contextlib.suppress(PlaywrightError):
            return int(await page.evaluate(_READ))
        return -1

    async def mark(self) -> None:
        """Remember the newest tab and its count of input now (before the agent is told to act)."""
        page = self.context.pages[-1] if self.context.pages else None
        self._marked = None
        if page is not None:
            self._marked = (page, await self._count(page), asyncio.get_running_loop().time())

    async def untouched(self) -> bool:
        """Whether, since :meth:`mark`, no input reached the newest tab, it did not navigate, and no tab opened.
        Anything unknown (no mark, a page that cannot be read, a document without the script) counts as touched."""
        if self._marked is None or not self.context.pages:
            return False
        page, count, at = self._marked
        if self.context.pages[-1] is not page or self.changed >= at or count < 0:
            return False
        return await self._count(page) == count
