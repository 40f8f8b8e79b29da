"""One capture: proxy, browser and recorder together, from a plan to a finished snapshot folder."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib.metadata import version
from pathlib import Path
from typing import Any, Literal

from playwright.async_api import Error as PlaywrightError, Page
from tqdm import tqdm

from capreplay.archive.snapshot.manifest import collect_files, write_manifest
from capreplay.browser.actions import load_page
from capreplay.browser.determinism import DEFAULT_SEED
from capreplay.browser.flags import capture_args
from capreplay.browser.launch import VIEWPORT, BrowserSettings, chromium_version, find_chromium, open_browser
from capreplay.browser.observe import observe
from capreplay.browser.settle import traffic_quiet
from capreplay.capture.addon import CaptureAddon, HostPolicy
from capreplay.capture.crawl import Frontier
from capreplay.capture.recording_proxy import run_proxy
from capreplay.capture.warc_writer import ARCHIVE_FILE, WarcWriter
from capreplay.errors import BrowserError, CapreplayError, CaptureError, InputError, OutputError, os_reason
from capreplay.models.capture_plan import Action, CapturePlan
from capreplay.models.manifest import Manifest, PageEntry, snapshot_id
from capreplay.replay.ready.with_index import IndexWithReady
from capreplay.util.files import refuse_unmakeable_folder, write_atomic
from capreplay.util.images import lossless_webp

TOOLS = ("capreplay", "mitmproxy", "playwright", "warcio", "aiohttp")


@dataclass
class CaptureOptions:
    """Everything one capture needs to know."""

    out: Path
    plan: CapturePlan
    maps: dict[str, tuple[str, int]] = field(default_factory=dict)
    seed: int = DEFAULT_SEED
    progress: bool = True
    proxy_quiet: bool = True
    """Settle each page (after its load and after each action) when the proxy has seen no request of the browser
    in flight for ``SERVER_QUIET_MS``, confirmed by the page (:func:`traffic_quiet`); False: Playwright's
    ``networkidle`` and the page's own request tracker (500 ms). Autoscroll follows the page's own requests either
    way."""
    screenshots: Literal["png", "webp"] = "png"
    """The format each page's screenshot is kept in: Chromium's PNG, or the same pixels as lossless WebP."""


@dataclass
class CaptureResult:
    """How a capture ended."""

    manifest: Manifest
    failed: list[str]
    blocked: list[str]
    errors: list[str]


def prepare_output(out: Path) -> None:
    """Refuse an output folder that already holds anything, before anything is written."""
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise InputError("already exists and is not an empty folder; choose a new output folder", out)
    refuse_unmakeable_folder(out)


class _Session:
    def __init__(self, opts: CaptureOptions, browser: dict[str, Any]) -> None:
        self.opts = opts
        self.root = opts.out
        self.frozen_time = datetime.now(UTC).replace(microsecond=0)
        self.browser = browser
        self.tools = {name: version(name) for name in TOOLS}
        self.pages: list[PageEntry] = []
        self.failed: list[str] = []
        self.recorder = WarcWriter(self.root, self._warcinfo())

    def _warcinfo(self) -> dict[str, str]:
        return {
            "software": f"capreplay/{self.tools['capreplay']} (mitmproxy/{self.tools['mitmproxy']}, "
            f"playwright/{self.tools['playwright']}, warcio/{self.tools['warcio']})",
            "format": "WARC File Format 1.1",
            "conformsTo": "https://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/",
            "browser": str(self.browser.get("version", "")),
            "viewport": f"{VIEWPORT['width']}x{VIEWPORT['height']}",
            "frozen-time": self.frozen_time.isoformat(),
            "random-seed": str(self.opts.seed),
            "capture-plan": self.opts.plan.model_dump_json(),
        }

    def commit_page(self, entry: PageEntry, png: bytes, text: str) -> None:
        """Write a page's records and fidelity files, then a manifest that matches them (complete: false)."""
        self.recorder.flush()
        n = len(self.pages)
        shots = self.root / "captures"
        try:
            shots.mkdir(exist_ok=True)
            shot = f"captures/{n:04d}.{self.opts.screenshots}"
            (self.root / shot).write_bytes(png if self.opts.screenshots == "png" else lossless_webp(png))
            (shots / f"{n:04d}.txt").write_text(text, encoding="utf-8")
        except OSError as e:
            raise OutputError(f"cannot write: {os_reason(e)}", e.filename or shots) from e
        entry = entry.model_copy(update={"screenshot": shot, "text": f"captures/{n:04d}.txt"})
        self.pages.append(entry)
        self.write_manifest(complete=False)

    def finish(self, *, complete: bool, graph: dict[str, Any] | None) -> Manifest:
        """Flush, index, graph and the final manifest."""
        self.recorder.close()
        # the ready responses are made in the index's pass and placed once the manifest names the snapshot
        with IndexWithReady(self.root, [ARCHIVE_FILE]) as built:
            try:
                write_atomic(self.root / "index.cdxj", built.index.data)
                if graph is not None:
                    (self.root / "graph.json").write_text(json.dumps(graph, indent=2) + "\n", encoding="utf-8")
            except OSError as e:
                raise OutputError(f"cannot write: {os_reason(e)}", e.filename or self.root) from e
            manifest = self.write_manifest(complete=complete)
            built.place(manifest.snapshot_id, hashlib.sha256(built.index.data).hexdigest())
        return manifest

    def write_manifest(self, *, complete: bool) -> Manifest:
        files = collect_files(self.root)
        manifest = Manifest(
            snapshot_id=snapshot_id(files, self.pages),
            created=self.frozen_time,
            complete=complete,
            tools=self.tools,
            browser=self.browser,
            frozen_time=self.frozen_time,
            random_seed=self.opts.seed,
            plan=self.opts.plan.model_dump(mode="json"),
            pages=self.pages,
            hosts=sorted(self.recorder.hosts),
            files=files,
            websockets=self.recorder.websockets if self.recorder.websockets.connections else None,
        )
        try:
            write_manifest(self.root, manifest)
        except OSError as e:
            raise OutputError(f"cannot write the manifest: {os_reason(e)}", self.root / "manifest.json") from e
        return manifest


def _work(plan: CapturePlan) -> tuple[list[tuple[str, list[Action]]], Frontier | None]:
    listed = [(p.url, list(p.actions)) for p in plan.pages]
    crawl = plan.crawl
    frontier = Frontier(crawl.seeds, crawl.depth, crawl.max_pages, crawl.same_site) if crawl else None
    return listed, frontier


async def capture(opts: CaptureOptions) -> CaptureResult:
    """Freeze the plan's pages into ``opts.out``; an interruption leaves a manifest with ``complete: false``."""
    prepare_output(opts.out)
    executable = find_chromium()
    if executable is None:
        raise BrowserError("no Chromium found: run scripts/setup.sh or set CAPREPLAY_CHROMIUM")
    opts.out.mkdir(parents=True, exist_ok=True)
    session = _Session(opts, {"name": "chromium", "version": chromium_version(executable), "viewport": VIEWPORT})
    policy = HostPolicy(maps=opts.maps, only_mapped=bool(opts.maps))
    addon = CaptureAddon(policy, session.recorder.add, session.recorder.add_websocket)
    listed, frontier = _work(opts.plan)
    total = len(listed) + (frontier.max_pages if frontier else 0)
    bar = tqdm(total=total, unit="page", file=sys.stderr, disable=not opts.progress, dynamic_ncols=True)
    try:
        async with run_proxy(addon, verify_upstream=not opts.maps) as proxy:
            settings = BrowserSettings(capture_args(proxy.port, proxy.ca_pin), session.frozen_time, opts.seed)
            async with open_browser(settings) as context, _websockets_cut_on_exit(addon):
                page = context.pages[0] if context.pages else await context.new_page()
                session.browser["user_agent"] = await page.evaluate("navigator.userAgent")
                for url, actions in listed:
                    await _capture_one(session, page, url, actions, opts, bar, addon)
                while frontier is not None and (item := frontier.next()) is not None:
                    url, depth = item
                    parent = frontier.parents.get(url)
                    links = await _capture_one(
                        session, page, url, frontier_actions(opts), opts, bar, addon, depth=depth, parent=parent
                    )
                    frontier.add_links(url, links)
    except BaseException:
        bar.close()
        addon.cut_streams()  # an interrupted capture keeps what its open event streams had sent
        # The first failure is the one to report; finishing may fail the same way (a full disk).
        with contextlib.suppress(CapreplayError):
            session.finish(complete=False, graph=frontier.graph() if frontier else None)
        raise
    bar.close()
    addon.cut_streams()
    manifest = session.finish(complete=True, graph=frontier.graph() if frontier else None)
    return CaptureResult(manifest, session.failed, sorted(set(addon.blocked)), addon.errors)


@contextlib.asynccontextmanager
async def _websockets_cut_on_exit(addon: CaptureAddon) -> AsyncIterator[None]:
    """WebSocket connections still open when the pages are done (or the capture is stopped) are archived, cut,
    before the browser closes them: a close the capture caused is not one a side of the connection sent."""
    try:
        yield
    finally:
        addon.cut_websockets()


def frontier_actions(opts: CaptureOptions) -> list[Action]:
    """The actions a crawl runs on every page it reaches."""
    return list(opts.plan.crawl.actions) if opts.plan.crawl else []


async def _capture_one(
    session: _Session,
    page: Page,
    url: str,
    actions: list[Action],
    opts: CaptureOptions,
    bar: tqdm[Any],
    addon: CaptureAddon,
    *,
    depth: int = 0,
    parent: str | None = None,
) -> list[str]:
    """Load, act, observe and commit one page; returns the links on it (for a crawl)."""
    started = datetime.now(UTC)
    try:
        quiet = traffic_quiet(addon.traffic, (0,), page) if opts.proxy_quiet else None
        loaded = await load_page(page, url, actions, timeout_ms=opts.plan.page_timeout_ms, quiet=quiet)
        view = await observe(page)
        links = await page.eval_on_selector_all("a[href]", "els => els.map(e => e.href)")
    except PlaywrightError as e:
        session.failed.append(f"{url}: {e.message.splitlines()[0]}")
        addon.cut_streams()
        session.recorder.flush()
        bar.update(1)
        return []
    # The page has settled: its event streams still open are recorded as they stand (they may never end).
    addon.cut_streams()
    if addon.failure is not None:
        raise CaptureError(f"recording failed: {addon.failure!r}", url) from addon.failure
    entry = PageEntry(
        url=url,
        final_url=loaded.final_url,
        title=loaded.title,
        status=loaded.status,
        captured_at=started,
        actions=[a.model_dump() for a in actions],
        depth=depth,
        parent=parent,
    )
    session.commit_page(entry, view.screenshot, view.text)
    bar.set_postfix_str(f"{session.recorder.records} records, {session.recorder.bytes / 1e6:.1f} MB")
    bar.update(1)
    await asyncio.sleep(0)
    return [str(link) for link in links]
