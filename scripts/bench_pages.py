"""One bounded page load in a fresh capreplay browser, with every request the page made and how it ended.

The request log is the browser's own (Playwright's request, response and requestfailed events), so
capreplay and pywb are counted the same way; each replayer only differs in how a response says "I do not
have this": capreplay's miss page carries ``X-Capreplay: miss``, pywb's not-found page carries
:data:`~capreplay.testing.pywb_proxy.NOT_FOUND_MARKER`.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from capreplay.testing.pywb_proxy import ERROR_MARKER, NOT_FOUND_MARKER
from playwright.async_api import Error as PlaywrightError, Page, Request, Response

from capreplay.browser.actions import load_page
from capreplay.browser.flags import BLOCKED_ERRORS
from capreplay.browser.launch import BrowserSettings, open_browser
from capreplay.models.capture_plan import Action

PAGE_TIMEOUT_MS = 30_000
RUN_TIMEOUT_S = 120.0
"""A whole run (launch, load, settle, screenshot, close) is cut off after this."""
_MEMENTO = re.compile(r'<([^>]+)>;\s*rel="memento"')
# capreplay's browser is refused a host outside the snapshot; the pywb browser's own rules leave it unresolvable.
_BLOCKED = (*BLOCKED_ERRORS, "net::ERR_NAME_NOT_RESOLVED", "net::ERR_NAME_RESOLUTION_FAILED")

type Classify = Callable[[Response], Awaitable[tuple[str, str | None]]]
"""``response -> (result, detail)`` with result ``served``, ``miss`` or ``error``."""


@dataclass
class Outcome:
    """One request the page made and how it ended."""

    url: str
    method: str
    resource_type: str
    result: str
    """``served``, ``miss`` (the replayer answered that it has no such URL), ``error`` (the replayer failed),
    ``blocked`` (refused or unresolved: outside what the browser may reach), ``failed`` (another network
    error, e.g. aborted), ``pending`` (no answer when the run ended)."""
    status: int | None = None
    detail: str | None = None
    navigation: bool = False
    """A navigation of the page's main frame (the page itself, or a redirect on the way to it)."""


@dataclass
class Run:
    """A page load: its status, its DOM and screenshot after settling, and its requests."""

    url: str
    status: int | None = None
    final_url: str | None = None
    error: str | None = None
    dom: str = ""
    screenshot: bytes = b""
    outcomes: list[Outcome] = field(default_factory=list)
    answer: str = ""
    """What the load's ``probe`` expression gave (empty without one)."""

    def loads(self) -> bool:
        """The load ended without error and the replayer served the main frame's last navigation."""
        navigations = [o for o in self.outcomes if o.navigation]
        return self.error is None and bool(navigations) and navigations[-1].result == "served"

    def summary(self) -> dict[str, Any]:
        """The JSON-able part (no DOM, no PNG)."""
        return {"url": self.url, "status": self.status, "final_url": self.final_url, "error": self.error,
                "requests": [asdict(o) for o in self.outcomes]}  # fmt: skip


async def capreplay_classify(response: Response) -> tuple[str, str | None]:
    """capreplay's answer: a miss carries ``X-Capreplay: miss``."""
    if (await response.all_headers()).get("x-capreplay") == "miss":
        return "miss", None
    return "served", None


async def pywb_classify(response: Response) -> tuple[str, str | None]:
    """pywb's answer: its not-found and error pages carry the bench's markers (archived 4xx/5xx do not).

    A served response names the archived URL pywb chose in its memento ``Link`` header: the detail.
    """
    link = (await response.all_headers()).get("link", "")
    served = _MEMENTO.search(link)
    detail = f"pywb served {served.group(1)}" if served and served.group(1) != response.url else None
    if response.status < 400:
        return "served", detail
    try:
        body = await response.text()
    except PlaywrightError as e:
        return "served", f"body unreadable: {e.message.splitlines()[0]}"
    if NOT_FOUND_MARKER in body:
        return "miss", None
    if ERROR_MARKER in body:
        return "error", body.split("-->", 1)[-1].strip()[:200]
    return "served", detail


class _Recorder:
    """Every request of one page, in the order the page made them."""

    def __init__(self, page: Page) -> None:
        self.page = page
        self.requests: list[Request] = []
        self.responses: dict[int, Response] = {}
        self.failures: dict[int, str] = {}
        page.on("request", self._request)
        page.on("response", self._response)
        page.on("requestfailed", self._failed)

    def _request(self, request: Request) -> None:
        self.requests.append(request)

    def _response(self, response: Response) -> None:
        self.responses[id(response.request)] = response  # the same wrapper object as the request event's

    def _failed(self, request: Request) -> None:
        self.failures[id(request)] = request.failure or "failed"

    async def outcomes(self, classify: Classify) -> list[Outcome]:
        out = []
        for request in self.requests:
            if request.url.startswith(("data:", "blob:", "about:", "chrome")):
                continue
            outcome = Outcome(request.url, request.method, request.resource_type, "pending")
            with contextlib.suppress(PlaywrightError):  # a request of a frame that is gone has no frame
                outcome.navigation = request.is_navigation_request() and request.frame == self.page.main_frame
            response = self.responses.get(id(request))
            if response is not None:
                outcome.status = response.status
                outcome.result, outcome.detail = await classify(response)
            elif id(request) in self.failures:
                failure = self.failures[id(request)]
                outcome.result = "blocked" if any(e in failure for e in _BLOCKED) else "failed"
                outcome.detail = failure
            out.append(outcome)
        return out


async def load(settings: BrowserSettings, url: str, classify: Classify, actions: list[Action] | None = None,
               *, screenshot: bool = True, probe: str | None = None) -> Run:  # fmt: skip
    """Load ``url`` in a fresh browser as capreplay's ``load_page`` does, bounded by ``RUN_TIMEOUT_S``; ``probe``, a
    JavaScript expression, is evaluated on the settled page into :attr:`Run.answer`."""
    run = Run(url)
    try:
        await asyncio.wait_for(_load(settings, url, classify, actions or [], screenshot, run, probe), RUN_TIMEOUT_S)
    except TimeoutError:
        run.error = run.error or f"the run did not end within {RUN_TIMEOUT_S:.0f} s"
    return run


async def _load(settings: BrowserSettings, url: str, classify: Classify, actions: list[Action], screenshot: bool,
                run: Run, probe: str | None = None) -> None:  # fmt: skip
    async with open_browser(settings) as context:
        page = context.pages[0] if context.pages else await context.new_page()
        recorder = _Recorder(page)
        try:
            loaded = await load_page(page, url, actions, timeout_ms=PAGE_TIMEOUT_MS)
            run.status, run.final_url = loaded.status, loaded.final_url
        except PlaywrightError as e:
            run.error = e.message.splitlines()[0]
        with contextlib.suppress(PlaywrightError):
            run.final_url = run.final_url or page.url
            run.dom = await page.content()
            if screenshot:
                run.screenshot = await page.screenshot(timeout=PAGE_TIMEOUT_MS)
            if probe is not None:
                run.answer = str(await page.evaluate(probe) or "")
        run.outcomes = await recorder.outcomes(classify)
