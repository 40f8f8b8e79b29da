"""The replay-side fast paths, each checked against the strict, slow reading it stands in for.

- ``read_record_at`` (pread + one zlib call) against ``read_record`` (warcio), record by record;
- ``scan_records`` and ``build_index`` (headers only) against ``iter_records`` + ``index_records``;
- ``SortedIndex`` binary search against a linear filter over every line;
- ``check_index`` and the verification record against damaged snapshots.
"""

from __future__ import annotations

import gzip
import os
import shutil
from pathlib import Path

import pytest

from capreplay.archive.index.cdxj import build_index, format_index, index_records
from capreplay.archive.index.lookup import SortedIndex, check_index
from capreplay.archive.snapshot.check_stamp import load_record, unchanged_files
from capreplay.archive.snapshot.manifest import collect_files, load_manifest, write_manifest
from capreplay.archive.warc.read import iter_records, read_record
from capreplay.archive.warc.scan import read_record_at, scan_records
from capreplay.errors import ArchiveError, SnapshotError
from capreplay.models.manifest import snapshot_id
from capreplay.replay.store import INDEX_FILE, SnapshotStore

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "snapshots" / "fixtures"
INTEROP = REPO.parent / "shared" / "interop"


def archives() -> list[Path]:
    found = sorted((FIXTURES / "archive").glob("*.warc.gz"))
    if INTEROP.is_dir():
        found += sorted(p for p in INTEROP.rglob("*") if p.name.endswith((".warc", ".warc.gz")))
    return found


@pytest.mark.parametrize("path", archives(), ids=lambda p: p.name)
def test_read_record_at_returns_what_warcio_reads(path: Path) -> None:
    with open(path, "rb") as f:
        records = list(iter_records(f, str(path)))
        fd = os.open(path, os.O_RDONLY)
        try:
            for rec in records:
                assert read_record_at(fd, rec.offset, rec.length, name=str(path)) == read_record(f, rec.offset)
        finally:
            os.close(fd)


@pytest.mark.parametrize("path", archives(), ids=lambda p: p.name)
def test_scan_records_and_build_index_match_the_strict_reader(path: Path, tmp_path: Path) -> None:
    data = path.read_bytes()
    with open(path, "rb") as f:
        strict = list(iter_records(f, str(path)))
    lean = list(scan_records(data, str(path)))
    assert [(r.rec_type, r.record_id, r.url, r.offset, r.length, r.status, r.method) for r in lean] == [
        (r.rec_type, r.record_id, r.url, r.offset, r.length, r.status, r.method) for r in strict
    ]
    shutil.copy(path, tmp_path / path.name)
    with open(path, "rb") as f:
        expected = index_records([(path.name, iter_records(f, str(path)))])
    assert format_index(build_index(tmp_path, [path.name])) == format_index(expected)


def test_build_index_gives_the_same_bytes_with_several_processes(tmp_path: Path) -> None:
    warcs = sorted((FIXTURES / "archive").glob("*.warc.gz"))
    for i in range(3):  # three copies: several files to share out
        for warc in warcs:
            shutil.copy(warc, tmp_path / f"{i}-{warc.name}")
    names = sorted(p.name for p in tmp_path.iterdir())
    one = format_index(build_index(tmp_path, names, workers=1))
    import capreplay.archive.index.cdxj as index_module

    limit = index_module.PARALLEL_BYTES
    index_module.PARALLEL_BYTES = 0  # the fixture archive is small: make it count as large
    try:
        two = format_index(build_index(tmp_path, names, workers=2))
    finally:
        index_module.PARALLEL_BYTES = limit
    assert one == two and one.count(b"\n") == 3 * len((FIXTURES / "index.cdxj").read_bytes().splitlines())


@pytest.mark.parametrize(
    ("damage", "problem"),
    [
        (lambda d: d[: len(d) - 10], "truncated"),
        (lambda d: d[:40] + bytes([d[40] ^ 0xFF]) + d[41:], "corrupt gzip|truncated|no WARC record"),
        (lambda d: d + gzip.compress(b"WARC/1.1\r\n\r\n"), "shorter than its index entry"),
    ],
    ids=["cut", "flipped", "two-members"],
)
def test_read_record_at_refuses_a_damaged_record(tmp_path: Path, damage: object, problem: str) -> None:
    path = FIXTURES / "archive" / "data-00000.warc.gz"
    with open(path, "rb") as f:
        first = next(r for r in iter_records(f, str(path)) if r.rec_type == "response")
    data = path.read_bytes()[first.offset : first.offset + first.length]
    broken = damage(data)  # type: ignore[operator]
    bad = tmp_path / "bad.warc.gz"
    bad.write_bytes(broken)
    fd = os.open(bad, os.O_RDONLY)
    try:
        with pytest.raises(ArchiveError, match=problem) as info:
            read_record_at(fd, 0, max(len(broken), first.length), name=str(bad))
    finally:
        os.close(fd)
    assert info.value.where == str(bad)


def test_binary_search_finds_exactly_the_lines_a_linear_filter_finds() -> None:
    index = SortedIndex.open(FIXTURES / INDEX_FILE)
    try:
        every = list(index)
        keys = sorted({line.split(b" ", 1)[0].decode() for _, line in every})
        assert len(keys) > 20
        for key in keys:
            assert index.lines(key) == [(o, line) for o, line in every if line.split(b" ", 1)[0].decode() == key]
            bucket = key.split("?", 1)[0]
            expected = [
                (o, line)
                for o, line in every
                if (k := line.split(b" ", 1)[0].decode()) == bucket or k.startswith(bucket + "?")
            ]
            assert sorted(index.lines_under(bucket, "?")) == sorted(expected)
        for absent in ("", "a", "com,zzz)/", "\U0010ffff"):
            assert index.lines(absent) == []
    finally:
        index.close()


def test_an_empty_index_and_metadata_lines_are_handled(tmp_path: Path) -> None:
    (tmp_path / "empty.cdxj").write_bytes(b"")
    assert list(SortedIndex.open(tmp_path / "empty.cdxj")) == []
    assert SortedIndex.open(tmp_path / "empty.cdxj").lines("com,a)/") == []
    text = (FIXTURES / INDEX_FILE).read_bytes()
    with_meta = SortedIndex(b'!meta 0 {"title": "x"}\n' + text, "meta")
    plain = SortedIndex(text, "plain")
    key = next(iter(plain))[1].split(b" ", 1)[0].decode()
    assert [line for _, line in with_meta.lines(key)] == [line for _, line in plain.lines(key)]


def _copy(tmp_path: Path) -> Path:
    return Path(shutil.copytree(FIXTURES, tmp_path / "snap"))


def _rehash(snap: Path) -> None:
    """Make the manifest vouch for whatever the files now hold, as a tool that re-hashes would."""
    files = collect_files(snap)
    manifest = load_manifest(snap)
    manifest = manifest.model_copy(update={"files": files, "snapshot_id": snapshot_id(files, manifest.pages)})
    write_manifest(snap, manifest)


@pytest.mark.parametrize(
    ("edit", "problem"),
    [
        (lambda lines: lines[1:2] + lines[:1] + lines[2:], "not sorted"),
        (lambda lines: [lines[0][: len(lines[0]) // 2], *lines[1:]], "malformed index line"),
        (lambda lines: [lines[0].replace(b'"offset":', b'"offset":99999999', 1), *lines[1:]], "past the end"),
        (lambda lines: [lines[0].replace(b'"filename":"', b'"filename":"x', 1), *lines[1:]], "does not hold"),
    ],
    ids=["unsorted", "cut-line", "offset-past-end", "unknown-file"],
)
def test_a_damaged_index_is_refused_when_the_snapshot_is_opened(tmp_path: Path, edit: object, problem: str) -> None:
    snap = _copy(tmp_path)
    lines = (snap / INDEX_FILE).read_bytes().splitlines(keepends=True)
    (snap / INDEX_FILE).write_bytes(b"".join(edit(lines)))  # type: ignore[operator]
    _rehash(snap)
    with pytest.raises(SnapshotError, match=problem):
        SnapshotStore(snap)


def test_a_second_open_trusts_unchanged_files_and_rehashes_a_changed_one(tmp_path: Path) -> None:
    snap = _copy(tmp_path)
    SnapshotStore(snap).close()
    record = load_record(snap)
    assert record is not None and record.origins
    listed = {f.path: f.sha256 for f in load_manifest(snap).files}
    assert unchanged_files(snap, record, listed) == set(listed)
    store = SnapshotStore(snap)  # from the record: same origins, nothing hashed
    assert store.origins() == [tuple(o) for o in record.origins]
    store.close()
    # A byte changed in place: same size, same inode, but a new change time, so it is hashed and refused.
    warc = snap / "archive" / "data-00000.warc.gz"
    with open(warc, "r+b") as f:
        f.seek(100)
        byte = f.read(1)
        f.seek(100)
        f.write(bytes([byte[0] ^ 0x01]))
    assert "archive/data-00000.warc.gz" not in unchanged_files(snap, record, listed)
    with pytest.raises(SnapshotError, match="sha256 does not match"):
        SnapshotStore(snap)


def test_check_index_names_the_warc_a_record_does_not_fit_in(tmp_path: Path) -> None:
    snap = _copy(tmp_path)
    sizes = {f.path: f.size for f in load_manifest(snap).files}
    warc = "archive/data-00000.warc.gz"
    index = SortedIndex.open(snap / INDEX_FILE)
    try:
        with pytest.raises(SnapshotError, match=r"ends past the end of the file") as info:
            check_index(index, snap, {**sizes, warc: sizes[warc] // 2})
    finally:
        index.close()
    assert info.value.where == str(snap / warc)
