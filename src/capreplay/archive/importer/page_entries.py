"""An imported page's manifest entry, from its records read back by offset: final URL, status, title, time.

The records are read from the snapshot being built, exactly as replay will read them; a revisit is read
with its original's payload, the same way :class:`capreplay.replay.store.SnapshotStore` serves it.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from capreplay.archive.importer.page_choice import HTML_TYPES, Document, Lookup, follow_redirects, html_title
from capreplay.archive.index.cdxj import IndexEntry
from capreplay.archive.index.keys import warc_timestamp
from capreplay.archive.warc.read import read_record
from capreplay.archive.warc.stored import StoredRecord
from capreplay.errors import ArchiveError
from capreplay.models.manifest import PageEntry


def read_document(root: Path, entry: IndexEntry) -> Document:
    """Status, headers and payload that replay serves for ``entry``, with the record's WARC-Date."""
    record = _read(root, entry.filename, entry.offset)
    if entry.orig_filename is None or entry.orig_offset is None:
        return Document(record.status, record.http_headers, record.payload, record.date)
    original = _read(root, entry.orig_filename, entry.orig_offset)
    # a revisit's own head describes this capture, except a 304's, which replay serves as the original
    head = record if record.status is not None and record.status != 304 else original
    return Document(head.status, head.http_headers, original.payload, record.date)


def page_entry(root: Path, url: str, entry: IndexEntry, lookup: Lookup) -> PageEntry:
    """The manifest entry of the page loaded from ``url``, whose archived response is ``entry``."""
    read: dict[int, Document] = {}

    def fetch(e: IndexEntry) -> Document:
        if e.seq not in read:
            read[e.seq] = read_document(root, e)
        return read[e.seq]

    first = fetch(entry)
    final, doc = follow_redirects(entry, lookup, fetch)
    return PageEntry(
        url=url,
        final_url=final.url,
        title=html_title(doc.headers, doc.payload) if final.mime in HTML_TYPES else "",
        status=doc.status,
        captured_at=warc_datetime(first.date),
    )


def warc_datetime(date: str) -> datetime:
    """A WARC-Date as an aware datetime (UTC when it names no zone); lower precisions are padded."""
    try:
        when = datetime.fromisoformat(date.strip())
    except ValueError:
        stamp = warc_timestamp(date)
        if stamp is None:
            raise ArchiveError(f"invalid WARC-Date {date!r}", where="page record") from None
        when = datetime.strptime(stamp, "%Y%m%d%H%M%S")
    return when.replace(tzinfo=UTC) if when.tzinfo is None else when


def _read(root: Path, filename: str, offset: int) -> StoredRecord:
    with (root / filename).open("rb") as stream:
        return read_record(stream, offset, name=str(root / filename))
