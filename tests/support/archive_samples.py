"""Deterministic exchanges and WARC builders shared by the archive tests (fixed ids and dates)."""

from __future__ import annotations

import gzip
from datetime import UTC, datetime
from io import BytesIO
from pathlib import Path

from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from capreplay.archive.warc.append import WarcAppender
from capreplay.archive.warc.build import exchange_records, warcinfo_record
from capreplay.archive.warc.exchange import Exchange

T0 = datetime(2024, 5, 1, 12, 0, 0, 123456, tzinfo=UTC)
WARCINFO_ID = "<urn:uuid:00000000-0000-4000-8000-000000000000>"
GZIPPED_TEXT = b"hello gzip world " * 200
BINARY = bytes(range(256)) * 4


def ids(n: int) -> tuple[str, str]:
    """Fixed (request id, response id) for the n-th exchange."""
    return (
        f"<urn:uuid:00000000-0000-4000-8000-{2 * n + 1:012d}>",
        f"<urn:uuid:00000000-0000-4000-8000-{2 * n + 2:012d}>",
    )


def html() -> Exchange:
    body = b"<!doctype html><title>Example</title><p>caf\xc3\xa9</p>"
    return Exchange(
        url="https://example.com/",
        method="GET",
        request_headers=[("Host", "example.com"), ("User-Agent", "capreplay-test"), ("Accept", "*/*")],
        request_body=b"",
        http_version="HTTP/1.1",
        status=200,
        reason="OK",
        response_headers=[
            ("Content-Type", "text/html; charset=utf-8"),
            ("Content-Length", str(len(body))),
            ("X-Latin", "caf\xe9"),  # one char per byte: the wire byte 0xE9
        ],
        response_body=body,
        started=T0,
        server_ip="93.184.216.34",
    )


def gzipped() -> Exchange:
    body = gzip.compress(GZIPPED_TEXT, mtime=0)
    return Exchange(
        url="https://example.com/style.css",
        method="GET",
        request_headers=[("Host", "example.com"), ("Accept-Encoding", "gzip")],
        request_body=b"",
        http_version="HTTP/1.1",
        status=200,
        reason="OK",
        response_headers=[
            ("Content-Type", "text/css"),
            ("Content-Encoding", "gzip"),
            ("Content-Length", str(len(body))),
        ],
        response_body=body,
        started=T0,
    )


def chunked() -> Exchange:
    return Exchange(
        url="https://example.com/data.json",
        method="GET",
        request_headers=[("Host", "example.com")],
        request_body=b"",
        http_version="HTTP/1.1",
        status=200,
        reason="OK",
        response_headers=[("Content-Type", "application/json"), ("Transfer-Encoding", "chunked")],
        response_body=b'{"items": [1, 2, 3]}',
        started=T0,
    )


def h2() -> Exchange:
    return Exchange(
        url="https://cdn.example.com/app.js?v=2",
        method="GET",
        request_headers=[
            (":method", "GET"),
            (":scheme", "https"),
            (":authority", "cdn.example.com"),
            (":path", "/app.js?v=2"),
            ("accept", "*/*"),
        ],
        request_body=b"",
        http_version="HTTP/2.0",
        status=200,
        reason="",
        response_headers=[(":status", "200"), ("content-type", "text/javascript")],
        response_body=b"console.log('h2');",
        started=T0,
        extra={"WARC-Capreplay-Page": "0"},
    )


def post() -> Exchange:
    body = b'{"query": "hello"}'
    return Exchange(
        url="https://example.com/api/search?lang=en",
        method="POST",
        request_headers=[
            ("Host", "example.com"),
            ("Content-Type", "application/json"),
            ("Content-Length", str(len(body))),
        ],
        request_body=body,
        http_version="HTTP/1.1",
        status=201,
        reason="Created",
        response_headers=[("Content-Type", "application/json"), ("Content-Length", "11")],
        response_body=b'{"ok": true}'[:11],
        started=T0,
    )


def binary() -> Exchange:
    return Exchange(
        url="https://example.com/img.png",
        method="GET",
        request_headers=[("Host", "example.com")],
        request_body=b"",
        http_version="HTTP/1.1",
        status=200,
        reason="OK",
        response_headers=[("Content-Type", "image/png"), ("Content-Length", str(len(BINARY)))],
        response_body=BINARY,
        started=T0,
    )


ALL = (html, gzipped, chunked, h2, post, binary)


def warcinfo() -> bytes:
    return warcinfo_record(
        {"software": "capreplay test", "format": "WARC File Format 1.1"},
        record_id=WARCINFO_ID,
        date="2024-05-01T12:00:00.000000Z",
    )


def write_snapshot_warc(path: Path) -> list[Exchange]:
    """warcinfo then every sample exchange (request, response), as capture writes them."""
    exchanges = [make() for make in ALL]
    with WarcAppender(path) as out:
        out.append(warcinfo())
        for n, ex in enumerate(exchanges):
            for member in exchange_records(ex, warcinfo_id=WARCINFO_ID, record_ids=ids(n)):
                out.append(member)
    return exchanges


def foreign_warc(*, gzip_members: bool = True) -> bytes:
    """A WARC as warcio's own writer makes it: sha1 digests, response before request, chunked body."""
    out = BytesIO()
    writer = WARCWriter(out, gzip=gzip_members, warc_version="1.0")
    chunked_body = b"5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n"
    resp_headers = StatusAndHeaders(
        "200 OK", [("Content-Type", "text/plain"), ("Transfer-Encoding", "chunked")], protocol="HTTP/1.1"
    )
    resp = writer.create_warc_record(
        "http://foreign.example/chunked",
        "response",
        payload=BytesIO(chunked_body),
        length=len(chunked_body),
        http_headers=resp_headers,
        warc_headers_dict={"WARC-Record-ID": "<urn:uuid:f1>", "WARC-Date": "2020-01-02T03:04:05Z"},
    )
    req_headers = StatusAndHeaders("GET /chunked HTTP/1.1", [("Host", "foreign.example")], is_http_request=True)
    req = writer.create_warc_record(
        "http://foreign.example/chunked",
        "request",
        http_headers=req_headers,
        warc_headers_dict={"WARC-Record-ID": "<urn:uuid:f2>", "WARC-Date": "2020-01-02T03:04:05Z"},
    )
    writer.write_request_response_pair(req, resp)
    revisit = writer.create_revisit_record(
        "http://foreign.example/chunked",
        digest=resp.rec_headers.get_header("WARC-Payload-Digest"),
        refers_to_uri="http://foreign.example/chunked",
        refers_to_date="2020-01-02T03:04:05Z",
        warc_headers_dict={"WARC-Record-ID": "<urn:uuid:f3>", "WARC-Date": "2020-01-03T00:00:00Z"},
    )
    writer.write_record(revisit)
    return out.getvalue()
