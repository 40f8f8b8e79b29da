"""Loading a snapshot's pages offline and accounting for every request each page made."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from playwright.async_api import Error as PlaywrightError, Request

from capreplay.browser.actions import load_page
from capreplay.browser.flags import BLOCKED_ERRORS
from capreplay.browser.launch import BrowserSettings, open_browser
from capreplay.browser.observe import observe
from capreplay.browser.settle import traffic_quiet
from capreplay.models.capture_plan import Action, CapturePlan
from capreplay.models.manifest import PageEntry
from capreplay.replay.server import ReplayServer
from capreplay.replay.websocket import CONNECTIONS, Connection
from capreplay.verify.fidelity import PixelDiff, TextDiff, compare_pixels, compare_text
from capreplay.verify.websockets import unplayed_handshakes

RequestResult = Literal["hit", "fuzzy", "miss", "blocked"]


@dataclass(frozen=True)
class RequestReport:
    """One request a page made during replay and how it was answered."""

    url: str
    method: str
    result: RequestResult
    rule: str | None = None
    nearest: str | None = None
    archived: bool = True
    """Whether the snapshot holds this URL in some form: a miss of it is a replay defect, not a capture gap."""


@dataclass
class PageReport:
    """One page load during verification."""

    url: str
    status: Literal["ok", "failed"]
    error: str | None = None
    requests: list[RequestReport] = field(default_factory=list)
    pixels: PixelDiff | None = None
    text: TextDiff | None = None
    websockets: list[Connection] = field(default_factory=list)
    """The WebSocket connections the page opened, as replay played them (:mod:`capreplay.verify.websockets`)."""

    @property
    def misses(self) -> int:
        """How many requests of this page found nothing in the snapshot."""
        return sum(r.result == "miss" for r in self.requests)

    @property
    def archived_misses(self) -> int:
        """How many requests for something the snapshot holds were not served (missed or blocked)."""
        return sum(r.result in ("miss", "blocked") and r.archived for r in self.requests)


def _actions(entry: PageEntry) -> list[Action]:
    # Actions are stored as plain dicts in the manifest; validate them back through the plan model.
    plan = CapturePlan.model_validate({"pages": [{"url": entry.url, "actions": entry.actions}]})
    return list(plan.pages[0].actions)


async def verify_pages(
    root: Path, urls: list[str] | None = None, *, fidelity: bool = True, server_quiet: bool = True
) -> list[PageReport]:
    """Replay ``urls`` (default: every captured page, in capture order) and report every request.

    Pages settle on the replay server's quiet signal (:mod:`capreplay.replay.quiet`), confirmed by the page
    (:func:`~capreplay.browser.settle.traffic_quiet`); ``server_quiet=False``
    waits for Playwright's ``networkidle`` and the page's own request tracker instead (500 ms)."""
    server = ReplayServer(root)
    manifest = server.store.manifest
    # Without URLs, every captured page entry in order: a URL captured several times with different actions
    # (a slider on one visit, a sort menu on another) is replayed once per visit, with that visit's actions.
    # Given URLs take the actions of their last capture.
    by_url = {p.url: p for p in manifest.pages}
    targets = [(u, by_url.get(u)) for u in urls] if urls else [(p.url, p) for p in manifest.pages]
    reports: list[PageReport] = []
    info = await server.start()
    try:
        settings = BrowserSettings(info.chromium_args, manifest.frozen_time, manifest.random_seed)
        async with open_browser(settings) as context:
            page = context.pages[0] if context.pages else await context.new_page()
            blocked: list[Request] = []

            def on_failed(request: Request) -> None:
                if any(err in (request.failure or "") for err in BLOCKED_ERRORS):
                    blocked.append(request)

            page.on("requestfailed", on_failed)

            quiet = traffic_quiet(server.traffic, (info.http_port, info.https_port), page) if server_quiet else None
            for url, entry in targets:
                start, opened = len(server.served), len(server.app[CONNECTIONS])
                blocked.clear()
                report = PageReport(url=url, status="ok")
                try:
                    actions = _actions(entry) if entry else []
                    await load_page(page, url, actions, quiet=quiet)
                    if fidelity and entry and entry.screenshot and entry.text:
                        view = await observe(page)
                        report.pixels = compare_pixels((root / entry.screenshot).read_bytes(), view.screenshot)
                        report.text = compare_text((root / entry.text).read_text(encoding="utf-8"), view.text)
                except PlaywrightError as e:
                    report.status, report.error = "failed", e.message.splitlines()[0]
                holds = server.store.matcher.holds
                report.requests = [
                    RequestReport(s.url, s.method, s.result, s.rule, s.nearest, s.archived)
                    for s in server.served[start:]
                ] + [RequestReport(r.url, r.method, "blocked", archived=holds(r.method, r.url)) for r in blocked]
                report.websockets = server.app[CONNECTIONS][opened:]
                report.requests = unplayed_handshakes(report.requests, report.websockets)
                if report.status == "ok" and any(q.url == url and q.result == "miss" for q in report.requests):
                    report.status, report.error = "failed", "the page itself is not in the snapshot"
                reports.append(report)
    finally:
        await server.stop()
    return reports
