"""``capreplay export DIR -o x.har``: a HAR that Playwright's own ``route_from_har`` replays with no network.

The committed fixture snapshot is exported; the HAR is read back with ``json`` and ``base64`` and compared
with the snapshot's records (the bodies with their gzip undone, since HAR content is decoded). The browser
tests load pages in a plain Playwright Chromium (no capreplay flags, no replay server, every request the
HAR cannot answer aborted) and compare every body the browser received with the archive's, byte for byte.
The round trip imports the exported HAR again and compares what the two snapshots serve.
"""

from __future__ import annotations

import asyncio
import base64
import gzip
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Browser, Page, Response, async_playwright

from capreplay.archive.har.build import browser_url, har_entry
from capreplay.archive.har.content import content_of, decode_text
from capreplay.archive.importer.snapshot import ImportOptions, import_archives
from capreplay.archive.warc.exchange import Exchange
from capreplay.browser.determinism import DEFAULT_SEED
from capreplay.browser.launch import find_chromium
from capreplay.cli import main
from capreplay.replay.response import Outgoing
from capreplay.replay.store import SnapshotStore
from tests.support.paths import ROOT

FIXTURES = ROOT / "snapshots" / "fixtures"
WORLD = ROOT / "snapshots" / "world"
HOP = {"content-length", "content-encoding", "transfer-encoding", "connection", "keep-alive"}


def export(snapshot: Path, out: Path, *extra: str) -> dict[str, Any]:
    assert main(["export", str(snapshot), "-o", str(out), *extra]) == 0
    data: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    return data


def served(snapshot: Path) -> list[tuple[str, str, str | None, Outgoing]]:
    """(method, URL, base64 request body, what replay sends) of every archived response, in capture order."""
    store = SnapshotStore(snapshot)
    try:
        entries = sorted(store.entries(), key=lambda item: item[1].seq)
        return [(e.method, e.url, e.post_body, store.response(ref)) for ref, e in entries]
    finally:
        store.close()


def header(headers: list[tuple[str, str]], name: str) -> list[str]:
    return [v for n, v in headers if n.lower() == name]


def plain(out: Outgoing) -> bytes:
    """The archived body with its Content-Encoding undone (the fixture's encoded bodies are gzip)."""
    coding = header(out.headers, "content-encoding")
    assert coding in ([], ["gzip"]), coding
    return gzip.decompress(out.body) if coding else out.body


def har_body(content: dict[str, Any]) -> bytes:
    if content.get("encoding") == "base64":
        return base64.b64decode(content["text"])
    return str(content.get("text", "")).encode("utf-8")


def har_headers(message: dict[str, Any]) -> list[tuple[str, str]]:
    return [(h["name"], h["value"]) for h in message["headers"]]


def test_every_archived_response_is_an_entry_in_capture_order_with_its_body_decoded(tmp_path: Path) -> None:
    har = export(FIXTURES, tmp_path / "f.har")
    archived = served(FIXTURES)
    entries = har["log"]["entries"]
    assert [(e["request"]["method"], e["request"]["url"]) for e in entries] == [(m, u) for m, u, _, _ in archived]
    decoded = 0
    for entry, (_, url, post_body, out) in zip(entries, archived, strict=True):
        response = entry["response"]
        headers = har_headers(response)
        assert response["status"] == out.status, url
        assert har_body(response["content"]) == plain(out), url
        assert header(headers, "content-encoding") == [], url  # HAR content is decoded: the header would lie
        assert header(headers, "content-length") == ([str(len(plain(out)))] if plain(out) else []), url
        decoded += bool(header(out.headers, "content-encoding"))
        posted = entry["request"].get("postData")
        assert (posted is not None) == (post_body is not None), url
        if posted is not None:
            assert posted["text"].encode() == base64.b64decode(str(post_body)), url
    assert decoded == 2  # shop.css and products.json are archived gzipped


def test_pages_carry_their_url_title_and_their_entry(tmp_path: Path) -> None:
    har = export(FIXTURES, tmp_path / "f.har")
    manifest = json.loads((FIXTURES / "manifest.json").read_text())
    pages = har["log"]["pages"]
    assert [(p["_url"], p["title"]) for p in pages] == [(p["url"], p["title"]) for p in manifest["pages"]]
    own = {e["pageref"]: e["request"]["url"] for e in har["log"]["entries"] if "pageref" in e}
    assert own == {p["id"]: p["_url"] for p in pages}
    assert har["log"]["creator"]["name"] == "capreplay" and har["log"]["version"] == "1.2"


def test_the_same_snapshot_exports_to_the_same_bytes_and_an_existing_file_needs_force(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "f.har"
    export(FIXTURES, out)
    first = out.read_bytes()
    capsys.readouterr()
    assert main(["export", str(FIXTURES), "-o", str(out)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and str(out) in err[0] and "already exists; pass --force" in err[0]
    out.write_bytes(b"older")
    export(FIXTURES, out, "--force")
    assert out.read_bytes() == first
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.har"]  # no temporary file left beside it


@pytest.mark.parametrize("snapshot", [FIXTURES, WORLD], ids=["fixtures", "world"])
def test_importing_the_exported_har_gives_a_snapshot_that_serves_the_same_responses(
    snapshot: Path, tmp_path: Path
) -> None:
    export(snapshot, tmp_path / "s.har")
    opts = ImportOptions(inputs=[tmp_path / "s.har"], out=tmp_path / "again", random_seed=DEFAULT_SEED)
    result = import_archives(opts)
    assert result.warnings == []
    original, again = served(snapshot), served(tmp_path / "again")
    assert [(m, u, b) for m, u, b, _ in again] == [(m, u, b) for m, u, b, _ in original]
    for (_, url, _, before), (_, _, _, after) in zip(original, again, strict=True):
        assert after.status == before.status, url
        assert after.body == plain(before), url
        assert [h for h in after.headers if h[0].lower() not in HOP] == [
            h for h in before.headers if h[0].lower() not in HOP], url  # fmt: skip
    pages = json.loads((snapshot / "manifest.json").read_text())["pages"]
    # a HAR page is a URL: a page listed twice (with other actions) is one page of the imported snapshot
    assert [p.url for p in result.manifest.pages] == list(dict.fromkeys(p["url"] for p in pages))
    # and it has no actions: where a click took the capture elsewhere, the import stays on the page loaded
    unclicked = {p["url"]: (p["final_url"], p["title"]) for p in pages
                 if all(a["type"] != "click" for a in p["actions"])}  # fmt: skip
    assert {p.url: (p.final_url, p.title) for p in result.manifest.pages if p.url in unclicked} == unclicked


@pytest.mark.parametrize(("archived", "chromium"), [
    ("http://Example.COM:80?example=1", "http://example.com/?example=1"),
    ("https://a.test:443/p?q=%2C#frag", "https://a.test/p?q=%2C"),
    ("https://a.test:8443", "https://a.test:8443/"),
    ("https://a.test/already/fine?x=1&y", "https://a.test/already/fine?x=1&y"),
])  # fmt: skip
def test_urls_are_written_as_chromium_requests_them(archived: str, chromium: str) -> None:
    assert browser_url(archived) == chromium


@pytest.mark.parametrize(("body", "content_type"), [
    ("café".encode(), "text/html; charset=utf-8"),
    ("café".encode(), "text/html; charset=iso-8859-1"),  # UTF-8 bytes under a Latin-1 label: base64
    ("café".encode("latin-1"), "text/css; charset=iso-8859-1"),
    (b"\x89PNG\r\n", "image/png"),
    (b"", "text/plain"),
    (b"{}", "application/json"),
])  # fmt: skip
def test_content_reads_back_to_the_same_bytes_for_writers_but_playwright(body: bytes, content_type: str) -> None:
    content = content_of(body, content_type)
    assert content.text is not None and content.size == len(body)
    assert decode_text(content.text, content.encoding, content_type=content_type, utf8_text=False) == body


def test_a_coding_that_cannot_be_undone_is_kept_with_its_header_and_reported() -> None:
    for coding, body in (("zstd", b"(\xb5/\xfd..."), ("gzip", b"not gzip at all")):
        exchange = Exchange(url="https://a.test/x", method="GET", request_headers=[], request_body=b"",
                            http_version="HTTP/1.1", status=200, reason="OK", response_body=body,
                            response_headers=[("Content-Type", "text/plain"), ("Content-Encoding", coding),
                                              ("Transfer-Encoding", "chunked")],
                            started=datetime(2024, 1, 1, tzinfo=UTC))  # fmt: skip
        entry, decoded = har_entry(exchange)
        assert not decoded
        headers = [(h.name, h.value) for h in entry.response.headers]
        assert headers == [("Content-Type", "text/plain"), ("Content-Encoding", coding),
                           ("Content-Length", str(len(body)))]  # fmt: skip
        content = entry.response.content
        assert decode_text(content.text or "", content.encoding, content_type="text/plain", utf8_text=False) == body


@pytest.mark.browser
async def test_a_plain_playwright_chromium_replays_the_exported_har_with_no_network(tmp_path: Path) -> None:
    har = tmp_path / "fixtures.har"
    export(FIXTURES, har)
    archived = {(m, u): plain(out) for m, u, _, out in served(FIXTURES)}
    reading: list[asyncio.Task[tuple[str, str, bytes]]] = []
    failed: list[str] = []

    async def read(response: Response) -> tuple[str, str, bytes]:
        return response.request.method, response.url, await response.body()

    def on_response(response: Response) -> None:
        if not 300 <= response.status < 400:  # a redirect has no body to read
            reading.append(asyncio.ensure_future(read(response)))

    async def fresh_page(browser: Browser) -> Page:
        # a context of its own for each page: a font or stylesheet that a page takes from the memory cache
        # of an earlier one still gets a response event, but its body can no longer be read
        context = await browser.new_context()
        await context.route_from_har(har, not_found="abort")
        page = await context.new_page()
        page.on("response", on_response)
        page.on("requestfailed", lambda r: failed.append(r.url))
        return page

    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=find_chromium())
        try:
            page = await fresh_page(browser)
            await page.goto("https://www.shop.test/", wait_until="networkidle")
            assert await page.title() == "Fixture Shop"
            assert await page.locator("img").first.evaluate("img => img.naturalWidth") > 0  # hero.jpg decoded
            page = await fresh_page(browser)
            await page.goto("https://www.shop.test/redirect/start", wait_until="networkidle")  # 302, 301, the page
            assert (page.url, await page.title()) == ("https://www.shop.test/redirect/end", "Redirect end")
            page = await fresh_page(browser)
            await page.goto("https://www.shop.test/form", wait_until="networkidle")
            await page.fill("#name", "Ada Lovelace")
            await page.fill("#qty", "3")
            await page.select_option("#size", "M")
            async with page.expect_navigation(wait_until="networkidle"):
                await page.click("#submit")  # a POST, answered by the entry with the same body
            assert await page.title() == "Order received"
            bodies = await asyncio.gather(*reading)
        finally:
            await browser.close()
    assert {(m, u) for m, u, _ in bodies} >= {
        ("GET", "https://www.shop.test/"), ("GET", "https://static.cdn.test/css/shop.css"),
        ("GET", "https://static.cdn.test/img/hero.jpg"), ("GET", "https://static.cdn.test/fonts/OpenSans-Regular.woff2"),
        ("GET", "https://www.shop.test/api/products.json"), ("POST", "https://www.shop.test/form/submit"),
    }  # fmt: skip
    for method, url, body in bodies:
        assert body == archived[(method, url)], url
    # the only request the HAR leaves unanswered is the page's own redirected navigation, which
    # route_from_har aborts and starts again at the redirect's end
    assert set(failed) <= {"https://www.shop.test/redirect/start"}, failed
