"""Both schemes for every archived host: Chromium's own upgrades to https still find the http recording.

Chromium upgrades navigations to hosts on its HSTS preload list (every ``.dev`` host is on it) and the
images of an https page that asks for them over http (mixed-content auto-upgrade) before any request is
made. An archive that holds only the http URLs must still answer, through the ``ignore-scheme`` rule.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from PIL import Image

from capreplay.archive.importer.snapshot import ImportOptions, import_archives
from capreplay.capture.session import DEFAULT_SEED
from tests.support.foreign_warc import gz, page, request
from tests.support.replay import replay

pytestmark = pytest.mark.browser


def _png() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (7, 5), (200, 30, 30)).save(out, "PNG")
    return out.getvalue()


def _site(page_url: str, asset_base: str) -> bytes:
    """A page with a stylesheet, a script and an image archived under ``asset_base``, as a .warc.gz.

    The page links them by path, as real sites do, so the browser asks for them under the page's scheme.
    """
    html = (
        b'<!doctype html><html><head><title>Scheme test</title><link rel="stylesheet" href="/s.css">'
        b'<script src="/a.js"></script></head>'
        b'<body><h1 id="h">Hello</h1><img id="i" src="/p.png"></body></html>'
    )
    exchanges = [
        (page_url, html, "text/html; charset=utf-8"),
        (f"{asset_base}/s.css", b"h1 { color: rgb(1, 2, 3); }", "text/css"),
        (f"{asset_base}/a.js", b"document.documentElement.dataset.ran = 'yes';", "application/javascript"),
        (f"{asset_base}/p.png", _png(), "image/png"),
    ]
    records = []
    for n, (url, body, ctype) in enumerate(exchanges):
        records += [page(2 * n + 1, url, body, headers=[("Content-Type", ctype)]), request(2 * n + 2, url, 2 * n + 1)]
    return gz(*records)


async def _open(tmp_path: Path, warc: bytes, url: str) -> tuple[str, dict[str, object], list[tuple[str, str, str]]]:
    source = tmp_path / "site.warc.gz"
    source.write_bytes(warc)
    import_archives(ImportOptions(inputs=[source], out=tmp_path / "snap", random_seed=DEFAULT_SEED))
    async with replay(tmp_path / "snap") as (server, context):
        tab = await context.new_page()
        await tab.goto(url, wait_until="load")
        seen = await tab.evaluate(
            """() => ({color: getComputedStyle(document.getElementById('h')).color,
                       ran: document.documentElement.dataset.ran || null,
                       image: document.getElementById('i').naturalWidth})"""
        )
        return tab.url, seen, [(s.url, s.result, s.rule or "") for s in server.served]


def _assert_everything_served(seen: dict[str, object], served: list[tuple[str, str, str]]) -> None:
    assert seen == {"color": "rgb(1, 2, 3)", "ran": "yes", "image": 7}
    asked = [(url, result) for url, result, _ in served if not url.endswith("/favicon.ico")]  # never archived
    assert len({url for url, _ in asked}) == 4, served
    assert all(result != "miss" for _, result in asked), served


async def test_an_http_capture_of_an_hsts_preloaded_host_opens_over_https(tmp_path: Path) -> None:
    warc = _site("http://www.capreplay-fixture.dev/", "http://www.capreplay-fixture.dev")
    final, seen, served = await _open(tmp_path, warc, "http://www.capreplay-fixture.dev/")
    assert final == "https://www.capreplay-fixture.dev/"  # Chromium upgraded it before asking
    _assert_everything_served(seen, served)
    assert {(result, rule) for url, result, rule in served if "favicon" not in url} == {("fuzzy", "ignore-scheme")}


async def test_an_http_only_archive_serves_a_page_loaded_over_https(tmp_path: Path) -> None:
    warc = _site("http://www.plain-archive.test/", "http://www.plain-archive.test")
    final, seen, served = await _open(tmp_path, warc, "https://www.plain-archive.test/")
    assert final == "https://www.plain-archive.test/"
    _assert_everything_served(seen, served)
    assert all(url.startswith("https://") for url, _, _ in served)


async def test_images_archived_over_http_on_an_https_page_are_served_after_chromium_upgrades_them(
    tmp_path: Path,
) -> None:
    # The stylesheet and script would be blocked as active mixed content; only the image is upgraded.
    html = (
        b'<!doctype html><html><head><title>Mixed</title></head>'
        b'<body><h1 id="h">Hi</h1><img id="i" src="http://img.mixed-media.test/p.png"></body></html>'
    )
    records = [
        page(1, "https://www.mixed-page.test/", html), request(2, "https://www.mixed-page.test/", 1),
        page(3, "http://img.mixed-media.test/p.png", _png(), headers=[("Content-Type", "image/png")]),
        request(4, "http://img.mixed-media.test/p.png", 3),
    ]
    source = tmp_path / "mixed.warc.gz"
    source.write_bytes(gz(*records))
    import_archives(ImportOptions(inputs=[source], out=tmp_path / "snap", random_seed=DEFAULT_SEED))
    async with replay(tmp_path / "snap") as (server, context):
        tab = await context.new_page()
        await tab.goto("https://www.mixed-page.test/", wait_until="load")
        width = await tab.evaluate("() => document.getElementById('i').naturalWidth")
        served = [(s.url, s.result, s.rule) for s in server.served]
    assert width == 7
    assert ("https://img.mixed-media.test/p.png", "fuzzy", "ignore-scheme") in served, served
