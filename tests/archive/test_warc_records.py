"""Exchange -> WARC record bytes: headers, framing, HTTP/2, header bytes, determinism, digests."""

from __future__ import annotations

import base64
import dataclasses
import gzip
import hashlib
import json
import zlib
from datetime import datetime, timedelta, timezone

import pytest

from capreplay.archive.warc.build import (
    digest_matches,
    exchange_records,
    format_warc_date,
    sha256_digest,
    warcinfo_record,
)
from capreplay.errors import ArchiveError
from tests.support import archive_samples as samples


def split(member: bytes) -> tuple[dict[str, list[str]], bytes]:
    """WARC headers (name -> values) and the record block of one record."""
    data = gzip.decompress(member)
    head, _, rest = data.partition(b"\r\n\r\n")
    lines = head.decode("utf-8").split("\r\n")
    assert lines[0] == "WARC/1.1"
    headers: dict[str, list[str]] = {}
    for line in lines[1:]:
        name, _, value = line.partition(": ")
        headers.setdefault(name, []).append(value)
    length = int(headers["Content-Length"][0])
    assert rest[length:] == b"\r\n\r\n"
    return headers, rest[:length]


def http_head(block: bytes) -> list[bytes]:
    return block.split(b"\r\n\r\n", 1)[0].split(b"\r\n")


def records(ex: samples.Exchange, n: int = 0) -> tuple[bytes, bytes]:
    return exchange_records(ex, warcinfo_id=samples.WARCINFO_ID, record_ids=samples.ids(n))


def test_each_record_is_exactly_one_gzip_member() -> None:
    for member in (samples.warcinfo(), *records(samples.html())):
        d = zlib.decompressobj(zlib.MAX_WBITS + 16)
        d.decompress(member)
        assert d.eof and d.unused_data == b""


def test_request_and_response_are_linked_both_ways() -> None:
    request, response = records(samples.html())
    req, _ = split(request)
    resp, _ = split(response)
    req_id, resp_id = samples.ids(0)
    assert req["WARC-Type"] == ["request"] and resp["WARC-Type"] == ["response"]
    assert req["WARC-Record-ID"] == [req_id] and resp["WARC-Record-ID"] == [resp_id]
    assert resp["WARC-Concurrent-To"] == [req_id]
    assert req["WARC-Concurrent-To"] == [resp_id]
    for headers in (req, resp):
        assert headers["WARC-Target-URI"] == ["https://example.com/"]
        assert headers["WARC-Date"] == ["2024-05-01T12:00:00.123456Z"]
        assert headers["WARC-Warcinfo-ID"] == [samples.WARCINFO_ID]
    assert resp["WARC-IP-Address"] == ["93.184.216.34"]
    assert resp["Content-Type"] == ["application/http; msgtype=response"]
    assert req["Content-Type"] == ["application/http; msgtype=request"]


def test_optional_headers_are_left_out_when_unknown() -> None:
    ex = dataclasses.replace(samples.html(), server_ip=None)
    _, response = exchange_records(ex, record_ids=samples.ids(0))
    headers, _ = split(response)
    assert "WARC-IP-Address" not in headers and "WARC-Warcinfo-ID" not in headers


def test_digests_are_sha256_of_block_and_payload() -> None:
    ex = samples.gzipped()
    headers, block = split(records(ex)[1])
    assert headers["WARC-Block-Digest"] == [sha256_digest(block)]
    assert headers["WARC-Payload-Digest"] == [sha256_digest(ex.response_body)]
    assert headers["WARC-Payload-Digest"][0].startswith("sha256:")


def test_warc_dates_are_utc_with_microseconds() -> None:
    assert format_warc_date(datetime(2024, 5, 1, 12, 0, 0)) == "2024-05-01T12:00:00.000000Z"
    paris = timezone(timedelta(hours=2))
    assert format_warc_date(datetime(2024, 5, 1, 14, 0, 0, 5, tzinfo=paris)) == "2024-05-01T12:00:00.000005Z"


def test_same_inputs_give_identical_bytes() -> None:
    for make in samples.ALL:
        assert records(make()) == records(make())
    assert samples.warcinfo() == samples.warcinfo()
    # the gzip header's mtime is zero, so the date of the run never leaks into the bytes
    assert all(m[4:8] == b"\0\0\0\0" for m in records(samples.html()))


def test_fresh_record_ids_when_none_given() -> None:
    first = exchange_records(samples.html())
    second = exchange_records(samples.html())
    assert split(first[1])[0]["WARC-Record-ID"] != split(second[1])[0]["WARC-Record-ID"]


def test_response_body_is_stored_exactly_with_its_content_encoding() -> None:
    ex = samples.gzipped()
    _, block = split(records(ex)[1])
    payload = block.split(b"\r\n\r\n", 1)[1]
    assert payload == ex.response_body
    assert gzip.decompress(payload) == samples.GZIPPED_TEXT
    assert b"Content-Encoding: gzip" in http_head(block)


def test_chunked_original_is_reframed_with_content_length() -> None:
    ex = samples.chunked()
    headers, block = split(records(ex)[1])
    head = http_head(block)
    assert not any(line.lower().startswith(b"transfer-encoding") for line in head)
    assert b"Content-Length: 20" in head
    assert json.loads(headers["WARC-Capreplay-Original-Framing"][0]) == [["Transfer-Encoding", "chunked"]]
    assert block.endswith(ex.response_body)


def test_correct_content_length_is_kept_untouched() -> None:
    headers, block = split(records(samples.html())[1])
    assert "WARC-Capreplay-Original-Framing" not in headers
    assert http_head(block)[1:] == [
        b"Content-Type: text/html; charset=utf-8",
        b"Content-Length: 49",
        b"X-Latin: caf\xe9",
    ]


def test_wrong_or_repeated_content_length_is_fixed_in_place() -> None:
    ex = dataclasses.replace(
        samples.html(),
        response_headers=[("content-length", "999"), ("X-A", "1"), ("Content-Length", "49")],
    )
    headers, block = split(records(ex)[1])
    assert http_head(block)[1:] == [b"content-length: 49", b"X-A: 1"]
    assert json.loads(headers["WARC-Capreplay-Original-Framing"][0]) == [
        ["content-length", "999"],
        ["Content-Length", "49"],
    ]


@pytest.mark.parametrize(("method", "status"), [("HEAD", 200), ("GET", 304), ("GET", 204)])
def test_bodiless_responses_keep_their_framing(method: str, status: int) -> None:
    ex = dataclasses.replace(
        samples.html(), method=method, status=status, response_headers=[("Content-Length", "5000")], response_body=b""
    )
    headers, block = split(records(ex)[1])
    assert b"Content-Length: 5000" in http_head(block)
    assert "WARC-Capreplay-Original-Framing" not in headers


def test_get_without_body_gets_no_content_length() -> None:
    _, block = split(records(samples.html())[0])
    assert http_head(block) == [
        b"GET / HTTP/1.1",
        b"Host: example.com",
        b"User-Agent: capreplay-test",
        b"Accept: */*",
    ]


def test_post_request_keeps_its_body() -> None:
    ex = samples.post()
    headers, block = split(records(ex)[0])
    assert http_head(block)[0] == b"POST /api/search?lang=en HTTP/1.1"
    assert block.endswith(b"\r\n\r\n" + ex.request_body)
    assert headers["WARC-Payload-Digest"] == [sha256_digest(ex.request_body)]
    assert "WARC-Capreplay-Original-Framing" not in headers


def test_h2_is_written_as_http11_with_warc_protocol() -> None:
    ex = samples.h2()
    request, response = records(ex)
    req_headers, req_block = split(request)
    resp_headers, resp_block = split(response)
    assert http_head(req_block) == [b"GET /app.js?v=2 HTTP/1.1", b"Host: cdn.example.com", b"accept: */*"]
    assert http_head(resp_block) == [b"HTTP/1.1 200 OK", b"content-type: text/javascript", b"Content-Length: 18"]
    assert req_headers["WARC-Protocol"] == ["h2"] and resp_headers["WARC-Protocol"] == ["h2"]
    # h2 has no Content-Length of its own: the added one is recorded as a change
    assert json.loads(resp_headers["WARC-Capreplay-Original-Framing"][0]) == []


def test_h2_request_with_host_header_gets_no_second_one() -> None:
    ex = dataclasses.replace(samples.h2(), request_headers=[(":authority", "x.test"), ("host", "cdn.example.com")])
    head = http_head(split(records(ex)[0])[1])
    assert head[1:] == [b"host: cdn.example.com"]


def test_extra_fields_become_response_warc_headers() -> None:
    request, response = records(samples.h2())
    assert split(response)[0]["WARC-Capreplay-Page"] == ["0"]
    assert "WARC-Capreplay-Page" not in split(request)[0]


@pytest.mark.parametrize("name", ["WARC-Type", "content-length", "WARC-Record-ID", "Bad:Name", ""])
def test_extra_fields_cannot_replace_record_headers(name: str) -> None:
    with pytest.raises(ArchiveError):
        records(dataclasses.replace(samples.html(), extra={name: "x"}))


@pytest.mark.parametrize(
    ("value", "wire"),
    [
        ("caf\xe9", b"caf\xe9"),  # latin-1: one byte per character
        ("snow \u2603", "snow \u2603".encode()),  # beyond latin-1: UTF-8
        ("raw \udce9", b"raw \xe9"),  # a surrogate escape gives its byte back
        ("lone \ud800", b"lone \\ud800"),  # not an escape: written visibly, never a crash
    ],
)
def test_header_values_are_written_byte_for_byte(value: str, wire: bytes) -> None:
    ex = dataclasses.replace(samples.html(), response_headers=[("X-Value", value)])
    assert b"X-Value: " + wire in http_head(split(records(ex)[1])[1])


@pytest.mark.parametrize("where", ["header", "url", "extra"])
def test_line_breaks_are_refused(where: str) -> None:
    ex = samples.html()
    if where == "header":
        ex = dataclasses.replace(ex, response_headers=[("X-Evil", "a\r\nInjected: yes")])
    elif where == "url":
        ex = dataclasses.replace(ex, url="https://example.com/\r\nX: y")
    else:
        ex = dataclasses.replace(ex, extra={"WARC-X": "a\nb"})
    with pytest.raises(ArchiveError, match="line break"):
        records(ex)


def test_unknown_http_version_is_refused() -> None:
    with pytest.raises(ArchiveError, match="HTTP version"):
        records(dataclasses.replace(samples.html(), http_version="SPDY/3"))


def test_spaces_in_urls_are_percent_encoded_in_the_target_uri() -> None:
    ex = dataclasses.replace(samples.html(), url="https://example.com/a b")
    for member in records(ex):
        assert split(member)[0]["WARC-Target-URI"] == ["https://example.com/a%20b"]


def test_warcinfo_record_lists_its_fields() -> None:
    headers, block = split(
        warcinfo_record({"software": "capreplay", "plan": '{"a":1}'}, record_id="urn:uuid:x", filename="d.warc.gz")
    )
    assert headers["WARC-Type"] == ["warcinfo"]
    assert headers["WARC-Record-ID"] == ["<urn:uuid:x>"]
    assert headers["WARC-Filename"] == ["d.warc.gz"]
    assert headers["Content-Type"] == ["application/warc-fields"]
    assert block == b'software: capreplay\r\nplan: {"a":1}\r\n'
    assert headers["WARC-Date"][0].endswith("Z")


def test_warcinfo_refuses_fields_that_would_break_the_body() -> None:
    with pytest.raises(ArchiveError):
        warcinfo_record({"plan": "line one\nline two"})
    with pytest.raises(ArchiveError):
        warcinfo_record({"a:b": "x"})


def test_digest_matches_reads_base32_hex_and_base64() -> None:
    data = b"payload"
    raw = hashlib.sha256(data).digest()
    assert digest_matches(sha256_digest(data), data) is True
    assert digest_matches("sha256:" + raw.hex(), data) is True
    assert digest_matches("sha256:" + base64.b64encode(raw).decode(), data) is True
    assert digest_matches("sha256:" + base64.b32encode(raw).decode().rstrip("="), data) is True
    sha1 = base64.b32encode(hashlib.sha1(data).digest()).decode()
    assert digest_matches("sha1:" + sha1, data) is True
    assert digest_matches(sha256_digest(data), b"other") is False
    assert digest_matches("whirlpool:abc", data) is None
    assert digest_matches("sha256:not-a-digest", data) is None
    assert digest_matches("no-colon", data) is None
