"""Records as real foreign tools wrote them, which every reader must take as pywb and warcio take them.

- wget 1.18/1.19 put a request record's WARC-Target-URI in angle brackets (``<http://...>``);
- Browsertrix wrote ``HTTP/1.1 0 No Content`` for a 204; pywb serves any code HTTP cannot carry as
  ``204 No Content``.

Each case is read by the strict reader (warcio), the replay fast path (``read_record_at``) and the index
scan (``scan_records``), which must agree, and then imported.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from capreplay.archive.importer.snapshot import ImportOptions, import_archives
from capreplay.archive.warc.read import iter_records
from capreplay.archive.warc.scan import read_record_at, scan_records
from capreplay.archive.warc.stored import StoredRecord
from capreplay.replay.store import SnapshotStore
from tests.support import foreign_warc as fs

URL = "http://site.example/page.html"


def read_three_ways(path: Path) -> list[StoredRecord]:
    """Every record by the strict reader, after checking the two fast readers agree with it."""
    with path.open("rb") as f:
        strict = list(iter_records(f, str(path), check_digests=True))
    fd = os.open(path, os.O_RDONLY)
    try:
        assert [read_record_at(fd, r.offset, r.length, name=str(path)) for r in strict] == strict
    finally:
        os.close(fd)
    lean = list(scan_records(path.read_bytes(), str(path)))
    assert [(r.url, r.status, r.method, r.written_status) for r in lean] == [
        (r.url, r.status, r.method, r.written_status) for r in strict
    ]
    return strict


def bracketed_request() -> bytes:
    request = fs.record("request", f"<{URL}>", fs.http("GET /page.html HTTP/1.1", [("Host", "site.example")]),
                        n=2, headers=[("WARC-Concurrent-To", fs.rid(1))])  # fmt: skip
    return fs.gz(fs.page(1, URL, b"<title>Page</title>"), request)


def test_a_bracketed_target_uri_is_read_as_the_plain_uri(tmp_path: Path) -> None:
    path = tmp_path / "wget.warc.gz"
    path.write_bytes(bracketed_request())
    _, request = read_three_ways(path)
    assert request.url == URL and request.warc_header("WARC-Target-URI") == URL
    assert request.method == "GET" and request.payload == b""
    assert ("Host", "site.example") in request.http_headers


@pytest.mark.parametrize(("after_protocol", "code"), [
    ("0 No Content", "0"), ("abc", "abc"), ("", ""), ("No Content", "No"), ("099 Odd", "099"), ("1234 Big", "1234"),
])  # fmt: skip
def test_a_status_code_http_cannot_carry_is_read_as_204_no_content(
    tmp_path: Path, after_protocol: str, code: str
) -> None:
    path = tmp_path / "codes.warc.gz"
    path.write_bytes(fs.gz(
        fs.page(1, URL, b"<title>Page</title>"),
        fs.page(2, "http://site.example/empty", b"", status=after_protocol, headers=[("Date", "x")]),
    ))  # fmt: skip
    page, empty = read_three_ways(path)
    assert (page.status, page.written_status) == (200, None)
    assert (empty.status, empty.reason, empty.written_status) == (204, "No Content", code)
    assert empty.http_headers == [("Date", "x")]


def test_import_serves_a_status_0_record_as_204_and_says_so(tmp_path: Path) -> None:
    src = tmp_path / "codes.warc.gz"
    src.write_bytes(fs.gz(
        fs.page(1, URL, b"<title>Page</title>"),
        fs.page(2, "http://site.example/empty", b"", status="0 No Content", headers=[]),
    ))  # fmt: skip
    result = import_archives(ImportOptions(inputs=[src], out=tmp_path / "snap", random_seed=7))
    assert result.indexed == 2
    assert [w for w in result.warnings if "http://site.example/empty" in w and "'0'" in w and "204" in w]
    assert [p.url for p in result.manifest.pages] == [URL]
    store = SnapshotStore(tmp_path / "snap")
    try:
        match = store.matcher.match("GET", "http://site.example/empty", None)
        assert match is not None
        served = store.response(match.candidate.ref)  # type: ignore[arg-type]
    finally:
        store.close()
    assert (served.status, served.reason, served.body) == (204, "No Content", b"")
