"""Exporting a checked snapshot as one HAR file, written atomically: the I/O around :mod:`.build`.

The snapshot is checked against its manifest first (a changed or missing file is a :class:`SnapshotError`
and nothing is written). Every indexed response is read back by its offset exactly as replay serves it:
a revisit with its own status and headers (unless it records a 304) and the payload of the response it
repeats; a revisit whose original is not in the snapshot is left out, as replay leaves it out. The file is
written to a temporary name next to the target and given its name only when complete; an existing file
is replaced only when asked. The same snapshot always gives the same bytes. The records of WebSocket messages
and event-stream times (:mod:`capreplay.archive.warc.live`) are found by the response they name in
``WARC-Concurrent-To`` and written into that response's entry (:mod:`capreplay.archive.har.live`).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any, BinaryIO

from capreplay.archive.har.build import build_har, har_json
from capreplay.archive.har.live import WEBSOCKET_FIELD, har_event_messages, har_websocket_messages
from capreplay.archive.har.model import Creator
from capreplay.archive.importer.page_choice import Lookup
from capreplay.archive.importer.page_entries import warc_datetime
from capreplay.archive.index.cdxj import IndexEntry, build_index, load_index
from capreplay.archive.snapshot.manifest import checked_manifest
from capreplay.archive.warc.exchange import Exchange
from capreplay.archive.warc.live import (
    EVENT_STREAM_RESOURCE,
    RESOURCE_TYPE_HEADER,
    TRUNCATED_HEADER,
    WEBSOCKET_RESOURCE,
    read_stream_timeline,
    read_websocket_messages,
)
from capreplay.archive.warc.read import iter_records, read_record
from capreplay.archive.warc.stored import StoredRecord
from capreplay.errors import ArchiveError, SnapshotError, UsageError, os_reason
from capreplay.models.manifest import Manifest
from capreplay.util.files import atomic_output

INDEX_FILE = "index.cdxj"
_WARC_SUFFIXES = (".warc.gz", ".warc")
_PROTOCOLS = {"h2": "HTTP/2.0", "h3": "HTTP/3.0"}
_LIVE = (WEBSOCKET_RESOURCE, EVENT_STREAM_RESOURCE)


@dataclass(frozen=True)
class HarExport:
    """What :func:`export_har` wrote."""

    path: Path
    size: int
    entries: int
    pages: int
    left_out: list[str]
    """URLs of revisits left out: the response they repeat is not in the snapshot."""
    still_encoded: list[str]
    """URLs of bodies kept content-encoded, since their coding could not be undone."""


def export_har(snapshot: Path, out: Path, *, force: bool = False) -> HarExport:
    """Write the snapshot at ``snapshot`` as the HAR file ``out``.

    Bad input is an :class:`~capreplay.errors.InputError` naming the file, raised before anything is
    written: a folder that is not a snapshot or does not match its manifest, a malformed WARC, an output
    path that is not a ``.har`` file in an existing folder outside the snapshot, or that exists already
    without ``force``.
    """
    check_har_output(snapshot, out, force=force)
    manifest = checked_manifest(snapshot)
    entries = sorted(_entries(snapshot, manifest), key=lambda e: e.seq)
    served = [e for e in entries if not e.unresolved_revisit]
    left_out = [e.url for e in entries if e.unresolved_revisit]
    exchanges, record_ids = _read_exchanges(snapshot, served)
    lookup = Lookup(served)
    position = {e.seq: n for n, e in enumerate(served)}
    pages = []
    for page in manifest.pages:
        found = lookup.find(page.url)
        pages.append((page, position[found.seq] if found is not None else None))
    creator = Creator(name="capreplay", version=_version())
    fields = _live_fields(_live_records(snapshot, _warcs(manifest)), exchanges, record_ids)
    built = build_har(exchanges, pages, creator=creator, comment=f"capreplay snapshot {manifest.snapshot_id}",
                      fields=fields)  # fmt: skip
    data = har_json(built.har)
    with atomic_output(out, force=force, what="HAR") as stream:
        stream.write(data)
    return HarExport(out, len(data), len(exchanges), len(pages), left_out, built.still_encoded)


def check_har_output(snapshot: Path, out: Path, *, force: bool) -> None:
    """Refuse an output path that cannot or must not be written, before any work is done."""
    if out.suffix.lower() != ".har":
        raise UsageError("the output file name must end in .har", where=out)
    if not out.parent.is_dir():
        problem = "is not a folder" if out.parent.exists() else "does not exist"
        raise UsageError(f"cannot write the HAR: its folder {out.parent} {problem}", where=out)
    if out.is_dir():
        raise UsageError("is a folder; give the path of a .har file", where=out)
    if (out.exists() or out.is_symlink()) and not force:
        raise UsageError("already exists; pass --force to replace it", where=out)
    if out.resolve().is_relative_to(snapshot.resolve()):
        # an extra file in the snapshot would make it fail its own manifest check
        raise UsageError("is inside the snapshot folder; write the HAR somewhere else", where=out)


def _entries(root: Path, manifest: Manifest) -> list[IndexEntry]:
    if any(f.path == INDEX_FILE for f in manifest.files):
        return load_index(root / INDEX_FILE)
    # an interrupted capture has no index yet: it is derived from the WARCs
    return build_index(root, _warcs(manifest))


def _warcs(manifest: Manifest) -> list[str]:
    return sorted(f.path for f in manifest.files if f.path.startswith("archive/") and f.path.endswith(_WARC_SUFFIXES))


def _live_records(root: Path, warcs: list[str]) -> dict[str, StoredRecord]:
    """The WebSocket-messages and event-stream-times records, by the response record id they name."""
    found: dict[str, StoredRecord] = {}
    for rel in warcs:
        try:
            with open(root / rel, "rb") as stream:
                for rec in iter_records(stream, str(root / rel)):
                    kind = (rec.warc_header(RESOURCE_TYPE_HEADER) or "").strip().lower()
                    concurrent = rec.warc_header("WARC-Concurrent-To")
                    if rec.rec_type in ("resource", "metadata") and kind in _LIVE and concurrent:
                        found[concurrent.strip()] = rec
        except OSError as e:
            raise SnapshotError(f"cannot open: {os_reason(e)}", where=root / rel) from e
    return found


def _live_fields(
    live: dict[str, StoredRecord], exchanges: list[Exchange], record_ids: list[tuple[str, ...]]
) -> dict[int, dict[str, Any]]:
    """The ``_webSocketMessages`` or ``_eventSourceMessages`` of each exchange that has a live record, which
    names its response record or (as WARC-Concurrent-To may, both ways) its request record."""
    fields: dict[int, dict[str, Any]] = {}
    for position, (ex, ids) in enumerate(zip(exchanges, record_ids, strict=True)):
        rec = next((live[i] for i in ids if i in live), None)
        if rec is None:
            continue
        url, truncated = rec.url or ex.url, rec.warc_header(TRUNCATED_HEADER)
        if (rec.warc_header(RESOURCE_TYPE_HEADER) or "").strip().lower() == WEBSOCKET_RESOURCE:
            log = read_websocket_messages(url, rec.payload, truncated=truncated)
            fields[position] = {"_resourceType": "websocket", WEBSOCKET_FIELD: har_websocket_messages(log, ex.started)}
        else:
            timeline = read_stream_timeline(url, rec.payload, truncated=truncated)
            fields[position] = {"_eventSourceMessages": har_event_messages(ex.response_body, timeline, ex.started)}
    return fields


def _read_exchanges(root: Path, entries: list[IndexEntry]) -> tuple[list[Exchange], list[tuple[str, ...]]]:
    """Each entry as replay serves it, with its request, read by offset; and each one's response record id (and
    its request record's, when it has one)."""
    with contextlib.ExitStack() as files:
        streams: dict[str, BinaryIO] = {}

        def read(rel: str, offset: int) -> StoredRecord:
            if rel not in streams:
                try:
                    streams[rel] = files.enter_context(open(root / rel, "rb"))
                except OSError as e:
                    raise SnapshotError(f"cannot open: {os_reason(e)}", where=root / rel) from e
            return read_record(streams[rel], offset, name=str(root / rel))

        exchanges = []
        record_ids = []
        for e in entries:
            record = read(e.filename, e.offset)
            head, payload = record, record.payload
            if e.orig_filename is not None and e.orig_offset is not None:
                original = read(e.orig_filename, e.orig_offset)
                # a revisit's own head describes this capture, except a 304's: replay serves the original then
                head = record if record.status is not None and record.status != 304 else original
                payload = original.payload
            request = read(e.req_filename or e.filename, e.req_offset) if e.req_offset is not None else None
            if head.status is None:
                raise ArchiveError(f"the record at offset {e.offset} ({e.url}) has no HTTP status",
                                   where=root / e.filename)
            protocol = (record.warc_header("WARC-Protocol") or "").strip().lower()
            exchanges.append(Exchange(
                url=e.url, method=e.method,
                request_headers=request.http_headers if request else [],
                request_body=request.payload if request else b"",
                http_version=_PROTOCOLS.get(protocol, "HTTP/1.1"),
                status=head.status, reason=head.reason or "",
                response_headers=head.http_headers, response_body=payload,
                started=warc_datetime(record.date),
            ))  # fmt: skip
            record_ids.append((record.record_id.strip(), *((request.record_id.strip(),) if request else ())))
    return exchanges, record_ids


def _version() -> str:
    try:
        return version("capreplay")
    except PackageNotFoundError:  # running from a source tree that was never installed
        return "(unknown version)"
