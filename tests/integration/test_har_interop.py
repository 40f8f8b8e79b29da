"""WARCs and WACZs that other tools wrote survive a trip through HAR: import, export as HAR, import the HAR.

Each file from ``../shared/interop/`` (see ``test_import_interop.py``) is imported, exported with
``capreplay export DIR -o x.har`` and the HAR imported again. The second snapshot must serve every response
of the first: the same method, URL (in the form Chromium requests it), request body and status, the body with
its Content-Encoding undone (HAR content is decoded), the same headers but for framing and that coding; and
list the same pages. Revisits come back as plain responses holding their original's body. The files are
other projects' test data and are never copied into this repository.
"""

from __future__ import annotations

import gzip
import zlib
from pathlib import Path

import brotli  # type: ignore[import-untyped]  # no type hints
import pytest

from capreplay.archive.importer.snapshot import ImportOptions, import_archives
from capreplay.browser.determinism import DEFAULT_SEED
from capreplay.cli import main
from capreplay.replay.response import Outgoing
from capreplay.replay.store import SnapshotStore
from tests.integration.test_import_interop import interop_file

FILES = [
    "webrecorder+py-wacz/tests/fixtures/example-iana.warc",  # HTTPS browser capture with revisits
    "webrecorder+pywb/sample_archive/warcs/example.warc.gz",  # http://example.com?example=1, no slash
    "webrecorder+pywb/sample_archive/warcs/post-test.warc.gz",  # POST bodies
    "webrecorder+pywb/sample_archive/waczs/valid_example_1.wacz",
    "openzim+warc2zim/tests/data/http-return-codes.warc.gz",  # "HTTP/1.1 0 No Content", served as 204
    "openzim+warc2zim/tests/data/bad-redirections.warc.gz",
    "servo+servo-warc-tests/collections/Twitter/archive/rec-20180328223922567597-userland.warc.gz",  # empty values
]
FRAMING = {"content-length", "content-encoding", "transfer-encoding", "connection", "keep-alive", "trailer", "te",
           "upgrade", "proxy-connection", "proxy-authenticate", "proxy-authorization"}  # fmt: skip


def served(snapshot: Path) -> list[tuple[str, str, str | None, Outgoing]]:
    store = SnapshotStore(snapshot)
    try:
        entries = sorted(store.entries(), key=lambda item: item[1].seq)
        return [(e.method, e.url, e.post_body, store.response(ref)) for ref, e in entries]
    finally:
        store.close()


def plain(out: Outgoing) -> bytes:
    """The body with its Content-Encoding undone, by the standard decoders."""
    body = out.body
    codings = [c.strip().lower() for n, v in out.headers if n.lower() == "content-encoding" for c in v.split(",")]
    for coding in reversed([c for c in codings if c and c != "identity"]):
        if coding in ("gzip", "x-gzip"):
            body = gzip.decompress(body)
        elif coding == "deflate":
            body = zlib.decompress(body)
        elif coding == "br":
            body = brotli.decompress(body)
        else:
            raise AssertionError(f"a coding this test cannot undo: {coding}")
    return body


def chromium_form(url: str) -> str:
    """``http://Example.com:80?x`` as Chromium requests it: ``http://example.com/?x``."""
    scheme, _, rest = url.partition("://")
    cut = min([i for i in (rest.find("/"), rest.find("?")) if i >= 0] or [len(rest)])
    authority = rest[:cut].lower().removesuffix({"http": ":80", "https": ":443"}.get(scheme.lower(), "\0"))
    tail = rest[cut:] if rest[cut:].startswith("/") else "/" + rest[cut:]
    return f"{scheme.lower()}://{authority}{tail}"


@pytest.mark.parametrize("name", FILES, ids=lambda n: n.rsplit("/", 1)[-1])
def test_a_foreign_archive_survives_the_trip_through_har(name: str, tmp_path: Path) -> None:
    source = interop_file(name)
    first = import_archives(ImportOptions(inputs=[source], out=tmp_path / "a", random_seed=DEFAULT_SEED))
    assert main(["export", str(tmp_path / "a"), "-o", str(tmp_path / "a.har")]) == 0
    second = import_archives(ImportOptions(inputs=[tmp_path / "a.har"], out=tmp_path / "b", random_seed=DEFAULT_SEED))
    assert second.warnings == []
    before, after = served(tmp_path / "a"), served(tmp_path / "b")
    assert [(m, u, p) for m, u, p, _ in after] == [(m, chromium_form(u), p) for m, u, p, _ in before]
    for (_, url, _, was), (_, _, _, now) in zip(before, after, strict=True):
        assert (now.status, now.body) == (was.status, plain(was)), url
        assert [h for h in now.headers if h[0].lower() not in FRAMING] == [
            h for h in was.headers if h[0].lower() not in FRAMING], url  # fmt: skip
    assert [p.url for p in second.manifest.pages] == [p.url for p in first.manifest.pages]
    assert [p.title for p in second.manifest.pages] == [p.title for p in first.manifest.pages]


HARS = {
    # file: (entries imported, entries left out), counted in each file's log.entries by eye
    "har_files/chrome.har": (2, 1),  # the google.com entry has status 0 (net::ERR_INTERNET_DISCONNECTED)
    "har_files/safari.har": (19, 0),
    "har_files/postdata.har": (1, 0),
    "flows/websocket.har": (3, 0),  # three 101 handshakes with their messages
    "flows/event_stream.har": (2, 0),
    "flows/diff_data.har": (5, 0),
    "flows/successful_log.har": (2, 0),
}


@pytest.mark.parametrize("name", list(HARS))
def test_every_har_of_mitmproxys_test_data_imports_and_survives_the_trip(name: str, tmp_path: Path) -> None:
    source = interop_file("mitmproxy+mitmproxy/test/mitmproxy/data/" + name)
    kept, left_out = HARS[name]
    first = import_archives(ImportOptions(inputs=[source], out=tmp_path / "a", random_seed=DEFAULT_SEED))
    assert first.indexed == kept
    assert first.warnings == ([f"{source}: 1 entry left out: #1 GET https://www.google.com/ "
                               "(no response: net::ERR_INTERNET_DISCONNECTED)"] if left_out else [])  # fmt: skip
    assert main(["export", str(tmp_path / "a"), "-o", str(tmp_path / "a.har")]) == 0
    second = import_archives(ImportOptions(inputs=[tmp_path / "a.har"], out=tmp_path / "b", random_seed=DEFAULT_SEED))
    assert second.warnings == []
    before, after = served(tmp_path / "a"), served(tmp_path / "b")
    assert [(m, u, p) for m, u, p, _ in after] == [(m, chromium_form(u), p) for m, u, p, _ in before]
    for (_, url, _, was), (_, _, _, now) in zip(before, after, strict=True):
        assert (now.status, now.body) == (was.status, plain(was)), url
