"""The CDXJ index: SURT keys, building from WARCs, request pairing, POST bodies, write/load."""

from __future__ import annotations

import base64
import dataclasses
import gzip
import hashlib
import json
from io import BytesIO
from pathlib import Path

import pytest
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from capreplay.archive.index.cdxj import IndexEntry, build_index, line_parts, load_index, surt, write_index
from capreplay.archive.warc.append import WarcAppender
from capreplay.archive.warc.build import exchange_records
from capreplay.archive.warc.read import iter_records
from capreplay.errors import ArchiveError, SnapshotError
from tests.support import archive_samples as samples

ARCHIVE = "archive/data-00000.warc.gz"


@pytest.fixture
def snapshot(tmp_path: Path) -> Path:
    samples.write_snapshot_warc(tmp_path / ARCHIVE)
    return tmp_path


@pytest.mark.parametrize(
    ("url", "key"),
    [
        ("https://example.com/", "com,example)/"),
        ("https://example.com", "com,example)/"),
        ("http://www.Example.COM/Path/Page.html", "com,example)/path/page.html"),
        ("https://www2.example.com/a", "com,example)/a"),
        ("http://archive.org/goo/?a=2&b&a=1", "org,archive)/goo/?a=1&a=2&b"),
        ("https://example.com:443/x", "com,example)/x"),
        ("http://example.com:80/x", "com,example)/x"),
        ("https://example.com:8443/x?q=1#frag", "com,example:8443)/x?q=1"),
        ("https://user:pw@cdn.example.co.uk/app.js", "uk,co,example,cdn)/app.js"),
        ("https://example.com?x=1", "com,example)/?x=1"),
        ("http://127.0.0.1:8080/", "1,0,0,127:8080)/"),
        ("http://[::1]:8080/", "[::1]:8080)/"),
        ("https://example.com/a b\tc", "com,example)/a%20b%09c"),
        ("dns:example.com", "dns:example.com"),
    ],
)
def test_surt(url: str, key: str) -> None:
    assert surt(url) == key


def test_one_entry_per_response_in_capture_order(snapshot: Path) -> None:
    entries = build_index(snapshot, [ARCHIVE])
    with open(snapshot / ARCHIVE, "rb") as f:
        stored = list(iter_records(f, ARCHIVE))
    responses = [r for r in stored if r.rec_type == "response"]
    requests = [r for r in stored if r.rec_type == "request"]
    assert [e.seq for e in entries] == list(range(len(samples.ALL)))
    assert [e.url for e in entries] == [make().url for make in samples.ALL]
    for entry, resp, req in zip(entries, responses, requests, strict=True):
        assert (entry.offset, entry.length) == (resp.offset, resp.length)
        assert (entry.req_offset, entry.req_length) == (req.offset, req.length)
        assert entry.req_filename is None
        assert entry.filename == ARCHIVE
        assert entry.timestamp == "20240501120000"
        assert entry.status == resp.status
        assert entry.digest == resp.warc_header("WARC-Payload-Digest")
        assert entry.urlkey == surt(entry.url)
        assert entry.revisit_of is None
    assert [e.mime for e in entries] == [
        "text/html",
        "text/css",
        "application/json",
        "text/javascript",
        "application/json",
        "image/png",
    ]


def test_post_body_is_kept_for_posts_only(snapshot: Path) -> None:
    entries = {e.url: e for e in build_index(snapshot, [ARCHIVE])}
    post = entries["https://example.com/api/search?lang=en"]
    assert post.method == "POST"
    assert post.post_body is not None and base64.b64decode(post.post_body) == b'{"query": "hello"}'
    assert all(e.post_body is None for url, e in entries.items() if url != post.url)


def test_large_post_body_is_kept_as_a_hash(tmp_path: Path) -> None:
    body = b"x" * (64 * 1024 + 1)
    ex = dataclasses.replace(samples.post(), request_headers=[("Host", "example.com")], request_body=body)
    with WarcAppender(tmp_path / ARCHIVE) as out:
        for member in exchange_records(ex, record_ids=samples.ids(0)):
            out.append(member)
    (entry,) = build_index(tmp_path, [ARCHIVE])
    assert entry.post_body == "sha256:" + hashlib.sha256(body).hexdigest()


def test_write_and_load_round_trip_in_sorted_order(snapshot: Path) -> None:
    entries = build_index(snapshot, [ARCHIVE])
    path = snapshot / "index.cdxj"
    write_index(path, entries)
    loaded = load_index(path)
    assert loaded == sorted(entries, key=lambda e: (e.urlkey, e.timestamp, e.seq))
    lines = path.read_text().splitlines()
    assert len(lines) == len(entries)
    keys = [(line.split(" ")[0], line.split(" ")[1], json.loads(line.split(" ", 2)[2])["seq"]) for line in lines]
    assert keys == sorted(keys)
    assert lines[0].startswith("com,example)/ 20240501120000 {")
    assert not (snapshot / "index.cdxj.tmp").exists()


def test_same_url_twice_sorts_by_time_then_capture_order(tmp_path: Path) -> None:
    first = samples.html()
    later = dataclasses.replace(first, started=first.started.replace(year=2025))
    with WarcAppender(tmp_path / ARCHIVE) as out:
        for n, ex in enumerate([later, first, first]):
            for member in exchange_records(ex, record_ids=samples.ids(n)):
                out.append(member)
    write_index(tmp_path / "index.cdxj", build_index(tmp_path, [ARCHIVE]))
    assert [(e.timestamp[:4], e.seq) for e in load_index(tmp_path / "index.cdxj")] == [
        ("2024", 1),
        ("2024", 2),
        ("2025", 0),
    ]


def test_foreign_response_first_pairing_and_revisit(tmp_path: Path) -> None:
    (tmp_path / "foreign.warc.gz").write_bytes(samples.foreign_warc())
    response, revisit = build_index(tmp_path, ["foreign.warc.gz"])
    # warcio writes the response first and links request -> response only
    assert response.req_offset is not None and response.req_offset > response.offset
    assert response.status == 200 and response.mime == "text/plain"
    assert response.digest is not None and response.digest.startswith("sha1:")
    assert response.timestamp == "20200102030405"
    assert revisit.revisit_of == "http://foreign.example/chunked"
    assert revisit.mime == "warc/revisit" and revisit.status is None
    assert revisit.digest == response.digest
    assert revisit.req_offset is None and revisit.method == "GET"


def unlinked_warc(records: list[tuple[str, str, str]]) -> bytes:
    """Records with no WARC-Concurrent-To: (type, url, record id) in order."""
    out = BytesIO()
    writer = WARCWriter(out, gzip=True, warc_version="1.1")
    for rec_type, url, record_id in records:
        warc_headers = {"WARC-Record-ID": record_id, "WARC-Date": "2024-01-01T00:00:00Z"}
        if rec_type == "request":
            path = url.split("example", 1)[1].split("/", 1)[1]
            http = StatusAndHeaders(f"GET /{path} HTTP/1.1", [("Host", "x.example")], is_http_request=True)
            record = writer.create_warc_record(url, "request", http_headers=http, warc_headers_dict=warc_headers)
        else:
            body = record_id.encode()
            http = StatusAndHeaders("200 OK", [("Content-Length", str(len(body)))], protocol="HTTP/1.1")
            record = writer.create_warc_record(
                url, "response", payload=BytesIO(body), length=len(body), http_headers=http,
                warc_headers_dict=warc_headers,
            )  # fmt: skip
        writer.write_record(record)
    return out.getvalue()


def test_unlinked_records_pair_with_the_latest_earlier_request(tmp_path: Path) -> None:
    a, b = "http://x.example/a", "http://x.example/b"
    data = unlinked_warc(
        [
            ("request", a, "<urn:q1>"),
            ("request", b, "<urn:q2>"),
            ("request", a, "<urn:q3>"),
            ("response", a, "<urn:r1>"),
            ("response", a, "<urn:r2>"),
            ("response", b, "<urn:r3>"),
            ("response", b, "<urn:r4>"),  # no request left for it
        ]
    )
    (tmp_path / "u.warc.gz").write_bytes(data)
    with open(tmp_path / "u.warc.gz", "rb") as f:
        offsets = {r.record_id: r.offset for r in iter_records(f, "u")}
    entries = build_index(tmp_path, ["u.warc.gz"])
    assert [e.req_offset for e in entries] == [offsets["<urn:q3>"], offsets["<urn:q1>"], offsets["<urn:q2>"], None]


def test_several_files_continue_the_sequence(tmp_path: Path) -> None:
    names = ["archive/data-00000.warc.gz", "archive/data-00001.warc.gz"]
    for n, name in enumerate(names):
        with WarcAppender(tmp_path / name) as out:
            for member in exchange_records(samples.ALL[n](), record_ids=samples.ids(n)):
                out.append(member)
    entries = build_index(tmp_path, names)
    assert [(e.seq, e.filename, e.req_offset, e.req_filename) for e in entries] == [
        (0, names[0], 0, None),
        (1, names[1], 0, None),
    ]


def request_in_another_file(root: Path) -> list[str]:
    """Two files: a request, then its response (which names it) after a warcinfo record."""
    request, response = exchange_records(samples.html(), record_ids=samples.ids(0))
    with WarcAppender(root / "a.warc.gz") as out:
        out.append(request)
    with WarcAppender(root / "b.warc.gz") as out:
        out.append(samples.warcinfo())
        out.append(response)
    return ["a.warc.gz", "b.warc.gz"]


def test_request_in_another_file_is_named(tmp_path: Path) -> None:
    (entry,) = build_index(tmp_path, request_in_another_file(tmp_path))
    assert (entry.filename, entry.req_filename, entry.req_offset) == ("b.warc.gz", "a.warc.gz", 0)


def test_build_index_reports_missing_and_broken_files(snapshot: Path) -> None:
    with pytest.raises(ArchiveError, match="cannot open"):
        build_index(snapshot, ["archive/missing.warc.gz"])
    (snapshot / "archive" / "bad.warc.gz").write_text("not a warc")
    with pytest.raises(ArchiveError, match="not a WARC file") as info:
        build_index(snapshot, [ARCHIVE, "archive/bad.warc.gz"])
    assert str(info.value.where).endswith("bad.warc.gz")


def test_build_index_refuses_an_invalid_warc_date(tmp_path: Path) -> None:
    _, response = exchange_records(samples.html(), record_ids=samples.ids(0))
    data = gzip.decompress(response).replace(
        b"WARC-Date: 2024-05-01T12:00:00.123456Z", b"WARC-Date: yesterday noon........"
    )
    (tmp_path / "d.warc").write_bytes(data)
    with pytest.raises(ArchiveError, match="invalid WARC-Date"):
        build_index(tmp_path, ["d.warc"])


def write_lines(path: Path, *lines: str) -> Path:
    path.write_text("".join(line + "\n" for line in lines))
    return path


def good_line(snapshot: Path) -> str:
    write_index(snapshot / "index.cdxj", build_index(snapshot, [ARCHIVE]))
    return (snapshot / "index.cdxj").read_text().splitlines()[0]


@pytest.mark.parametrize(
    ("bad", "match"),
    [
        ("com,example)/ 20240501120000", "expected 'urlkey timestamp"),
        ("com,example)/ 20240501120000 {not json", "invalid JSON"),
        ("com,example)/ 20240501120000 [1, 2]", "not an object"),
        ("com,example)/ 2024 {}", "timestamp"),
        ('com,example)/ 20240501120000 {"url": "x"}', "method|digest|filename|offset"),
    ],
)
def test_load_index_names_file_and_line(snapshot: Path, bad: str, match: str) -> None:
    path = write_lines(snapshot / "index.cdxj", good_line(snapshot), "", bad)
    with pytest.raises(SnapshotError, match=match) as info:
        load_index(path)
    assert info.value.where == f"{path}:3"


def test_load_index_skips_blank_and_metadata_lines(snapshot: Path) -> None:
    line = good_line(snapshot)
    path = write_lines(snapshot / "index.cdxj", '!meta {"format": "cdxj"}', "", line)
    assert load_index(path) == [IndexEntry.model_validate_json(_fields(line))]


def _fields(line: str) -> str:
    urlkey, timestamp, body = line.split(" ", 2)
    return json.dumps({**json.loads(body), "urlkey": urlkey, "timestamp": timestamp})


def test_load_index_reports_a_missing_file(tmp_path: Path) -> None:
    with pytest.raises(SnapshotError, match="cannot read the index"):
        load_index(tmp_path / "index.cdxj")


def _dumped(entry: IndexEntry) -> str:
    """The line as json.dumps writes it, the definition line_parts spells out."""
    body = {k: v for k, v in entry.__dict__.items() if k not in ("urlkey", "timestamp")}
    for name in ("orig_filename", "orig_offset", "orig_length"):
        if body[name] is None:
            del body[name]
    return f"{entry.urlkey} {entry.timestamp} {json.dumps(body, sort_keys=True, separators=(',', ':'))}\n"


@pytest.mark.parametrize(
    "changes",
    [
        {},
        {"url": 'http://x.example/é"\\\u2028?q=ü', "post_body": "YWJj", "method": "POST", "status": None},
        {"revisit_of": "http://x.example/", "orig_filename": "a.warc.gz", "orig_offset": 0, "orig_length": 9},
        {"orig_offset": 5, "digest": None, "req_offset": 0, "req_length": 7, "req_filename": "b.warc.gz"},
    ],
)
def test_lines_are_what_json_dumps_writes(snapshot: Path, changes: dict[str, object]) -> None:
    entry = build_index(snapshot, [ARCHIVE])[0].model_copy(update=changes)
    before, after = line_parts(entry.__dict__)
    assert f"{before}{entry.seq}{after}" == _dumped(entry)
