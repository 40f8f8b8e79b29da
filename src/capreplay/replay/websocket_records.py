"""Finding the messages record of an archived WebSocket handshake (see :mod:`capreplay.archive.warc.live`).

The messages record names its handshake's response in ``WARC-Concurrent-To``. A capture writes it right after
that response, so it is found by reading the one record that follows the response (no index of its own, no
scan). A WARC written by another tool may keep it elsewhere (Browsertrix Crawler writes it when the connection
ends, after other records), or name the handshake's request record rather than its response (the standard makes
``WARC-Concurrent-To`` run both ways between the records of one capture event): then the snapshot's files are
read once for every ``websocket`` resource record, and the table is kept for the life of the store.
"""

from __future__ import annotations

import threading

from capreplay.archive.index.cdxj import mapped
from capreplay.archive.warc.live import (
    RESOURCE_TYPE_HEADER,
    TRUNCATED_HEADER,
    WEBSOCKET_RESOURCE,
    read_websocket_messages,
)
from capreplay.archive.warc.read import read_record
from capreplay.archive.warc.scan import read_record_at, scan_records
from capreplay.archive.warc.stored import StoredRecord
from capreplay.errors import ArchiveError, os_reason
from capreplay.models.live_traffic import WebSocketLog
from capreplay.replay.store import SnapshotStore

_Place = tuple[str, int, int]  # file, offset, length
_tables: dict[tuple[str, str], dict[str, _Place]] = {}
_tables_lock = threading.Lock()


def websocket_messages(store: SnapshotStore, ref: int) -> WebSocketLog | None:
    """The messages of the connection whose handshake response is the index line at ``ref``; None when the
    archive holds none for it (a capture made before messages were kept, or a tool that keeps none)."""
    entry = store.index.entry(ref)
    response = store.record(ref)
    following = _following(store, entry.filename, entry.offset + entry.length)
    if following is not None and _messages_of(following, response.record_id):
        return _log(following)
    table = _table(store)
    place = table.get(response.record_id)
    if place is None:
        request = store.request_record(ref)
        place = table.get(request.record_id) if request is not None else None
    if place is None:
        return None
    path = store.root / place[0]
    try:
        with open(path, "rb") as f:
            record = read_record_at(f.fileno(), place[1], place[2], name=str(path))
    except OSError as e:
        raise ArchiveError(f"cannot read: {os_reason(e)}", where=path) from e
    return _log(record)


def _messages_of(record: StoredRecord, response_id: str) -> bool:
    return (
        record.rec_type == "resource"
        and record.warc_header(RESOURCE_TYPE_HEADER) == WEBSOCKET_RESOURCE
        and response_id in record.warc_header_values("WARC-Concurrent-To")
    )


def _log(record: StoredRecord) -> WebSocketLog:
    return read_websocket_messages(str(record.url), record.payload, truncated=record.warc_header(TRUNCATED_HEADER))


def _following(store: SnapshotStore, filename: str, offset: int) -> StoredRecord | None:
    """The record at ``offset`` of ``filename``; None at the end of the file."""
    path = store.root / filename
    try:
        with open(path, "rb") as f:
            if offset >= f.seek(0, 2):
                return None
            return read_record(f, offset, name=str(path))
    except OSError as e:
        raise ArchiveError(f"cannot read: {os_reason(e)}", where=path) from e


def _table(store: SnapshotStore) -> dict[str, _Place]:
    """Handshake response id -> place of its messages record, over every WARC of the snapshot (read once)."""
    key = (str(store.root), store.snapshot_id)
    with _tables_lock:
        table = _tables.get(key)
        if table is None:
            table = _tables[key] = {}
            for entry in store.manifest.files:
                if entry.path.startswith("archive/") and ".warc" in entry.path:
                    _scan(store, entry.path, table)
    return table


def _scan(store: SnapshotStore, filename: str, table: dict[str, _Place]) -> None:
    with mapped(store.root / filename) as data:
        for record in scan_records(data, str(store.root / filename)):
            if record.rec_type == "resource" and record.warc_header(RESOURCE_TYPE_HEADER) == WEBSOCKET_RESOURCE:
                for target in record.warc_header_values("WARC-Concurrent-To"):
                    table.setdefault(target, (filename, record.offset, record.length))
