"""Exchange -> records -> WarcAppender -> file -> iter_records / read_record, and warcio's own tools."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
import zlib
from io import BytesIO
from pathlib import Path

import pytest

from capreplay.archive.warc.append import WarcAppender
from capreplay.archive.warc.build import exchange_records
from capreplay.archive.warc.http import dechunk
from capreplay.archive.warc.read import iter_records, read_record
from capreplay.archive.warc.stored import StoredRecord
from capreplay.errors import ArchiveError, OutputError
from capreplay.util.files import write_atomic
from tests.support import archive_samples as samples


@pytest.fixture
def warc(tmp_path: Path) -> Path:
    path = tmp_path / "archive" / "data-00000.warc.gz"
    samples.write_snapshot_warc(path)
    return path


def read_all(path: Path, **kwargs: bool) -> list[StoredRecord]:
    with open(path, "rb") as f:
        return list(iter_records(f, str(path), **kwargs))


def plain_copy(path: Path, dest: Path) -> Path:
    """The same records as an uncompressed .warc (every gzip member decompressed in turn)."""
    dest.write_bytes(gzip.decompress(path.read_bytes()))
    return dest


def test_every_record_comes_back_in_order(warc: Path) -> None:
    stored = read_all(warc, check_digests=True)
    assert [r.rec_type for r in stored] == ["warcinfo"] + ["request", "response"] * len(samples.ALL)
    for n, make in enumerate(samples.ALL):
        ex = make()
        req, resp = stored[1 + 2 * n], stored[2 + 2 * n]
        assert (req.record_id, resp.record_id) == samples.ids(n)
        assert req.url == resp.url == ex.url
        assert req.method == ex.method and req.payload == ex.request_body
        assert resp.status == ex.status
        assert resp.payload == ex.response_body
        assert resp.warc_header("WARC-Concurrent-To") == req.record_id
        assert resp.date == "2024-05-01T12:00:00.123456Z"


def test_gzip_encoded_body_comes_back_still_gzipped(warc: Path) -> None:
    resp = read_all(warc)[4]
    assert resp.http_header("content-encoding") == "gzip"
    assert resp.payload[:2] == b"\x1f\x8b"
    assert gzip.decompress(resp.payload) == samples.GZIPPED_TEXT


def test_chunked_original_comes_back_plain_with_content_length(warc: Path) -> None:
    resp = read_all(warc)[6]
    assert resp.payload == b'{"items": [1, 2, 3]}'
    assert resp.http_header("Transfer-Encoding") is None
    assert resp.http_header("Content-Length") == "20"
    assert json.loads(str(resp.warc_header("WARC-Capreplay-Original-Framing"))) == [["Transfer-Encoding", "chunked"]]


def test_h2_exchange_comes_back_with_its_protocol(warc: Path) -> None:
    req, resp = read_all(warc)[7:9]
    assert req.warc_header("WARC-Protocol") == resp.warc_header("WARC-Protocol") == "h2"
    assert req.http_headers[0] == ("Host", "cdn.example.com")
    assert (resp.status, resp.reason) == (200, "OK")
    assert resp.warc_header("WARC-Capreplay-Page") == "0"


def test_post_body_and_binary_body_are_identical(warc: Path) -> None:
    stored = read_all(warc)
    post_req = stored[9]
    assert post_req.method == "POST" and post_req.payload == b'{"query": "hello"}'
    assert stored[12].payload == samples.BINARY
    assert set(stored[12].payload) == set(range(256))


def test_latin1_header_bytes_round_trip(warc: Path) -> None:
    resp = read_all(warc)[2]
    assert ("X-Latin", "caf\xe9") in resp.http_headers


def test_read_record_at_each_offset_matches_iteration(warc: Path) -> None:
    stored = read_all(warc)
    with open(warc, "rb") as f:
        for rec in reversed(stored):  # any order: each read seeks on its own
            assert read_record(f, rec.offset) == rec


def test_appender_offsets_are_the_reader_offsets(tmp_path: Path) -> None:
    path = tmp_path / "a.warc.gz"
    places = []
    with WarcAppender(path) as out:
        places.append(out.append(samples.warcinfo()))
        for member in exchange_records(samples.html(), record_ids=samples.ids(0)):
            places.append(out.append(member))
    # reopening appends after what is there
    with WarcAppender(path) as out:
        assert out.size == path.stat().st_size
        for member in exchange_records(samples.binary(), record_ids=samples.ids(1)):
            places.append(out.append(member))
    assert [(r.offset, r.length) for r in read_all(path)] == places
    assert places[0][0] == 0 and sum(length for _, length in places) == path.stat().st_size


def test_warcio_check_passes(warc: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "warcio.cli", "check", "-v", str(warc)], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.count("digest pass") == 1 + 2 * len(samples.ALL)


def test_warcio_index_lists_every_record(warc: Path) -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "warcio.cli",
            "index",
            "-f",
            "warc-type,warc-target-uri,offset,length,http:status",
            str(warc),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    ours = read_all(warc)
    assert [line["warc-type"] for line in lines] == [r.rec_type for r in ours]
    assert [int(line["offset"]) for line in lines] == [r.offset for r in ours]
    assert [int(line["length"]) for line in lines] == [r.length for r in ours]
    assert [line.get("http:status") for line in lines if line["warc-type"] == "response"] == [
        str(make().status) for make in samples.ALL
    ]


def test_uncompressed_warc_reads_the_same(warc: Path, tmp_path: Path) -> None:
    plain = plain_copy(warc, tmp_path / "plain.warc")
    gz, flat = read_all(warc), read_all(plain, check_digests=True)
    assert [(r.record_id, r.payload, r.http_headers) for r in gz] == [
        (r.record_id, r.payload, r.http_headers) for r in flat
    ]
    raw = plain.read_bytes()
    with open(plain, "rb") as f:
        for rec in flat:
            assert raw[rec.offset : rec.offset + 8] == b"WARC/1.1"
            assert raw[rec.offset + rec.length : rec.offset + rec.length + 4] == b"\r\n\r\n"
            assert read_record(f, rec.offset) == rec


@pytest.mark.parametrize("gzip_members", [True, False])
def test_foreign_warcio_records(tmp_path: Path, gzip_members: bool) -> None:
    path = tmp_path / ("foreign.warc.gz" if gzip_members else "foreign.warc")
    path.write_bytes(samples.foreign_warc(gzip_members=gzip_members))
    resp, req, revisit = read_all(path, check_digests=True)  # sha1 digests, verified too
    assert resp.rec_type == "response" and resp.payload == b"hello world"  # de-chunked
    assert resp.http_header("Transfer-Encoding") == "chunked"  # headers stay as stored
    assert req.rec_type == "request" and req.warc_header("WARC-Concurrent-To") == resp.record_id
    assert revisit.rec_type == "revisit" and revisit.status is None and revisit.payload == b""


def test_changed_byte_in_an_uncompressed_warc_fails_the_digest_check(warc: Path, tmp_path: Path) -> None:
    plain = plain_copy(warc, tmp_path / "plain.warc")
    data = bytearray(plain.read_bytes())
    at = data.index(b"console.log")
    data[at] = ord("C")
    plain.write_bytes(bytes(data))
    assert len(read_all(plain)) == 13  # without the check the bytes still parse
    with pytest.raises(ArchiveError, match="digest") as info:
        read_all(plain, check_digests=True)
    assert info.value.where == str(plain)


@pytest.mark.parametrize(
    ("data", "body"),
    [
        (b"5\r\nhello\r\n0\r\n\r\n", b"hello"),
        (b"5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nTrailer: x\r\n\r\n", b"hello world"),
        (b"0\r\n\r\n", b""),
        (b"5\nhello\n0\n\n", b"hello"),
    ],
)
def test_dechunk(data: bytes, body: bytes) -> None:
    assert dechunk(data) == body


@pytest.mark.parametrize("data", [b"hello", b"", b"5\r\nhel", b"5\r\nhelloXX0\r\n\r\n", b"0x5\r\nhello\r\n0\r\n\r\n"])
def test_dechunk_refuses_what_is_not_chunked(data: bytes) -> None:
    assert dechunk(data) is None


def test_appender_refuses_a_non_gzip_member(tmp_path: Path) -> None:
    with WarcAppender(tmp_path / "a.warc.gz") as out, pytest.raises(OutputError, match="gzip"):
        out.append(gzip.decompress(samples.warcinfo()))


def test_appender_refuses_appends_after_close(tmp_path: Path) -> None:
    out = WarcAppender(tmp_path / "a.warc.gz")
    out.append(samples.warcinfo())
    out.sync()
    out.close()
    out.close()  # harmless
    with pytest.raises(OutputError):
        out.append(samples.warcinfo())


def test_appender_reports_a_folder_it_cannot_open(tmp_path: Path) -> None:
    (tmp_path / "taken").write_text("a file, not a folder")
    with pytest.raises(OutputError) as info:
        WarcAppender(tmp_path / "taken" / "a.warc.gz")
    assert "taken" in str(info.value.where)


def test_write_atomic_leaves_no_temp_file(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    write_atomic(path, b"one")
    write_atomic(path, b"two")
    assert path.read_bytes() == b"two"
    assert [p.name for p in tmp_path.iterdir()] == ["x.json"]


def test_a_whole_member_is_written_in_one_go(tmp_path: Path) -> None:
    # a reader polling the growing file sees complete members only
    path = tmp_path / "a.warc.gz"
    with WarcAppender(path) as out:
        for member in exchange_records(samples.binary(), record_ids=samples.ids(0)):
            out.append(member)
            data = path.read_bytes()
            d = zlib.decompressobj(zlib.MAX_WBITS + 16)
            rest = data
            while rest:
                d = zlib.decompressobj(zlib.MAX_WBITS + 16)
                d.decompress(rest)
                assert d.eof
                rest = d.unused_data
    assert len(list(iter_records(BytesIO(path.read_bytes()), "mem"))) == 2
