"""A verified snapshot opened for replay: its index, a matcher over it, and records read by offset.

A revisit (from an imported WARC) is served with its own HTTP status and headers when it has them and the
payload of the response it repeats, both read by the offsets the index resolved; a revisit without HTTP
headers, or one recording a ``304 Not Modified``, is served as its original was. A revisit whose original
is not in the snapshot is not offered to the matcher at all: there is no payload to serve for it.
"""

from __future__ import annotations

import base64
from collections import OrderedDict
from pathlib import Path
from typing import BinaryIO
from urllib.parse import urlsplit

from capreplay.archive.index import IndexEntry, build_index, load_index
from capreplay.archive.manifest import verify_snapshot
from capreplay.archive.reader import StoredRecord, read_record
from capreplay.errors import ArchiveError
from capreplay.models.manifest import Manifest
from capreplay.replay.matching import Candidate, Matcher
from capreplay.replay.response import Outgoing, replay_headers

INDEX_FILE = "index.cdxj"
CACHE_BYTES = 64 * 1024 * 1024


def _post_body(entry: IndexEntry) -> bytes | None:
    # Bodies too large to keep in the index are stored by digest; such requests match by method and URL.
    if entry.post_body is None or entry.post_body.startswith("sha256:"):
        return None
    return base64.b64decode(entry.post_body)


def origin_of(url: str) -> tuple[str, str, int]:
    """``(scheme, host, port)`` of a URL, with the scheme's default port filled in."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    return scheme, (parts.hostname or "").lower(), parts.port or (443 if scheme == "https" else 80)


def _check_bounds(root: Path, entries: list[IndexEntry]) -> None:
    """Every indexed record must lie inside its file: an index that points past the end is refused."""
    sizes: dict[str, int] = {}
    for e in entries:
        places = [(e.filename, e.offset, e.length)]
        if e.orig_filename is not None and e.orig_offset is not None:
            places.append((e.orig_filename, e.orig_offset, e.orig_length or 0))
        for filename, offset, length in places:
            if filename not in sizes:
                path = root / filename
                if not path.is_file():
                    raise ArchiveError("the index names this file but it is missing", path)
                sizes[filename] = path.stat().st_size
            if offset + length > sizes[filename]:
                raise ArchiveError(
                    f"record at offset {offset} ({length} bytes) ends past the end of the file "
                    f"({sizes[filename]} bytes): truncated",
                    root / filename,
                )


def outgoing(record: StoredRecord, original: StoredRecord | None = None) -> Outgoing:
    """What replay sends for ``record``; for a revisit, ``original`` is the response it repeats.

    A revisit's own status and headers describe this capture, so they win when it has them; the body is
    always the original's. A 304 revisit (the "server-not-modified" profile) would send a browser that
    asked unconditionally a 304, so it is served as its original instead.
    """
    if original is None:
        return Outgoing(record.status or 200, record.reason or "", replay_headers(record.http_headers), record.payload)
    head = record if record.status is not None and record.status != 304 else original
    return Outgoing(head.status or 200, head.reason or "", replay_headers(head.http_headers), original.payload)


class SnapshotStore:
    """Everything replay needs from one snapshot folder. The manifest is checked first: no match, no replay."""

    def __init__(self, root: Path, *, cache_bytes: int = CACHE_BYTES) -> None:
        self.root = root
        self.manifest: Manifest = verify_snapshot(root)
        listed = [f.path for f in self.manifest.files]
        if INDEX_FILE in listed:
            self.entries = load_index(root / INDEX_FILE)
        else:
            # An interrupted capture has no index yet; it is derived from the WARCs, so build it here.
            self.entries = build_index(root, sorted(p for p in listed if p.startswith("archive/")))
        _check_bounds(root, self.entries)
        self.matcher = Matcher(
            Candidate(method=e.method, url=e.url, body=_post_body(e), seq=e.seq, ref=e)
            for e in self.entries
            if not e.unresolved_revisit
        )
        self._origins: list[tuple[str, str, int]] | None = None
        self._files: dict[str, BinaryIO] = {}
        self._cache: OrderedDict[tuple[str, int], Outgoing] = OrderedDict()
        self._cache_bytes = 0
        self._cache_limit = cache_bytes

    @property
    def snapshot_id(self) -> str:
        """The id of the snapshot being served."""
        return self.manifest.snapshot_id

    def origins(self) -> list[tuple[str, str, int]]:
        """Every ``(scheme, host, port)`` the snapshot holds a response for (computed once: a pass over the index)."""
        if self._origins is None:
            self._origins = sorted({origin_of(e.url) for e in self.entries})
        return self._origins

    def hosts(self) -> list[str]:
        """Every hostname the snapshot holds a response for."""
        return sorted({host for _, host, _ in self.origins()})

    def response(self, entry: IndexEntry) -> Outgoing:
        """The archived response of ``entry``, read by offset (never by scanning), cached within a bound."""
        key = (entry.filename, entry.offset)
        hit = self._cache.get(key)
        if hit is not None:
            self._cache.move_to_end(key)
            return hit
        record = self._read(entry.filename, entry.offset)
        original = None
        if entry.orig_filename is not None and entry.orig_offset is not None:
            original = self._read(entry.orig_filename, entry.orig_offset)
        out = outgoing(record, original)
        if len(out.body) <= self._cache_limit // 8:
            self._cache[key] = out
            self._cache_bytes += len(out.body)
            while self._cache_bytes > self._cache_limit:
                _, old = self._cache.popitem(last=False)
                self._cache_bytes -= len(old.body)
        return out

    def _read(self, filename: str, offset: int) -> StoredRecord:
        stream = self._files.get(filename)
        if stream is None:
            stream = self._files[filename] = (self.root / filename).open("rb")
        return read_record(stream, offset)

    def close(self) -> None:
        """Close the archive files."""
        for stream in self._files.values():
            stream.close()
        self._files.clear()
