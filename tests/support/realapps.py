"""A real application captured once and replayed: what the tests in ``tests/realapps/`` look at.

The application is started from its package (:mod:`capreplay.testing.apps`), loaded live once in a capreplay
browser that reaches it under its made-up host name (what the page showed before capture), captured with its
plan, and stopped. Each replay then runs the plan's actions on the snapshot, offline, and keeps what a test
compares: the DOM, the screenshot, the text of the application's answer, every request the server answered,
and the frames the page's WebSockets received.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
from dataclasses import dataclass, field
from pathlib import Path

from playwright.async_api import Error as PlaywrightError, Page, Request, Response, WebSocket

from capreplay.archive.warc.read import iter_records
from capreplay.archive.warc.stored import StoredRecord
from capreplay.browser.actions import load_page
from capreplay.browser.flags import BASE_ARGS, host_resolver_rules
from capreplay.browser.launch import BrowserSettings, open_browser
from capreplay.capture.plan_file import parse_maps, parse_plan
from capreplay.capture.session import CaptureOptions, CaptureResult, capture
from capreplay.models.capture_plan import PagePlan
from capreplay.replay.server import ReplayServer
from capreplay.replay.websocket import CONNECTIONS, Connection
from capreplay.testing.apps.catalog import App
from capreplay.testing.apps.process import Server
from tests.support.paths import ROOT

CACHE = ROOT / ".cache"
"""Where the applications' environments and npm files are installed once and reused."""


@dataclass
class Look:
    """One load of the page with its plan's actions: what the page showed and what it was sent."""

    dom: str = ""
    screenshot: bytes = b""
    answer: str = ""
    """The text of the application's answer (:attr:`App.answer_js`), empty if it never came."""
    error: str | None = None
    ws_frames_received: int = 0
    served: list[tuple[str, str, str, str | None]] = field(default_factory=list)
    """``(method, url, result, rule)`` of every request the replay server answered (a replay only)."""
    body_seconds: dict[str, float] = field(default_factory=dict)
    """Seconds from each response's headers to its end (or to the page dropping it), by URL: a paced event
    stream takes its captured time, one sent whole next to none."""
    websockets: list[Connection] = field(default_factory=list)
    """Every WebSocket connection the replay server played (a replay only)."""

    def story(self) -> str:
        """What the replay server did for this load, for a failure message: each WebSocket with how it matched and
        how far its conversation went, then every request it did not answer as an exact hit."""
        lines = [
            f"ws {c.url} {c.result}: {c.served}/{c.captured} played, {c.client_messages} sent by the page, "
            f"misses {c.client_misses}, closed by {c.closed_by}"
            for c in self.websockets
        ]
        lines += [f"{m} {url} {result} {rule or ''}" for m, url, result, rule in self.served if result != "hit"]
        return "\n".join(lines) or "nothing served"


@dataclass
class CapturedApp:
    """The snapshot of one application and the live look it is compared with."""

    app: App
    snapshot: Path
    result: CaptureResult
    live: Look


async def look(app: App, settings: BrowserSettings) -> Look:
    """Load ``app``'s page in a fresh browser with ``settings``, run its plan's actions, and read what it shows."""
    page_plan = PagePlan.model_validate(app.plan()["pages"][0])
    out = Look()
    async with open_browser(settings) as context:
        page = context.pages[0] if context.pages else await context.new_page()
        _count_frames(page, out)
        _time_bodies(page, out)
        try:
            await load_page(page, app.url, page_plan.actions)
        except PlaywrightError as e:
            out.error = e.message.splitlines()[0]
        with contextlib.suppress(PlaywrightError):
            out.answer = str(await page.evaluate(app.answer_js) or "")
            out.dom = await _settled_dom(page)
            out.screenshot = await page.screenshot()
    return out


def _count_frames(page: Page, out: Look) -> None:
    def opened(ws: WebSocket) -> None:
        ws.on("framereceived", lambda _frame: setattr(out, "ws_frames_received", out.ws_frames_received + 1))

    page.on("websocket", opened)


def _time_bodies(page: Page, out: Look) -> None:
    # Timed by this process's clock from the response's headers to its end, or to the page dropping it: a client
    # may cancel a stream once its last event came (Playwright's own timing is then missing).
    loop = asyncio.get_running_loop()
    heads: dict[Request, float] = {}

    def head(response: Response) -> None:
        heads[response.request] = loop.time()

    def ended(request: Request) -> None:
        if request in heads:
            out.body_seconds[request.url] = loop.time() - heads.pop(request)

    page.on("response", head)
    page.on("requestfinished", ended)
    page.on("requestfailed", ended)


def live_settings(app: App, server: Server, result: CaptureResult) -> BrowserSettings:
    """A browser that reaches the running application (and its other origins) under their archived names."""
    endpoints = []
    for host, (_, port) in parse_maps(app.map_args(server)).items():
        endpoints += [(host, 80, port), (host, 443, port)]
    args = [host_resolver_rules(endpoints), *BASE_ARGS]
    if server.spki_pins:
        args.append("--ignore-certificate-errors-spki-list=" + ",".join(server.spki_pins))
    manifest = result.manifest
    return BrowserSettings(args, manifest.frozen_time, manifest.random_seed)


async def capture_app(app: App, work: Path) -> CapturedApp:
    """Start ``app``, capture its plan into ``work/snapshot``, load it live once, stop it."""
    snapshot = work / "snapshot"
    with app.start(CACHE, work / "app") as server:
        plan = parse_plan(app.plan(), app.name)
        result = await capture(
            CaptureOptions(out=snapshot, plan=plan, maps=parse_maps(app.map_args(server)), progress=False)
        )
        live = await look(app, live_settings(app, server, result))
    return CapturedApp(app, snapshot, result, live)


async def replay(captured: CapturedApp) -> Look:
    """One offline load of the snapshot with the plan's actions, through capreplay's replay server."""
    server = ReplayServer(captured.snapshot)
    info = await server.start()
    try:
        manifest = server.store.manifest
        out = await look(captured.app, BrowserSettings(info.chromium_args, manifest.frozen_time, manifest.random_seed))
        out.served = [(s.method, s.url, s.result, s.rule) for s in server.served]
        out.websockets = list(server.app[CONNECTIONS])
        return out
    finally:
        await server.stop()


def archive_records(snapshot: Path) -> list[StoredRecord]:
    """Every record of the snapshot's WARC files, in the order they were written."""
    records: list[StoredRecord] = []
    for warc in sorted(snapshot.glob("archive/*.warc.gz")):
        records += iter_records(io.BytesIO(warc.read_bytes()), name=str(warc))
    return records


async def _settled_dom(page: Page, *, quiet_ms: int = 1500, apart_ms: int = 250, most_ms: int = 12_000) -> str:
    """The page's DOM once it has stayed the same for ``quiet_ms`` (looked at every ``apart_ms``, ``most_ms`` at
    most). An application's own status line may still change after the network is quiet: Gradio's screen-reader
    announcer says "complete" up to 5 s after its stream ends and clears it 1 s later, so two looks a moment apart
    can both land inside that second while another replay's looks land after it."""
    dom = await page.content()
    same_ms = waited_ms = 0
    while same_ms < quiet_ms and waited_ms < most_ms:
        await page.wait_for_timeout(apart_ms)
        waited_ms += apart_ms
        again = await page.content()
        same_ms = same_ms + apart_ms if again == dom else 0
        dom = again
    return dom
