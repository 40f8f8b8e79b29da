"""``capreplay import x.har``: a HAR's entries become a WARC inside the snapshot, served as the HAR recorded them.

Two committed HARs: ``playwright-shop.har``, recorded by Playwright itself (``record_har_path``, embedded
content) while a plain Chromium browsed the committed fixture snapshot's replay (see
``tests/support/har_recording.py``), and ``devtools-style.har``, written by hand as Chrome DevTools exports:
HTTP/2 pseudo-headers, base64 and charset-decoded text, joined ``Set-Cookie`` lines, and entries without
content. Expected values are read from the HAR files with ``json`` and ``base64`` and from the fixture
snapshot's own records, never from the converter. One browser test records a fresh HAR and imports it.
"""

from __future__ import annotations

import asyncio
import base64
import gzip
import hashlib
import json
from io import BytesIO
from pathlib import Path
from typing import Any

import pytest
from warcio.archiveiterator import ArchiveIterator

from capreplay.archive.har.model import Har
from capreplay.archive.har.to_warc import har_to_warc, skipped_line
from capreplay.archive.importer.snapshot import ImportOptions, ImportResult, import_archives
from capreplay.browser.determinism import DEFAULT_SEED
from capreplay.replay.response import Outgoing
from capreplay.replay.store import SnapshotStore
from tests.support.har_recording import COMMITTED, SNAPSHOT, record_har

HAR_FILES = Path(__file__).resolve().parent / "har_files"
PLAYWRIGHT = HAR_FILES / "playwright-shop.har"
DEVTOOLS = HAR_FILES / "devtools-style.har"


def load(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def har_body(entry: dict[str, Any]) -> bytes:
    """The bytes Playwright's HAR stands for: base64, or UTF-8 text (Playwright stores text only for UTF-8)."""
    content = entry["response"]["content"]
    if content.get("encoding") == "base64":
        return base64.b64decode(content["text"])
    return str(content.get("text", "")).encode("utf-8")


def import_har(path: Path, out: Path) -> ImportResult:
    return import_archives(ImportOptions(inputs=[path], out=out, random_seed=DEFAULT_SEED))


def served(snapshot: Path) -> list[tuple[str, str, Outgoing]]:
    """(method, URL, what replay sends) of every archived response, in capture order."""
    store = SnapshotStore(snapshot)
    try:
        entries = sorted(store.entries(), key=lambda item: item[1].seq)
        return [(e.method, e.url, store.response(ref)) for ref, e in entries]
    finally:
        store.close()


def header(headers: list[tuple[str, str]], name: str) -> list[str]:
    return [v for n, v in headers if n.lower() == name.lower()]


def archived_plain_bodies() -> dict[tuple[str, str], bytes]:
    """The fixture snapshot's bodies by (method, URL), gzip undone: what the browser saw when recording."""
    bodies: dict[tuple[str, str], bytes] = {}
    for method, url, out in served(SNAPSHOT):
        body = gzip.decompress(out.body) if header(out.headers, "content-encoding") == ["gzip"] else out.body
        bodies.setdefault((method, url), body)
    return bodies


def response_records(snapshot: Path) -> list[Any]:
    """(WARC headers, HTTP headers, payload) of the snapshot's converted WARC, by warcio."""
    (warc,) = (snapshot / "archive").iterdir()
    found = []
    with warc.open("rb") as f:
        for record in ArchiveIterator(f):
            found.append((record.rec_type, record.rec_headers, record.http_headers, record.content_stream().read()))
    return found


def test_a_playwright_har_becomes_a_snapshot_that_serves_what_the_har_holds(tmp_path: Path) -> None:
    har = load(PLAYWRIGHT)
    entries = har["log"]["entries"]
    result = import_har(PLAYWRIGHT, tmp_path / "snap")
    assert result.warnings == []  # every entry of this recording has its body or is a redirect
    got = served(tmp_path / "snap")
    assert [(m, u) for m, u, _ in got] == [(e["request"]["method"], e["request"]["url"]) for e in entries]
    archived = archived_plain_bodies()
    for entry, (method, url, out) in zip(entries, got, strict=True):
        assert out.status == entry["response"]["status"], url
        assert out.body == har_body(entry), url
        # recorded from the fixture snapshot: the body is the archive's, its gzip undone
        assert out.body == archived[(method, url)], url
        # the HAR keeps the decoded body, so the gzip header it also keeps must not be served with it
        assert header(out.headers, "content-encoding") == [], url
    redirects = [(u, header(o.headers, "location")) for m, u, o in got if 300 <= o.status < 400]
    assert ("https://www.shop.test/redirect/start", ["/redirect/middle"]) in redirects


def test_the_har_pages_are_the_snapshot_pages_and_the_manifest_names_the_har(tmp_path: Path) -> None:
    har = load(PLAYWRIGHT)
    first: dict[str, str] = {}
    for entry in har["log"]["entries"]:
        first.setdefault(entry["pageref"], entry["request"]["url"])
    manifest = import_har(PLAYWRIGHT, tmp_path / "snap").manifest
    assert [p.url for p in manifest.pages] == [first[p["id"]] for p in har["log"]["pages"]]
    assert [p.title for p in manifest.pages] == ["Fixture Shop", "Order form"]  # each document's own <title>
    (source,) = manifest.imported_from or []
    assert source.name == PLAYWRIGHT.name
    assert source.size == PLAYWRIGHT.stat().st_size
    assert source.software == [f"Playwright {har['log']['creator']['version']} (HAR 1.2)"]
    assert source.archive_files == ["archive/playwright-shop.warc.gz"]
    assert manifest.frozen_time.isoformat().startswith(har["log"]["entries"][0]["startedDateTime"][:19])


def test_every_record_is_marked_as_converted_from_the_har(tmp_path: Path) -> None:
    import_har(PLAYWRIGHT, tmp_path / "snap")
    records = response_records(tmp_path / "snap")
    rec_type, info_headers, _, info = records[0]
    assert rec_type == "warcinfo"
    fields = dict(line.split(": ", 1) for line in info.decode().splitlines())
    assert fields["converted-from"] == "har"
    assert fields["har-file"] == "playwright-shop.har"
    assert fields["har-sha256"] == hashlib.sha256(PLAYWRIGHT.read_bytes()).hexdigest()
    info_id = info_headers.get_header("WARC-Record-ID")
    for rec_type, warc_headers, _, _ in records[1:]:
        assert warc_headers.get_header("WARC-Warcinfo-ID") == info_id
        if rec_type == "response":
            assert warc_headers.get_header("WARC-Capreplay-Converted-From") == "har"
    gzipped = [h for t, h, http, _ in records if t == "response" and "shop.css" in h.get_header("WARC-Target-URI")]
    assert json.loads(gzipped[0].get_header("WARC-Capreplay-Har-Removed")) == [["Content-Encoding", "gzip"]]


def test_the_post_body_is_the_request_record_body_so_replay_matches_it(tmp_path: Path) -> None:
    (post,) = [e for e in load(PLAYWRIGHT)["log"]["entries"] if e["request"]["method"] == "POST"]
    body = post["request"]["postData"]["text"].encode()
    import_har(PLAYWRIGHT, tmp_path / "snap")
    store = SnapshotStore(tmp_path / "snap", strict=True)
    try:
        match = store.matcher.match("POST", post["request"]["url"], body)
        assert match is not None and match.rule is None  # exact: method, URL and body
        assert store.response(match.candidate.ref).body == har_body(post)  # type: ignore[arg-type]
    finally:
        store.close()


def test_importing_the_same_har_twice_gives_the_same_snapshot_and_the_second_is_a_no_op(tmp_path: Path) -> None:
    first = import_har(PLAYWRIGHT, tmp_path / "a")
    again = import_har(PLAYWRIGHT, tmp_path / "a")
    elsewhere = import_har(PLAYWRIGHT, tmp_path / "b")
    assert again.unchanged and not first.unchanged
    assert first.manifest.snapshot_id == again.manifest.snapshot_id == elsewhere.manifest.snapshot_id
    a = (tmp_path / "a" / "archive" / "playwright-shop.warc.gz").read_bytes()
    assert a == (tmp_path / "b" / "archive" / "playwright-shop.warc.gz").read_bytes()


def test_bodies_kept_in_files_beside_the_har_are_read_as_playwright_attaches_them(tmp_path: Path) -> None:
    har = load(PLAYWRIGHT)
    for number, entry in enumerate(har["log"]["entries"]):
        content = entry["response"]["content"]
        if "text" in content:
            # Playwright's attach mode: the body in a file of its own (Playwright names it by its sha1), named in _file
            (tmp_path / f"{number:02d}.dat").write_bytes(har_body(entry))
            content["_file"] = f"{number:02d}.dat"
            del content["text"]
            content.pop("encoding", None)
    (tmp_path / "attached.har").write_text(json.dumps(har), encoding="utf-8")
    import_har(tmp_path / "attached.har", tmp_path / "snap")
    import_har(PLAYWRIGHT, tmp_path / "embedded")
    assert served(tmp_path / "snap") == served(tmp_path / "embedded")


def test_a_devtools_har_keeps_its_bytes_and_lists_entries_without_content_in_one_warning(tmp_path: Path) -> None:
    har = load(DEVTOOLS)
    entries = har["log"]["entries"]
    result = import_har(DEVTOOLS, tmp_path / "snap")
    (warning,) = result.warnings
    assert warning.startswith(f"{DEVTOOLS}: 3 entries left out: ")
    for position in (4, 6, 7):  # blocked pixel, body not kept, data: URL
        assert f"#{position} GET {entries[position]['request']['url']} (" in warning
    by_url = {url: out for _, url, out in served(tmp_path / "snap")}
    assert len(by_url) == 7
    # the WebSocket's handshake is archived under its https:// URL (its messages: tests/archive/test_har_live.py)
    assert by_url["https://www.devtools.test/live"].status == 101
    css = by_url["https://www.devtools.test/style.css"]
    # DevTools stores the text the browser decoded with the declared charset: back to ISO-8859-1 bytes
    assert css.body == entries[2]["response"]["content"]["text"].encode("iso-8859-1")
    assert b"\xe9" in css.body
    page = by_url["https://www.devtools.test/"]
    assert page.body == entries[1]["response"]["content"]["text"].encode("utf-8")
    assert header(page.headers, "content-encoding") == []
    assert header(page.headers, "set-cookie") == ["session=abc; Path=/; Secure", "lang=fr; Path=/"]
    png = by_url["https://www.devtools.test/logo.png"]
    assert png.body == base64.b64decode(entries[3]["response"]["content"]["text"])
    redirect = by_url["http://www.devtools.test/"]
    assert (redirect.status, redirect.body, header(redirect.headers, "location")) == (
        301, b"", ["https://www.devtools.test/"])  # fmt: skip
    assert by_url["https://www.devtools.test/api/search"].body == b'{"hits":3}'


def test_a_devtools_har_http2_request_is_written_as_http1_with_its_protocol_noted(tmp_path: Path) -> None:
    import_har(DEVTOOLS, tmp_path / "snap")
    records = response_records(tmp_path / "snap")
    (request,) = [(w, h, body) for t, w, h, body in records
                  if t == "request" and w.get_header("WARC-Target-URI").endswith("/api/search")]  # fmt: skip
    warc_headers, http_headers, body = request
    assert warc_headers.get_header("WARC-Protocol") == "h2"
    assert http_headers.get_header("Host") == "www.devtools.test"
    assert not [n for n, _ in http_headers.headers if n.startswith(":")]
    assert body == b'{"q":"tea"}'
    (page,) = [w for t, w, _, _ in records if t == "response" and w.get_header("WARC-Target-URI") == "https://www.devtools.test/"]
    assert page.get_header("WARC-IP-Address") == "2606:2800:220:1:248:1893:25c8:1946"


def test_devtools_pages_are_found_by_their_first_document_and_redirects_are_followed(tmp_path: Path) -> None:
    manifest = import_har(DEVTOOLS, tmp_path / "snap").manifest
    assert [(p.url, p.final_url, p.title) for p in manifest.pages] == [
        ("http://www.devtools.test/", "https://www.devtools.test/", "Café DevTools"),
        ("https://www.devtools.test/about", "https://www.devtools.test/about", "About us"),
    ]


def har_of(entries: list[dict[str, Any]], pages: list[dict[str, Any]] | None = None, creator: str = "test") -> Har:
    return Har.model_validate({"log": {"creator": {"name": creator, "version": "1"}, "pages": pages or [],
                                       "entries": entries}})  # fmt: skip


def entry(url: str, text: str | None, content_type: str, *, pageref: str | None = None) -> dict[str, Any]:
    content: dict[str, Any] = {"size": -1 if text is None else len(text), "mimeType": content_type}
    if text is not None:
        content["text"] = text
    return {"pageref": pageref, "startedDateTime": "2024-01-01T00:00:00Z",
            "request": {"method": "GET", "url": url, "headers": []},
            "response": {"status": 200, "headers": [{"name": "Content-Type", "value": content_type}],
                         "content": content}}  # fmt: skip


def test_text_is_utf8_for_playwright_and_in_the_declared_charset_for_other_writers() -> None:
    latin = [entry("https://a.test/x.css", "é", "text/css; charset=iso-8859-1")]
    for creator, expected in (("Playwright", "é".encode()), ("WebInspector", b"\xe9")):
        converted = har_to_warc(har_of(latin, creator=creator), name="t.har", sha256="0" * 64)
        records = ArchiveIterator(BytesIO(converted.warc))
        bodies = [r.content_stream().read() for r in records if r.rec_type == "response"]
        assert bodies == [expected], creator


def test_a_long_data_url_is_cut_short_in_the_warning() -> None:
    image = "data:image/png;base64," + "A" * 10_000
    entries = [entry("https://a.test/", "<title>A</title>", "text/html"), entry(image, "x", "image/png")]
    converted = har_to_warc(har_of(entries), name="t.har", sha256="0" * 64)
    line = skipped_line("t.har", converted.skipped)
    assert line == f"t.har: 1 entry left out: #1 GET {image[:117]}... (not an http(s) URL)"


def test_a_page_naming_no_url_is_reported_and_its_own_url_field_wins() -> None:
    pages = [{"id": "p1", "title": "no url here"}, {"id": "p2", "title": "x", "_url": "https://a.test/b"},
             {"id": "p3", "title": "https://a.test/c"}]  # fmt: skip
    entries = [entry("https://a.test/a", "<title>A</title>", "text/html", pageref="p2"),
               entry("https://a.test/c", "<title>C</title>", "text/html")]  # fmt: skip
    converted = har_to_warc(har_of(entries, pages), name="t.har", sha256="0" * 64)
    assert [(p.url, p.title) for p in converted.pages] == [("https://a.test/b", "x"), ("https://a.test/c", "https://a.test/c")]
    assert converted.unplaced == ["p1"]


@pytest.mark.browser
def test_a_fresh_playwright_recording_imports_like_the_committed_one(tmp_path: Path) -> None:
    fresh = tmp_path / "fresh.har"
    asyncio.run(record_har(fresh))
    recorded = load(fresh)
    committed = load(COMMITTED)
    key = ("request", "method"), ("request", "url"), ("response", "status")
    # the same exchanges (a page's parallel loads may come in another order)
    assert sorted([e[a][b] for a, b in key] for e in recorded["log"]["entries"]) == sorted(
        [e[a][b] for a, b in key] for e in committed["log"]["entries"])  # fmt: skip
    result = import_har(fresh, tmp_path / "snap")
    assert result.warnings == []
    archived = archived_plain_bodies()
    got = served(tmp_path / "snap")
    assert [out.body for _, _, out in got] == [archived[(m, u)] for m, u, _ in got]
    assert [p.url for p in result.manifest.pages] == ["https://www.shop.test/", "https://www.shop.test/form"]


FIREFOX = HAR_FILES / "firefox-style.har"
CHARLES = HAR_FILES / "charles-style.har"


def test_a_firefox_har_with_null_header_and_body_sizes_imports(tmp_path: Path) -> None:
    # firefox-style.har: "headersSize": null in every request and response, "bodySize": null once, an image
    # without its body (Firefox leaves image bodies out)
    result = import_har(FIREFOX, tmp_path / "snap")
    assert result.warnings == [f"{FIREFOX}: 1 entry left out: #2 GET https://garden.example/rake.png (no body kept)"]
    by_url = {url: out for _, url, out in served(tmp_path / "snap")}
    entries = load(FIREFOX)["log"]["entries"]
    assert by_url["https://garden.example/"].body == entries[0]["response"]["content"]["text"].encode("utf-8")
    assert by_url["https://garden.example/site.css"].body == b"body { color: green }\n"
    assert [p.title for p in result.manifest.pages] == ["Garden shop"]


def test_a_charles_har_with_null_redirect_url_cookies_and_timings_imports(tmp_path: Path) -> None:
    # charles-style.har: "redirectURL": null, "cookies": null, "timings": null, "time": null, "pages": null,
    # "params": null, and headers written as [name, value] pairs, which mitmproxy's importer also reads
    result = import_har(CHARLES, tmp_path / "snap")
    assert result.warnings == []
    by_url = {(method, url): out for method, url, out in served(tmp_path / "snap")}
    redirect = by_url[("GET", "http://tools.example/old")]
    assert (redirect.status, header(redirect.headers, "location")) == (302, ["http://tools.example/new"])
    posted = by_url[("POST", "http://tools.example/new")]
    assert (posted.status, posted.body) == (200, b"<title>Saws</title><p>2 saws")  # the base64 text, decoded by hand
    assert header(posted.headers, "content-type") == ["text/html; charset=UTF-8"]
