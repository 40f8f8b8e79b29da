"""Finding the event times of an archived event stream: the ``metadata`` record that names its response.

The layout (:mod:`capreplay.archive.warc.live`) links the two by ``WARC-Concurrent-To`` only; the index lists
responses, not metadata. A capture writes the metadata record right after its response, so the record that
follows the response is read first (one small read); otherwise (a WARC some other tool wrote) the response's
file is scanned once for its ``event-stream`` metadata records, and what was found is kept for the store's life.
A stream with no metadata record at all (one imported from another tool) gets a timeline made from its body:
every event at once, cut when the response record says ``WARC-Truncated``.
"""

from __future__ import annotations

import mmap
import os
import weakref
from pathlib import Path

from capreplay.archive.warc.event_stream import event_ends
from capreplay.archive.warc.live import (
    EVENT_STREAM_RESOURCE,
    RESOURCE_TYPE_HEADER,
    TRUNCATED_HEADER,
    read_stream_timeline,
)
from capreplay.archive.warc.scan import scan_blocks
from capreplay.archive.warc.stored import StoredRecord
from capreplay.errors import ArchiveError, os_reason
from capreplay.models.live_traffic import StreamEvent, StreamTimeline
from capreplay.replay.store import SnapshotStore

_NEXT_BYTES = 1 << 20
"""How much is read after a response to find its metadata record (a timeline of thousands of events fits)."""

_SCANNED: weakref.WeakKeyDictionary[SnapshotStore, dict[str, dict[str, tuple[bytes, str | None]]]] = (
    weakref.WeakKeyDictionary()
)
"""Per store and WARC file: response record id -> (metadata payload, its WARC-Truncated), once scanned."""


def timeline_of(store: SnapshotStore, filename: str, response: StoredRecord) -> StreamTimeline:
    """The timeline of ``response`` (a record of ``filename`` in ``store``'s snapshot)."""
    path = store.root / filename
    url = response.url or ""
    found = _following(path, response) or _scanned(store, filename, path).get(response.record_id)
    if found is not None:
        payload, truncated = found
        return read_stream_timeline(url, payload, truncated=truncated)
    events = [StreamEvent(ts=0.0, end=end, id=last) for end, last in event_ends(response.payload)]
    return StreamTimeline(url=url, events=events, ended="cut" if response.warc_header(TRUNCATED_HEADER) else "closed")


def _is_timeline(record: StoredRecord) -> bool:
    return record.rec_type == "metadata" and record.warc_header(RESOURCE_TYPE_HEADER) == EVENT_STREAM_RESOURCE


def _following(path: Path, response: StoredRecord) -> tuple[bytes, str | None] | None:
    """The metadata record right after ``response``, if it is the response's timeline."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError as e:
        raise ArchiveError(f"cannot open: {os_reason(e)}", where=path) from e
    try:
        data = os.pread(fd, _NEXT_BYTES, response.offset + response.length)
    finally:
        os.close(fd)
    if not data:
        return None
    try:
        record, _, block, _ = next(scan_blocks(data, str(path)))
    except (ArchiveError, StopIteration):
        return None  # not a whole record within the bytes read: the scan finds it
    if not _is_timeline(record) or response.record_id not in record.warc_header_values("WARC-Concurrent-To"):
        return None
    return block, record.warc_header(TRUNCATED_HEADER)


def _scanned(store: SnapshotStore, filename: str, path: Path) -> dict[str, tuple[bytes, str | None]]:
    files = _SCANNED.setdefault(store, {})
    known = files.get(filename)
    if known is None:
        known = files[filename] = {}
        try:
            with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
                for record, _, block, _ in scan_blocks(data, str(path)):
                    if _is_timeline(record):
                        for target in record.warc_header_values("WARC-Concurrent-To"):
                            known[target] = (bytes(block), record.warc_header(TRUNCATED_HEADER))
        except OSError as e:
            raise ArchiveError(f"cannot read: {os_reason(e)}", where=path) from e
    return known
