"""Capture the fixture sites, stop them, and replay offline: the bytes, the pixels and the misses."""

from __future__ import annotations

import base64
import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest
from playwright.async_api import Error as PlaywrightError, Page

from capreplay.archive.snapshot.manifest import checked_manifest
from capreplay.browser.actions import load_page
from capreplay.browser.launch import BrowserSettings, open_browser
from capreplay.browser.observe import observe
from capreplay.models.capture_plan import CapturePlan
from capreplay.replay.server import ReplayServer
from tests.support.captured import Captured
from tests.support.paths import ROOT
from tests.support.replay import replay

pytestmark = pytest.mark.browser  # the session's capture and every replay drive Chromium


def _actions(page: dict[str, object]) -> list[object]:
    return list(CapturePlan.model_validate({"pages": [page]}).pages[0].actions)


def test_capture_wrote_a_complete_consistent_snapshot(captured: Captured) -> None:
    manifest = checked_manifest(captured.path)
    assert manifest.complete
    assert len(manifest.pages) == 9
    assert set(manifest.hosts) == {"www.shop.test", "static.cdn.test", "api.data.test", "widget.embed.test"}
    assert not captured.result.failed
    # Chromium's own background traffic was refused, never recorded.
    index = (captured.path / "index.cdxj").read_text()
    assert "google" not in index
    titles = {p.url: p.title for p in manifest.pages}
    assert titles["https://www.shop.test/"] == "Fixture Shop"
    form = next(p for p in manifest.pages if p.url.endswith("/form"))
    assert form.final_url.endswith("/form/submit")


async def test_every_body_the_browser_receives_is_what_the_origin_sent(captured: Captured, tmp_path: Path) -> None:
    sent: dict[tuple[str, str, int], list[bytes]] = {}
    for s in captured.sent:
        sent.setdefault((s.method, s.url, s.status), []).append(s.body)
    har = tmp_path / "replay.har"
    server = ReplayServer(captured.path)
    info = await server.start()
    manifest = server.store.manifest
    try:
        settings = BrowserSettings(info.chromium_args, manifest.frozen_time, manifest.random_seed, record_har=har)
        async with open_browser(settings) as ctx:
            for entry in manifest.pages:
                await load_page(ctx.pages[0], entry.url, _actions({"url": entry.url, "actions": entry.actions}))  # type: ignore[arg-type]
    finally:
        await server.stop()
    # Playwright's HAR keeps each body as the browser received it (after Content-Encoding is undone).
    compared, cached = set(), set()
    for item in json.loads(har.read_text())["log"]["entries"]:
        request, response = item["request"], item["response"]
        if response["status"] not in (200, 206) or request["method"] == "OPTIONS":
            continue
        content = response["content"]
        if content.get("size", 0) < 0:
            # Served from the browser's cache: no bytes crossed the wire, and no body is kept.
            cached.add(request["url"])
            continue
        text = content.get("text", "")
        body = base64.b64decode(text) if content.get("encoding") == "base64" else text.encode()
        encoding = next((h["value"] for h in response["headers"] if h["name"].lower() == "content-encoding"), None)
        origin = sent[(request["method"], request["url"], response["status"])]
        decoded = [gzip.decompress(b) if encoding == "gzip" else b for b in origin]
        assert body in decoded, f"{request['url']}: replayed body differs from the origin's"
        compared.add(request["url"])
    assert len(compared) >= 20
    assert cached <= compared  # whatever came from the cache was received, and compared, earlier
    assert {"https://www.shop.test/form/submit", "https://static.cdn.test/img/lazy.png",
            "https://static.cdn.test/media/clip.webm", "https://api.data.test/v1/stock.json"} <= compared


async def test_two_replays_give_the_same_dom_and_pixels(captured: Captured) -> None:
    results = []
    for _ in range(2):
        async with replay(captured.path) as (_, ctx):
            page: Page = ctx.pages[0]
            seen = []
            for url in ("https://www.shop.test/clock", "https://www.shop.test/"):
                await load_page(page, url, [])
                view = await observe(page)
                seen.append((await page.content(), view.screenshot))
            clock = await page.goto("https://www.shop.test/clock")
            assert clock is not None
            await page.wait_for_load_state("networkidle")
            seen.append((await page.inner_text("#date"), await page.inner_text("#random")))
            results.append(seen)
    assert results[0] == results[1]
    manifest = checked_manifest(captured.path)
    frozen = manifest.frozen_time.strftime("%Y-%m-%dT%H:%M:%S")
    assert results[0][2][0].startswith(frozen)  # the page's clock is the capture's frozen clock


async def test_hosts_outside_the_snapshot_are_refused(captured: Captured) -> None:
    async with replay(captured.path) as (server, ctx):
        page = ctx.pages[0]
        await page.goto("https://www.shop.test/")
        for url in ("https://example.com/", "http://93.184.216.34/", "https://unknown.shop.test/"):
            outcome = await page.evaluate(
                "async (u) => { try { await fetch(u, {mode: 'no-cors'}); return 'reached'; }"
                " catch (e) { return 'failed'; } }",
                url,
            )
            assert outcome == "failed", url
        with pytest.raises(PlaywrightError, match="ERR_CONNECTION_REFUSED"):
            await page.goto("https://not-in-the-snapshot.example/")
        # None of those requests reached the server as anything but the page itself and its assets.
        assert all("example" not in s.url and "93.184" not in s.url for s in server.served)


async def test_cookies_redirects_ranges_and_head_replay(captured: Captured) -> None:
    async with replay(captured.path) as (server, ctx):
        page = ctx.pages[0]
        response = await page.goto("https://www.shop.test/redirect/start")
        assert response is not None and page.url == "https://www.shop.test/redirect/end"
        assert "Redirect chain complete" in await page.inner_text("body")
        await page.goto("https://www.shop.test/cookie/set")
        await page.wait_for_load_state("networkidle")
        assert page.url.endswith("/cookie/read")
        assert "session=fixture-session-42" in await page.inner_text("body")
        assert any(c["name"] == "session" for c in await ctx.cookies())
        await page.goto("https://static.cdn.test/css/shop.css")
        ranged = await page.evaluate(
            """async () => {
                const r = await fetch('https://static.cdn.test/media/clip.webm', {headers: {Range: 'bytes=100-199'}});
                const h = await fetch('https://static.cdn.test/media/clip.webm', {method: 'HEAD'});
                return [r.status, r.headers.get('content-range'), (await r.arrayBuffer()).byteLength,
                        h.status, h.headers.get('content-length')];
            }"""
        )
    clip = (ROOT / "src/capreplay/testing/fixtures/static/media/clip.webm").stat().st_size
    assert ranged[0] == 206 and ranged[1] == f"bytes 100-199/{clip}" and ranged[2] == 100
    assert ranged[3] == 200
    # Opening a stylesheet as a document makes Chromium ask for a favicon the capture never saw.
    assert [s.url for s in server.served if s.result == "miss"] == ["https://static.cdn.test/favicon.ico"]


def test_verify_reports_zero_misses_and_identical_pixels(captured: Captured) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "capreplay", "verify", str(captured.path), "--json"],
        capture_output=True, text=True, timeout=300, check=False,
    )
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["misses"] == 0 and report["archived_misses"] == 0
    assert len(report["pages"]) == 9
    for page in report["pages"]:
        assert page["status"] == "ok"
        assert page["requests"] and all(r["result"] == "hit" and r["archived"] for r in page["requests"])
        assert set(page["requests"][0]) == {"url", "method", "result", "rule", "nearest", "archived"}
        assert page["fidelity"]["pixel_identical"] and page["fidelity"]["text_identical"], page["url"]


def test_warcio_check_passes_on_every_archive_file(captured: Captured, committed_snapshot: Path) -> None:
    files = sorted(captured.path.glob("archive/*.warc.gz")) + sorted(committed_snapshot.glob("archive/*.warc.gz"))
    assert len(files) >= 2
    for path in files:
        out = subprocess.run(
            [sys.executable, "-m", "warcio.cli", "check", "-v", str(path)],
            capture_output=True, text=True, timeout=120, check=False,
        )
        assert out.returncode == 0, out.stdout + out.stderr
        assert "digest pass" in out.stdout
