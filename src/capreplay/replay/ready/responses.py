"""Ready-to-send responses: a derived file of whole HTTP responses that replay sends by offset.

Answering a request from the WARCs costs an index lookup, a line parse, a read, an inflate and a response
built in Python. For the requests that matter most (a ``GET`` of an archived URL, spelled as archived, with
one recording) the answer never changes, so it is worked out once: the status line, the headers exactly as
the aiohttp server writes them and the body, one after the other, and a hash table from the URL to where
that response lies. A request then costs one ``pread`` of the table and one ``sendfile`` (see
:mod:`capreplay.replay.ready.send`); the page cache, not the server's heap, holds the bytes.

Where it lives: the snapshot folder is read-only content that its manifest hashes, so nothing may be added
to it. The file is derived state, like the verification record (:mod:`capreplay.archive.snapshot.check_stamp`),
so it lives in the user's cache folder, under ``ready/``, in a folder named by what it was derived from:
the sha256 of the snapshot's index (which the manifest vouches for), the snapshot id and this format's
version. A changed index or snapshot gets another name, so a stale file is never even looked at.

It is never trusted blindly: its ``stamps.json`` (written before the folder is renamed into place, so a
folder under the final name is complete) names the index sha256 and snapshot id it was made from and the
identity (size, modification and change times, inode, device) of each of its files at the end of the build.
Any write to a file changes its change time, which no ordinary tool sets back; a truncated, corrupted,
replaced or missing file, or a table whose size does not add up, makes the folder stale, and it is built
again (:func:`capreplay.replay.ready.builder.open_ready`). Deleting ``ready/`` in the cache folder only costs
the next ``serve`` the build.
"""

from __future__ import annotations

import hashlib
import os
import struct
from pathlib import Path
from typing import NamedTuple

from pydantic import BaseModel, ConfigDict, ValidationError

from capreplay.archive.snapshot.check_stamp import FileIdentity, identity
from capreplay.util.cache_folder import cache_dir

FORMAT = 2
"""Version of the layout below; part of the folder's name. 2: event streams are never made ready (they are sent
paced, :mod:`capreplay.replay.event_source`), so a folder of format 1 that holds one is never looked at."""

MAGIC = b"CAPREADY"
HEADER = struct.Struct("<8sIIQ")  # magic, format, parts, slots
HEADER_BYTES = 64
SLOT = struct.Struct("<16sQIIiHBx")  # url digest, offset, length, head length, date offset, status, part
EMPTY = bytes(16)
PROBE = 8
"""Slots read per ``pread``: the table is at most half full, so a lookup almost never needs a second."""

DATE_PLACEHOLDER = "Thu, 01 Jan 1970 00:00:00 GMT"
"""Stands for the ``Date`` header aiohttp adds to a response that has none: always 29 characters."""

TABLE_FILE = "table.bin"
STAMPS_FILE = "stamps.json"


def url_digest(url: str) -> bytes | None:
    """The 128-bit key of ``url`` in the table (None if it cannot be encoded). Two URLs share a key with
    probability 2**-128 per pair: never, for any archive."""
    try:
        return hashlib.blake2b(url.encode("utf-8", "surrogatepass"), digest_size=16).digest()
    except UnicodeEncodeError:
        return None


def part_name(number: int) -> str:
    """The file of responses number ``number`` (one per build worker)."""
    return f"part-{number:02d}.bin"


class ReadyStamps(BaseModel):
    """What a ready folder was derived from and the identity of each of its files when it was finished."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    format: int = FORMAT
    snapshot_id: str
    index_sha256: str
    """sha256 of the snapshot's ``index.cdxj`` as its manifest lists it."""
    responses: int
    """How many ready responses the table holds."""
    files: dict[str, FileIdentity]


def ready_folder(snapshot_id: str, index_sha256: str) -> Path:
    """Where the ready responses derived from this index of this snapshot are kept."""
    return cache_dir() / "ready" / f"{index_sha256}-{snapshot_id[:16]}-v{FORMAT}"


class Ready(NamedTuple):
    """Where one ready response lies."""

    part: int
    offset: int
    length: int
    """Status line, headers and body."""
    head_length: int
    """Status line and headers, with the blank line."""
    date_at: int
    """Offset in the head of the ``Date`` value to fill in when sending, or -1 (the archive has one)."""
    status: int


class ReadyResponses:
    """An opened ready folder: ``find(url)`` is one ``pread``; ``fileobj(part)`` is what ``sendfile`` reads."""

    def __init__(self, folder: Path, stamps: ReadyStamps) -> None:
        """Open ``folder`` after :func:`check_folder` found it whole."""
        self.folder = folder
        self.stamps = stamps
        self._table = os.open(folder / TABLE_FILE, os.O_RDONLY)
        _, _, parts, slots = HEADER.unpack(os.pread(self._table, HEADER.size, 0))
        self._slots = slots
        self._mask = slots - 1
        self.parts = [open(folder / part_name(n), "rb", buffering=0) for n in range(parts)]  # noqa: SIM115
        self.fds = [f.fileno() for f in self.parts]

    @property
    def responses(self) -> int:
        """How many responses are ready."""
        return self.stamps.responses

    def find(self, url: str) -> Ready | None:
        """Where the ready response to a plain ``GET url`` lies, or None (then the general path answers)."""
        key = url_digest(url)
        if key is None or not self._slots:
            return None
        at = int.from_bytes(key[:8], "little") & self._mask
        for _ in range(0, self._slots, PROBE):  # bounded: at most half the slots are used
            count = min(PROBE, self._slots - at)
            block = os.pread(self._table, count * SLOT.size, HEADER_BYTES + at * SLOT.size)
            for start in range(0, len(block), SLOT.size):
                digest = block[start : start + 16]
                if digest == key:
                    _, offset, length, head, date_at, status, part = SLOT.unpack_from(block, start)
                    return Ready(part, offset, length, head, date_at, status)
                if digest == EMPTY:
                    return None
            at = (at + count) & self._mask
        return None

    def close(self) -> None:
        """Close the table and the parts."""
        if self._table >= 0:
            os.close(self._table)
            self._table = -1
        for f in self.parts:
            f.close()
        self.parts = []
        self.fds = []


def check_folder(folder: Path, snapshot_id: str, index_sha256: str) -> ReadyStamps | None:
    """The stamps of ``folder`` when it is whole and was derived from this index of this snapshot, else None
    (missing, from another build, truncated, written to since, or a table that does not add up)."""
    try:
        stamps = ReadyStamps.model_validate_json((folder / STAMPS_FILE).read_bytes())
    except (OSError, ValueError, ValidationError):
        return None
    if stamps.format != FORMAT or stamps.snapshot_id != snapshot_id or stamps.index_sha256 != index_sha256:
        return None
    try:
        for name, known in stamps.files.items():
            if identity(folder / name) != known:
                return None
        with open(folder / TABLE_FILE, "rb") as f:
            magic, fmt, parts, slots = HEADER.unpack(f.read(HEADER.size))
    except (OSError, struct.error):
        return None
    expected = {TABLE_FILE, *(part_name(n) for n in range(parts))}
    if magic != MAGIC or fmt != FORMAT or set(stamps.files) != expected or slots & (slots - 1):
        return None
    if stamps.files[TABLE_FILE].size != HEADER_BYTES + slots * SLOT.size or stamps.responses * 2 > slots:
        return None
    return stamps
