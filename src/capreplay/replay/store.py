"""A snapshot opened for replay, checked against its manifest: its index, a matcher over it, records by offset.

A revisit (from an imported WARC) is served with its own HTTP status and headers when it has them and the
payload of the response it repeats, both read by the offsets the index resolved; a revisit without HTTP
headers, or one recording a ``304 Not Modified``, is served as its original was. A revisit whose original
is not in the snapshot is not offered to the matcher at all: there is no payload to serve for it.
"""

from __future__ import annotations

import contextlib
import os
from collections import OrderedDict
from collections.abc import Iterator
from pathlib import Path

from capreplay.archive.index.cdxj import IndexEntry, build_index, format_index
from capreplay.archive.index.lookup import SortedIndex, check_index
from capreplay.archive.snapshot.check_stamp import VerifiedRecord, load_record, save_record, stamp, unchanged_files
from capreplay.archive.snapshot.manifest import check_snapshot, load_manifest
from capreplay.archive.warc.scan import read_record_at
from capreplay.archive.warc.stored import StoredRecord
from capreplay.errors import ArchiveError, os_reason
from capreplay.models.manifest import Manifest
from capreplay.replay.candidates import IndexCandidates
from capreplay.replay.matching import Matcher
from capreplay.replay.response import Outgoing, replay_headers

INDEX_FILE = "index.cdxj"
CACHE_BYTES = 32 * 1024 * 1024


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
    """Everything replay needs from one snapshot folder. The manifest is checked first: no match, no replay.

    Opening costs no work per archived record: the files are checked against the manifest (hashing only
    those the verification record in the user's cache cannot vouch for), the index is memory-mapped and
    searched in place, and its one full check (every line valid, sorted, inside its file) is remembered
    with the files it was made on.
    """

    def __init__(self, root: Path, *, cache_bytes: int = CACHE_BYTES, strict: bool | None = None) -> None:
        """Open ``root``; ``strict`` turns the nearest-query rule off (None: as the manifest's replay settings say)."""
        self.root = root
        self.manifest: Manifest = load_manifest(root)
        listed = {f.path: f.sha256 for f in self.manifest.files}
        record = load_record(root)
        if record is not None and record.snapshot_id != self.manifest.snapshot_id:
            record = None
        unchanged = unchanged_files(root, record, listed)
        # Identities are taken before hashing, so a write during the check cannot be recorded as checked.
        stamps = {rel: known for rel in unchanged if record and (known := record.files.get(rel))}
        for rel, sha256 in listed.items():
            if rel not in unchanged:
                with contextlib.suppress(OSError):  # a missing file is reported by the check below
                    stamps[rel] = stamp(root / rel, sha256)
        check_snapshot(root, self.manifest, unchanged=unchanged)
        if INDEX_FILE in listed:
            self.index = SortedIndex.open(root / INDEX_FILE)
        else:
            # An interrupted capture has no index yet; it is derived from the WARCs, so build it here.
            built = build_index(root, sorted(p for p in listed if p.startswith("archive/")))
            self.index = SortedIndex(format_index(built), f"{root / INDEX_FILE} (built in memory)")
        origins = record.origins if record is not None and INDEX_FILE in unchanged else None
        if origins is None:
            origins = check_index(self.index, root, {f.path: f.size for f in self.manifest.files})
        self._origins = origins
        fresh = VerifiedRecord(snapshot_id=self.manifest.snapshot_id, files=stamps, origins=origins)
        if fresh != record:
            save_record(root, fresh)
        self.strict = self.manifest.replay.strict if strict is None else strict
        self.matcher = Matcher(IndexCandidates(self.index), nearest_query=not self.strict,
                               strict_hosts=frozenset(self.manifest.replay.strict_hosts))  # fmt: skip
        self._files: dict[str, int] = {}
        self._cache: OrderedDict[int, Outgoing] = OrderedDict()
        self._cache_bytes = 0
        self._cache_limit = cache_bytes

    @property
    def snapshot_id(self) -> str:
        """The id of the snapshot being served."""
        return self.manifest.snapshot_id

    def origins(self) -> list[tuple[str, str, int]]:
        """Every ``(scheme, host, port)`` the snapshot holds a response for."""
        return self._origins

    def hosts(self) -> list[str]:
        """Every hostname the snapshot holds a response for."""
        return sorted({host for _, host, _ in self.origins()})

    def entries(self) -> Iterator[tuple[int, IndexEntry]]:
        """Every index entry with its ``ref`` for :meth:`response`, in index order (parses the whole index:
        for tools and tests, not replay)."""
        for offset, _ in self.index:
            yield offset, self.index.entry(offset)

    def response(self, ref: int) -> Outgoing:
        """The archived response of the index line at offset ``ref`` (a matched candidate's ``ref``), read
        by offset (never by scanning), cached within a bound."""
        hit = self._cache.get(ref)
        if hit is not None:
            self._cache.move_to_end(ref)
            return hit
        entry = self.index.entry(ref)
        record = self._read(entry.filename, entry.offset, entry.length)
        original = None
        if entry.orig_filename is not None and entry.orig_offset is not None and entry.orig_length is not None:
            original = self._read(entry.orig_filename, entry.orig_offset, entry.orig_length)
        out = outgoing(record, original)
        if len(out.body) <= self._cache_limit // 8:
            self._cache[ref] = out
            self._cache_bytes += len(out.body)
            while self._cache_bytes > self._cache_limit:
                _, old = self._cache.popitem(last=False)
                self._cache_bytes -= len(old.body)
        return out

    def record(self, ref: int) -> StoredRecord:
        """The archived response record of the index line at ``ref`` as stored (its id, digests, payload), for
        evidence; not cached."""
        entry = self.index.entry(ref)
        return self._read(entry.filename, entry.offset, entry.length)

    def request_record(self, ref: int) -> StoredRecord | None:
        """The archived request record paired with the index line at ``ref`` (None when the index has none)."""
        entry = self.index.entry(ref)
        if entry.req_offset is None or entry.req_length is None:
            return None
        return self._read(entry.req_filename or entry.filename, entry.req_offset, entry.req_length)

    def _read(self, filename: str, offset: int, length: int) -> StoredRecord:
        fd = self._files.get(filename)
        path = self.root / filename
        if fd is None:
            try:
                fd = self._files[filename] = os.open(path, os.O_RDONLY)
            except OSError as e:
                raise ArchiveError(f"cannot open: {os_reason(e)}", where=path) from e
        return read_record_at(fd, offset, length, name=str(path))

    def close(self) -> None:
        """Close the archive files and the index."""
        for fd in self._files.values():
            os.close(fd)
        self._files.clear()
        self.index.close()
