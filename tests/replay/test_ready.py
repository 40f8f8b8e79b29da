"""The ready file is derived state in the cache: built when missing, rebuilt when stale, truncated or corrupt.

Each case damages the ready folder of the committed fixture snapshot the way a disk, a user or an old
version would, then opens the server again: the folder must be found unfit, built again, and the server's
responses must be the archive's (checked against the bodies the index points at, read with warcio's reader).

Ready responses made in the index's pass (:mod:`capreplay.replay.ready.with_index`, in the calling process and by
worker processes over several files) are compared URL by URL, byte by byte, with the folder
:func:`build_ready` makes from the index file, whose bytes ``test_fast.py`` checks against the general path.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import resource
import shutil
import signal
from collections.abc import Callable
from pathlib import Path

import pytest

from capreplay.archive.index import cdxj
from capreplay.archive.index.cdxj import IndexEntry, load_index
from capreplay.archive.warc.read import iter_records, read_record
from capreplay.errors import ArchiveError
from capreplay.replay.ready.builder import build_ready, open_ready
from capreplay.replay.ready.responses import (
    STAMPS_FILE,
    TABLE_FILE,
    ReadyResponses,
    check_folder,
    part_name,
    ready_folder,
)
from capreplay.replay.ready.with_index import IndexWithReady
from capreplay.replay.server import ReplayServer
from capreplay.replay.store import INDEX_FILE
from capreplay.util.cache_folder import cache_dir
from tests.support.paths import ROOT
from tests.support.raw_http import raw_get

FIXTURES = ROOT / "snapshots" / "fixtures"


@pytest.fixture
def snapshot(tmp_path: Path) -> Path:
    # a copy of its own, so that its verification record and ready folder are this test's
    copy = tmp_path / "fixtures"
    shutil.copytree(FIXTURES, copy)
    return copy


def _identity(snapshot: Path) -> tuple[str, str]:
    manifest = json.loads((snapshot / "manifest.json").read_text())
    index = next(f for f in manifest["files"] if f["path"] == INDEX_FILE)
    return manifest["snapshot_id"], index["sha256"]


async def _open_and_check(snapshot: Path) -> tuple[ReadyResponses, int]:
    """Open a server, wait for its ready responses, and fetch every ready URL; return them and how many were
    checked against the archive."""
    server = ReplayServer(snapshot, keep_log=False)
    info = await server.start()
    try:
        ready = server.ready.wait(60)
        assert ready is not None
        checked = 0
        for _, entry in server.store.entries():
            if entry.method != "GET" or ready.find(entry.url) is None:
                continue  # (the URL's other recordings: a POST, a HEAD)
            with open(snapshot / entry.filename, "rb") as f:
                archived = read_record(f, entry.offset).payload
            got = await raw_get(info.https_port if entry.url.startswith("https:") else info.http_port, entry.url,
                                tls=entry.url.startswith("https:"))  # fmt: skip
            assert got.endswith(b"\r\n\r\n" + archived) or (not archived and got.endswith(b"\r\n\r\n")), entry.url
            checked += 1
        return ready, checked
    finally:
        await server.stop()


def _truncate(folder: Path) -> None:
    part = folder / part_name(0)
    part.write_bytes(part.read_bytes()[:-100])


def _corrupt(folder: Path) -> None:
    part = folder / part_name(0)
    data = bytearray(part.read_bytes())
    data[len(data) // 2] ^= 0xFF
    part.write_bytes(bytes(data))


def _corrupt_table(folder: Path) -> None:
    with open(folder / TABLE_FILE, "r+b") as f:
        f.seek(70)
        f.write(b"\xff" * 16)


def _remove_table(folder: Path) -> None:
    (folder / TABLE_FILE).unlink()


def _stale_stamps(folder: Path) -> None:
    stamps = json.loads((folder / STAMPS_FILE).read_text())
    stamps["index_sha256"] = "0" * 64  # as if derived from another index
    (folder / STAMPS_FILE).write_text(json.dumps(stamps))


def _remove_folder(folder: Path) -> None:
    shutil.rmtree(folder)


DAMAGES = [_truncate, _corrupt, _corrupt_table, _remove_table, _stale_stamps, _remove_folder]


@pytest.mark.parametrize("damage", DAMAGES, ids=lambda f: f.__name__)
def test_a_damaged_or_missing_ready_folder_is_built_again(snapshot: Path, damage: Callable[[Path], None]) -> None:
    snapshot_id, index_sha256 = _identity(snapshot)
    folder = ready_folder(snapshot_id, index_sha256)
    shutil.rmtree(folder, ignore_errors=True)
    first, checked = asyncio.run(_open_and_check(snapshot))
    assert first.folder == folder and checked > 10
    built = check_folder(folder, snapshot_id, index_sha256)
    assert built is not None
    damage(folder)
    assert check_folder(folder, snapshot_id, index_sha256) is None  # found unfit, never trusted
    again, checked_again = asyncio.run(_open_and_check(snapshot))
    rebuilt = check_folder(folder, snapshot_id, index_sha256)
    assert rebuilt is not None and rebuilt.responses == built.responses and checked_again == checked
    assert again.folder == folder
    assert rebuilt.files != built.files  # new files, not the damaged ones


def test_an_intact_ready_folder_is_reused(snapshot: Path) -> None:
    snapshot_id, index_sha256 = _identity(snapshot)
    asyncio.run(_open_and_check(snapshot))
    before = check_folder(ready_folder(snapshot_id, index_sha256), snapshot_id, index_sha256)
    asyncio.run(_open_and_check(snapshot))
    assert check_folder(ready_folder(snapshot_id, index_sha256), snapshot_id, index_sha256) == before


def test_a_changed_index_gets_a_ready_folder_of_its_own(snapshot: Path) -> None:
    snapshot_id, index_sha256 = _identity(snapshot)
    folder = ready_folder(snapshot_id, index_sha256)
    assert ready_folder(snapshot_id, "f" * 64) != folder and ready_folder("e" * 64, index_sha256) != folder


def test_a_build_in_worker_processes_makes_the_same_responses(
    snapshot: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from capreplay.replay.ready import builder as ready_build

    snapshot_id, index_sha256 = _identity(snapshot)
    one, two = tmp_path / "one", tmp_path / "two"
    ready_build.build_ready(snapshot, snapshot / INDEX_FILE, one, snapshot_id, index_sha256)
    monkeypatch.setattr(ready_build, "PARALLEL_BYTES", 0)  # the fixture's index is small: cut it anyway
    stamps = ready_build.build_ready(snapshot, snapshot / INDEX_FILE, two, snapshot_id, index_sha256, workers=3)
    assert len(stamps.files) == 4  # the table and three parts, one per worker
    serial, parallel = (ReadyResponses(f, s) for f in (one, two) if (s := check_folder(f, snapshot_id, index_sha256)))
    try:
        urls = {entry.url for entry in ready_build_entries(snapshot)}
        found = 0
        for url in urls:
            a, b = serial.find(url), parallel.find(url)
            assert (a is None) == (b is None), url
            if a is not None and b is not None:
                found += 1
                data_a = os.pread(serial.fds[a.part], a.length, a.offset)
                data_b = os.pread(parallel.fds[b.part], b.length, b.offset)
                assert data_a == data_b and (a.status, a.date_at, a.head_length) == (b.status, b.date_at, b.head_length)
        assert found == serial.responses == parallel.responses > 10
    finally:
        serial.close()
        parallel.close()


def ready_build_entries(snapshot: Path) -> list[IndexEntry]:
    """Every entry of the snapshot's index, read with the index's own loader."""
    return load_index(snapshot / INDEX_FILE)


def _responses(folder: Path, snapshot_id: str, index_sha256: str, urls: list[str]) -> dict[str, tuple[object, ...]]:
    """Each URL's ready response: its bytes and what the table says of it (the part it is in aside)."""
    stamps = check_folder(folder, snapshot_id, index_sha256)
    assert stamps is not None
    ready = ReadyResponses(folder, stamps)
    try:
        found = {}
        for url in urls:
            at = ready.find(url)
            if at is not None:
                found[url] = (os.pread(ready.fds[at.part], at.length, at.offset), at.head_length, at.date_at, at.status)
        return found
    finally:
        ready.close()


def _split(snapshot: Path) -> list[str]:
    """The fixture's WARC as three files (its members in turn), so that workers read one each."""
    path = snapshot / "archive" / "data-00000.warc.gz"
    whole = path.read_bytes()
    with open(path, "rb") as f:
        members = [whole[r.offset : r.offset + r.length] for r in iter_records(f, str(path))]
    names = []
    third = -(-len(members) // 3)
    for n in range(3):
        name = f"archive/part-{n}.warc.gz"
        (snapshot / name).write_bytes(b"".join(members[n * third : (n + 1) * third]))
        names.append(name)
    (snapshot / "archive" / "data-00000.warc.gz").unlink()
    return names


@pytest.mark.parametrize("workers", [1, 3])
def test_ready_responses_made_with_the_index_are_those_built_from_it(
    snapshot: Path, tmp_path: Path, workers: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = ["archive/data-00000.warc.gz"]
    if workers > 1:
        monkeypatch.setattr(cdxj, "PARALLEL_BYTES", 0)
        files = _split(snapshot)
    snapshot_id = "f" * 64
    with IndexWithReady(snapshot, files, workers=workers) as built:
        (snapshot / INDEX_FILE).write_bytes(built.index.data)
        index_sha256 = hashlib.sha256(built.index.data).hexdigest()
        placed = built.place(snapshot_id, index_sha256)
    assert placed is not None and len(placed.files) == 1 + min(workers, len(files))
    from_index = tmp_path / "from-index"
    build_ready(snapshot, snapshot / INDEX_FILE, from_index, snapshot_id, index_sha256)
    urls = sorted({json.loads(line.split(" ", 2)[2])["url"] for line in built.index.data.decode().splitlines()})
    made = _responses(ready_folder(snapshot_id, index_sha256), snapshot_id, index_sha256, urls)
    assert made == _responses(from_index, snapshot_id, index_sha256, urls)
    assert len(made) == placed.responses > 10


def test_a_server_opens_the_ready_responses_placed_with_the_index(snapshot: Path) -> None:
    snapshot_id, index_sha256 = _identity(snapshot)
    with IndexWithReady(snapshot, ["archive/data-00000.warc.gz"]) as built:
        assert built.index.data == (snapshot / INDEX_FILE).read_bytes()
        placed = built.place(snapshot_id, index_sha256)
    opened = open_ready(snapshot, snapshot_id, index_sha256)
    assert opened is not None
    try:
        assert opened.stamps == placed  # opened as placed, not built again
    finally:
        opened.close()


def _building() -> list[Path]:
    return list((cache_dir() / "ready").glob(".building-*"))


def test_parts_not_placed_are_removed(snapshot: Path) -> None:
    with IndexWithReady(snapshot, ["archive/data-00000.warc.gz"]):
        assert len(_building()) == 1
    assert _building() == []
    (snapshot / "archive" / "bad.warc.gz").write_bytes(b"not a warc")
    with pytest.raises(ArchiveError, match="not a WARC file"):
        IndexWithReady(snapshot, ["archive/data-00000.warc.gz", "archive/bad.warc.gz"])
    assert _building() == []


def test_ready_responses_that_cannot_be_written_are_given_up_not_the_index(snapshot: Path) -> None:
    snapshot_id, index_sha256 = _identity(snapshot)
    shutil.rmtree(ready_folder(snapshot_id, index_sha256), ignore_errors=True)
    # a file size limit makes the part file's writes fail (EFBIG) as a full disk would
    old_handler = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    old_limit = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (4096, old_limit[1]))
    try:
        built = IndexWithReady(snapshot, ["archive/data-00000.warc.gz"])
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, old_limit)
        signal.signal(signal.SIGXFSZ, old_handler)
    with built:
        assert built.index.data == (snapshot / INDEX_FILE).read_bytes()
        assert not built.index.sinks_whole
        assert built.place(snapshot_id, index_sha256) is None
    assert not ready_folder(snapshot_id, index_sha256).exists() and _building() == []
