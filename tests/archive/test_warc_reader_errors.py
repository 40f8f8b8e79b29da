"""Broken archives: every problem is an ArchiveError naming the file, never a traceback or a quiet stop."""

from __future__ import annotations

import gzip
from io import BytesIO
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from capreplay.archive.warc.append import WarcAppender
from capreplay.archive.warc.build import exchange_records
from capreplay.archive.warc.read import iter_records, read_record
from capreplay.errors import ArchiveError
from tests.support import archive_samples as samples


@pytest.fixture(scope="module")
def good(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    path = tmp_path_factory.mktemp("good") / "data.warc.gz"
    samples.write_snapshot_warc(path)
    return path.read_bytes()


def member_starts(data: bytes) -> list[int]:
    with BytesIO(data) as f:
        return [r.offset for r in iter_records(f, "good")]


def read_file(path: Path) -> int:
    with open(path, "rb") as f:
        return sum(1 for _ in iter_records(f, str(path)))


def expect_error(path: Path, match: str, capsys: pytest.CaptureFixture[str]) -> ArchiveError:
    with pytest.raises(ArchiveError, match=match) as info:
        read_file(path)
    assert info.value.where == str(path)
    assert "\n" not in info.value.line()
    # warcio's habit of printing to stderr and carrying on is switched off
    assert capsys.readouterr().err == ""
    return info.value


@pytest.mark.parametrize("cut", [1, 10, 100, 300])
def test_truncated_warc_gz(tmp_path: Path, good: bytes, cut: int, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "cut.warc.gz"
    path.write_bytes(good[:-cut])
    expect_error(path, "truncated", capsys)


def test_truncation_message_names_the_offset(tmp_path: Path, good: bytes, capsys: pytest.CaptureFixture[str]) -> None:
    last = member_starts(good)[-1]
    path = tmp_path / "cut.warc.gz"
    path.write_bytes(good[: last + 300])
    error = expect_error(path, "truncated", capsys)
    assert f"offset {last}" in error.message


def test_flipped_byte_inside_a_gzip_member(tmp_path: Path, good: bytes, capsys: pytest.CaptureFixture[str]) -> None:
    starts = member_starts(good)
    middle = (starts[5] + starts[6]) // 2
    data = bytearray(good)
    data[middle] ^= 0xFF
    path = tmp_path / "flipped.warc.gz"
    path.write_bytes(bytes(data))
    error = expect_error(path, "gzip|truncated|offset", capsys)
    assert f"offset {starts[5]}" in error.message


def test_text_file_named_warc_gz(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "notes.warc.gz"
    path.write_text("These are my notes.\nNothing to see here.\n")
    expect_error(path, "not a WARC file", capsys)


def test_gzip_of_something_else(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "page.warc.gz"
    path.write_bytes(gzip.compress(b"<html>not a warc</html>\n"))
    expect_error(path, "not a WARC file", capsys)


def test_empty_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "empty.warc.gz"
    path.write_bytes(b"")
    expect_error(path, "no records", capsys)


def test_garbage_after_the_last_member(tmp_path: Path, good: bytes, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "tail.warc.gz"
    path.write_bytes(good + b"garbage that is not gzip")
    expect_error(path, f"offset {len(good)}", capsys)


def test_whole_file_gzip_is_not_one_member_per_record(
    tmp_path: Path, good: bytes, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "whole.warc.gz"
    path.write_bytes(gzip.compress(gzip.decompress(good)))
    expect_error(path, "more than one record", capsys)


def test_content_length_too_short_in_plain_warc(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = gzip.decompress(samples.warcinfo()).replace(b"Content-Length: 56", b"Content-Length: 40")
    path = tmp_path / "short.warc"
    path.write_bytes(data)
    expect_error(path, "Content-Length", capsys)


def test_plain_warc_missing_its_record_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "noend.warc"
    path.write_bytes(gzip.decompress(samples.warcinfo())[:-4])
    expect_error(path, "truncated", capsys)


def test_missing_mandatory_headers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = gzip.decompress(samples.warcinfo()).replace(b"WARC-Date:", b"X-Not-Date:")
    path = tmp_path / "nodate.warc"
    path.write_bytes(data)
    expect_error(path, "lacks WARC-Date", capsys)


def test_response_without_status_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, response = exchange_records(samples.html(), record_ids=samples.ids(0))
    data = gzip.decompress(response).replace(b"HTTP/1.1 200 OK", b"NOTHTTP 200 OK!")
    path = tmp_path / "nostatus.warc"
    path.write_bytes(data)
    expect_error(path, "no HTTP status line", capsys)


def test_read_record_at_a_wrong_offset(tmp_path: Path, good: bytes) -> None:
    path = tmp_path / "data.warc.gz"
    path.write_bytes(good)
    with open(path, "rb") as f:
        with pytest.raises(ArchiveError, match="offset 7") as info:
            read_record(f, 7)
        assert info.value.where == str(path)
        with pytest.raises(ArchiveError, match="past the end"):
            read_record(f, len(good) + 10)


def test_read_record_on_a_truncated_member(tmp_path: Path, good: bytes) -> None:
    last = member_starts(good)[-1]
    with pytest.raises(ArchiveError, match="truncated"):
        read_record(BytesIO(good[:-20]), last, name="mem.warc.gz")


def test_a_partly_written_last_record_is_reported(tmp_path: Path, good: bytes) -> None:
    # what a crash in the middle of WarcAppender.append leaves behind
    path = tmp_path / "crash.warc.gz"
    path.write_bytes(good)
    with WarcAppender(path) as out:
        out.append(samples.warcinfo()[:-5])
    with pytest.raises(ArchiveError, match=f"truncated gzip member at offset {len(good)}"):
        read_file(path)


def drain(data: bytes) -> None:
    try:
        for _ in iter_records(BytesIO(data), "fuzz.warc.gz"):
            pass
    except ArchiveError as e:
        assert e.where == "fuzz.warc.gz"
        assert "\n" not in e.message


_FUZZ = settings(max_examples=300, deadline=None)


@_FUZZ
@given(st.binary(max_size=2000))
def test_random_bytes_only_ever_raise_archive_error(data: bytes) -> None:
    drain(data)


@_FUZZ
@given(st.binary(max_size=400))
def test_random_bytes_after_a_warc_header_only_raise_archive_error(tail: bytes) -> None:
    drain(b"WARC/1.1\r\nWARC-Type: response\r\nContent-Length: 50\r\n" + tail)
    drain(gzip.compress(b"WARC/1.1\r\n" + tail, mtime=0))


@_FUZZ
@given(cut=st.integers(min_value=0), plain=st.booleans())
def test_random_truncations_only_raise_archive_error(good: bytes, cut: int, plain: bool) -> None:
    data = gzip.decompress(good) if plain else good
    drain(data[: cut % (len(data) + 1)])


@_FUZZ
@given(at=st.integers(min_value=0), value=st.integers(min_value=0, max_value=255), plain=st.booleans())
def test_random_byte_changes_only_raise_archive_error(good: bytes, at: int, value: int, plain: bool) -> None:
    data = bytearray(gzip.decompress(good) if plain else good)
    data[at % len(data)] = value
    drain(bytes(data))
