"""Building the ready responses of :mod:`capreplay.replay.ready.responses` from a snapshot's index and WARCs.

Which requests get a ready response is decided exactly as :class:`capreplay.replay.matching.Matcher` would
decide them: the index lines of one SURT key are made into the same candidates and grouped under the
same exact key; a key with one recording, a ``GET`` without a body, that is not a revisit, gets one, under
its archived URL. A request for that very URL string is then answered by that recording whatever the
matcher's state (a single recording is never "used up"), with no JSONP rename (the callback is the
archived one). Everything else (repeats, fuzzy and nearest-query matches, revisits, statuses that carry no
body, ``HEAD``, ``Range``, event streams) stays with the general path.

The head is what aiohttp writes for ``web.Response(status, reason, headers, body)`` answering an HTTP/1.1
keep-alive ``GET`` (:func:`ready_head`): the archived headers as replay keeps them, then
``Content-Length``, ``Content-Type`` when the archive has none and the body is not empty, ``Date`` when the
archive has none (filled in when sending), ``Server`` when the archive has none.

The index is cut into as many slices as there are workers, each slice ending where a SURT key ends, and
each worker process reads its slice's records and writes its own part file; the parent writes the table.
"""

from __future__ import annotations

import contextlib
import json
import multiprocessing
import os
import shutil
from collections.abc import Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import BinaryIO

from aiohttp.http import SERVER_SOFTWARE
from aiohttp.http_writer import _serialize_headers
from aiohttp.web_response import REASON_PHRASES
from multidict import CIMultiDict

from capreplay.archive.snapshot.check_stamp import identity
from capreplay.archive.warc.event_stream import is_event_stream
from capreplay.archive.warc.scan import read_record_at
from capreplay.archive.warc.stored import StoredRecord
from capreplay.errors import ArchiveError
from capreplay.replay.candidates import _candidate
from capreplay.replay.matching import _build, exact_key
from capreplay.replay.ready.responses import (
    DATE_PLACEHOLDER,
    EMPTY,
    FORMAT,
    HEADER,
    HEADER_BYTES,
    MAGIC,
    SLOT,
    STAMPS_FILE,
    TABLE_FILE,
    ReadyResponses,
    ReadyStamps,
    check_folder,
    part_name,
    ready_folder,
    url_digest,
)
from capreplay.replay.ready.work_folders import WorkFolder
from capreplay.replay.response import Outgoing, header
from capreplay.replay.store import outgoing
from capreplay.util.files import write_atomic

PARALLEL_BYTES = 4 * 1024 * 1024
"""An index smaller than this is read in the calling process: worker start-up would cost more."""

_CHUNK = 4 * 1024 * 1024
_NO_BODY = frozenset({204, 304})

Slot = tuple[bytes, int, int, int, int, int, int]  # digest, offset, length, head, date_at, status, part


def ready_head(out: Outgoing) -> tuple[bytes, int] | None:
    """The status line and headers aiohttp writes before ``out.body`` for an HTTP/1.1 keep-alive ``GET``, and
    the offset of the ``Date`` value to fill in (-1: the archive has one); None when aiohttp would send
    something else (no body for the status, or it would refuse the response)."""
    status = out.status
    if not 200 <= status <= 599 or status in _NO_BODY:
        return None
    reason = out.reason or REASON_PHRASES.get(status, "")
    if "\r" in reason or "\n" in reason:
        return None
    made = response_head(f"HTTP/1.1 {status} {reason}", out.headers, out.body, plain=True)
    if made is None:
        return None
    head, dated = made
    if not dated:
        return head, -1
    at = head.rfind(b"\r\nDate: " + DATE_PLACEHOLDER.encode() + b"\r\n")
    return (head, at + len(b"\r\nDate: ")) if at >= 0 else None


def response_head(
    status_line: str, headers: list[tuple[str, str]], body: bytes, *, plain: bool = False
) -> tuple[bytes, bool] | None:
    """The head aiohttp writes for ``web.Response`` with these headers and body after ``status_line``, and
    whether it added a ``Date``; None when aiohttp would refuse the response (a control character) or treat it
    differently (a header replay drops). With ``plain``, when no name holds a line break, the headers are
    handed to aiohttp's serializer as they are, with its additions at the end, instead of through a
    ``CIMultiDict``: the same bytes (a test holds the two ways together), a microsecond less a response."""
    if plain:
        # "\n"-joined and lower-cased at once (lower-casing goes character by character), the names answer each
        # case-insensitive question as the CIMultiDict would, while none holds a line break
        names = "\n" + "\n".join([name for name, _ in headers]).lower() + "\n"
        if names.count("\n") == len(headers) + 1:
            if "\ncontent-length\n" in names or "\ntransfer-encoding\n" in names or "\nconnection\n" in names:
                return None  # replay drops them; were one there, aiohttp would treat the response differently
            pairs = _Pairs(headers)
            pairs.append(("Content-Length", str(len(body))))
            if body and "\ncontent-type\n" not in names:
                pairs.append(("Content-Type", "application/octet-stream"))
            dated = "\ndate\n" not in names
            if dated:
                pairs.append(("Date", DATE_PLACEHOLDER))
            if "\nserver\n" not in names:
                pairs.append(("Server", SERVER_SOFTWARE))
            return _serialized(status_line, pairs, dated)
    made: CIMultiDict[str] = CIMultiDict(headers)
    if "Content-Length" in made or "Transfer-Encoding" in made or "Connection" in made:
        return None
    made["Content-Length"] = str(len(body))
    if body:
        made.setdefault("Content-Type", "application/octet-stream")
    dated = "Date" not in made
    if dated:
        made["Date"] = DATE_PLACEHOLDER
    made.setdefault("Server", SERVER_SOFTWARE)
    return _serialized(status_line, made, dated)


class _Pairs(list[tuple[str, str]]):
    """Header pairs as aiohttp's serializer reads a CIMultiDict: through ``items()``."""

    def items(self) -> _Pairs:
        return self


def _serialized(status_line: str, headers: CIMultiDict[str] | _Pairs, dated: bool) -> tuple[bytes, bool] | None:
    try:
        return _serialize_headers(status_line, headers), dated  # type: ignore[arg-type]  # it asks only items()
    except ValueError:  # a control character: aiohttp refuses the response, so the general path answers
        return None


def write_ready(sink: BinaryIO, offset: int, part: int, url: str, record: StoredRecord) -> Slot | None:
    """Write the ready response to a ``GET url`` answered by ``record`` at ``offset`` of part file ``part``
    (open as ``sink``) and return its slot; None, writing nothing, when it must stay with the general path."""
    out = outgoing(record)  # the general path's own conversion, so the bytes agree
    if is_event_stream(header(out.headers, "Content-Type")):
        return None  # sent paced, event by event (capreplay.replay.event_source), never in one piece
    made = ready_head(out)
    digest = url_digest(url)
    if made is None or digest is None or len(made[0]) + len(out.body) >= 1 << 32:
        return None
    head, date_at = made
    sink.write(head)
    sink.write(out.body)
    return (digest, offset, len(head) + len(out.body), len(head), date_at, out.status, part)


def _lines(fd: int, start: int, end: int) -> Iterator[tuple[int, bytes]]:
    """``(offset, line)`` of the index lines starting in ``[start, end)`` (``start`` is a line start), read a
    few megabytes at a time: a worker holds one chunk of a million-record index, not its slice."""
    pos, rest, read_at = start, b"", start
    while pos < end:
        chunk = os.pread(fd, _CHUNK, read_at)
        read_at += len(chunk)
        data = rest + chunk
        if chunk:
            last = data.rfind(b"\n")
            if last < 0:
                rest = data
                continue
            lines, rest = data[:last].split(b"\n"), data[last + 1 :]
        else:
            lines, rest = ([data] if data else []), b""
        for line in lines:
            if pos >= end:
                return
            body = line.rstrip(b"\r")
            if body.strip() and not body.startswith(b"!"):
                yield pos, body
            pos += len(line) + 1
        if not chunk:
            return


def _groups(lines: Iterable[tuple[int, bytes]]) -> Iterator[list[tuple[int, bytes]]]:
    """The lines cut into runs of one SURT key (sorted, so each key's lines are together)."""
    group: list[tuple[int, bytes]] = []
    previous = None
    for offset, line in lines:
        key = line.split(b" ", 1)[0]
        if key != previous and group:
            yield group
            group = []
        previous = key
        group.append((offset, line))
    if group:
        yield group


def _chosen(group: list[tuple[int, bytes]]) -> list[tuple[str, int, dict[str, object]]]:
    """The ``(url, offset, index fields)`` of each recording in one key's lines (``(offset, line)``, offsets
    unique) that gets a ready response."""
    if len(group) == 1:  # most keys: one recording, which is its exact key's only one
        entry = json.loads(group[0][1].split(b" ", 2)[2])
        if entry["method"] == "GET" and not entry.get("post_body") and entry.get("revisit_of") is None:
            return [(entry["url"], group[0][0], entry)]
        return []
    fields = {offset: json.loads(line.split(b" ", 2)[2]) for offset, line in group}
    candidates = [c for offset, line in group if (c := _candidate(offset, line))]
    chosen = []
    for found in _build(sorted(candidates, key=lambda c: c.seq), exact_key).values():
        cand = found[0]
        if len(found) == 1 and cand.method == "GET" and not cand.body:
            offset = int(cand.ref)  # type: ignore[call-overload]  # _candidate's ref: the line's offset
            if fields[offset].get("revisit_of") is None:
                chosen.append((cand.url, offset, fields[offset]))
    return chosen


def _slice(job: tuple[Path, Path, int, int, Path, int]) -> list[Slot]:
    """Write the ready responses of one slice of the index into ``part``; return their slots."""
    root, index_path, start, end, part, number = job
    fds: dict[str, int] = {}
    slots: list[Slot] = []
    index_fd = os.open(index_path, os.O_RDONLY)
    try:
        with open(part, "wb") as sink:
            offset = 0
            for group in _groups(_lines(index_fd, start, end)):
                for url, _, entry in _chosen(group):
                    filename = str(entry["filename"])
                    fd = fds.get(filename)
                    if fd is None:
                        fd = fds[filename] = os.open(root / filename, os.O_RDONLY)
                    try:
                        record = read_record_at(fd, int(entry["offset"]), int(entry["length"]), name=filename)  # type: ignore[call-overload]
                    except ArchiveError:
                        continue  # the general path answers it (with its 502) as before
                    slot = write_ready(sink, offset, number, url, record)
                    if slot is not None:
                        slots.append(slot)
                        offset += slot[2]
    finally:
        os.close(index_fd)
        for fd in fds.values():
            os.close(fd)
    return slots


def _cuts(index_path: Path, parts: int) -> list[tuple[int, int]]:
    """``parts`` byte ranges of the index, each starting at a line whose key differs from the line before."""
    size = index_path.stat().st_size
    fd = os.open(index_path, os.O_RDONLY)
    try:
        starts = [0]
        for n in range(1, parts):
            pos = _key_start(fd, size * n // parts, size)
            if pos > starts[-1]:
                starts.append(pos)
    finally:
        os.close(fd)
    ends = [*starts[1:], size]
    return [(a, b) for a, b in zip(starts, ends, strict=True) if b > a]


def _key_start(fd: int, pos: int, size: int) -> int:
    """The first line start at or after ``pos`` whose key differs from its previous line's."""
    data = os.pread(fd, min(size - pos, 1 << 20), pos)
    newline = data.find(b"\n")
    if newline < 0:
        return size
    previous_key = None
    at = newline + 1
    while at < len(data):
        end = data.find(b"\n", at)
        if end < 0:
            return size if pos + len(data) >= size else pos + at  # a key run longer than 1 MB: cut mid-run
        key = data[at:end].split(b" ", 1)[0]
        if previous_key is not None and key != previous_key:
            return pos + at
        previous_key = key
        at = end + 1
    return size


def build_ready(
    root: Path, index_path: Path, folder: Path, snapshot_id: str, index_sha256: str, *, workers: int | None = None
) -> ReadyStamps:
    """Write the ready responses of the snapshot ``root`` into a new ``folder`` (renamed into place only when
    whole, so a folder under that name is always complete)."""
    size = index_path.stat().st_size
    count = 1 if size < PARALLEL_BYTES else max(1, workers or len(os.sched_getaffinity(0)))
    building = WorkFolder(folder.parent)
    work = building.path
    try:
        jobs = [(root, index_path, a, b, work / part_name(n), n) for n, (a, b) in enumerate(_cuts(index_path, count))]
        if len(jobs) > 1:
            # spawn, not fork: the caller may run threads (a capture, a test's event loop)
            with ProcessPoolExecutor(len(jobs), mp_context=multiprocessing.get_context("spawn")) as pool:
                found = list(pool.map(_slice, jobs))
        else:
            found = [_slice(job) for job in jobs]
        stamps = finish_folder(
            work, [slot for part in found for slot in part], len(jobs), folder, snapshot_id, index_sha256
        )
    finally:
        building.close()
    return stamps


def finish_folder(
    work: Path, slots: list[Slot], parts: int, folder: Path, snapshot_id: str, index_sha256: str
) -> ReadyStamps:
    """Write the table of ``slots`` and the stamps into ``work`` (which holds the ``parts`` part files, or fewer:
    the missing ones are made empty), then rename it to ``folder``, replacing any folder there."""
    table_size = max(8, 1 << (2 * len(slots)).bit_length())
    write_atomic(work / TABLE_FILE, _table(slots, table_size, parts))
    names = [TABLE_FILE, *(part_name(n) for n in range(parts))]
    for name in names[1:]:
        if not (work / name).exists():
            (work / name).touch()
    stamps = ReadyStamps(
        snapshot_id=snapshot_id,
        index_sha256=index_sha256,
        responses=len(slots),
        files={name: identity(work / name) for name in names},
    )
    write_atomic(work / STAMPS_FILE, stamps.model_dump_json().encode("utf-8"))
    if folder.exists():
        shutil.rmtree(folder)
    os.rename(work, folder)  # renaming the folder leaves its files' identities as stamped
    return stamps


def _table(slots: list[Slot], size: int, parts: int) -> bytes:
    """The header and the open-addressing hash table of ``slots`` (``size`` slots, a power of two)."""
    table = bytearray(HEADER_BYTES + size * SLOT.size)
    HEADER.pack_into(table, 0, MAGIC, FORMAT, parts, size)
    mask = size - 1
    taken = bytearray(size)  # which slots hold a key (one that is not EMPTY): cheaper to ask than the table
    for slot in slots:
        at = int.from_bytes(slot[0][:8], "little") & mask
        while taken[at]:
            at = (at + 1) & mask  # bounded: the table is at most half full
        SLOT.pack_into(table, HEADER_BYTES + at * SLOT.size, *slot)
        taken[at] = slot[0] != EMPTY
    return bytes(table)


def open_ready(root: Path, snapshot_id: str, index_sha256: str, *, workers: int | None = None) -> ReadyResponses | None:
    """The ready responses of the snapshot ``root`` (whose ``index.cdxj`` has ``index_sha256``), built when
    missing or stale; None when the cache folder cannot be written (the general path answers everything)."""
    folder = ready_folder(snapshot_id, index_sha256)
    stamps = check_folder(folder, snapshot_id, index_sha256)
    if stamps is None:
        try:
            build_ready(root, root / "index.cdxj", folder, snapshot_id, index_sha256, workers=workers)
        except OSError:
            return None
        stamps = check_folder(folder, snapshot_id, index_sha256)
        if stamps is None:
            return None
    with contextlib.suppress(OSError):
        return ReadyResponses(folder, stamps)
    return None
