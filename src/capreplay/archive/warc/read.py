"""Reading WARC records back, strictly: one record at a known offset, or every record of a file.

warcio finds the records; this module adds the checks warcio leaves out, because a snapshot must never
be served from a silently shortened archive. warcio treats a gzip error or a file that ends early as a
quiet end of data (writing a note to stderr at most); here each is an :class:`ArchiveError` naming
the file and the offset:

- a record whose block is shorter than its Content-Length, or a gzip member cut short: truncated;
- a gzip member that fails to decompress, or bytes after a member that are not gzip: corrupt;
- a record followed by anything but the blank lines that end it: wrong Content-Length;
- a gzip member holding more than one record: not a record-per-member ``.warc.gz``;
- a file whose first line is not ``WARC/x.y``, or that holds no record at all: not a WARC.

Both ``.warc.gz`` (one gzip member per record) and uncompressed ``.warc`` are read.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator
from typing import Any, BinaryIO

from warcio.archiveiterator import WARCIterator
from warcio.bufferedreaders import DecompressingBufferedReader

from capreplay.archive.warc.stored import (
    GZIP_MAGIC,
    PARSE_ERRORS,
    Broken,
    Digests,
    StoredRecord,
    archive_error,
    stored_record,
)
from capreplay.errors import ArchiveError

_BLOCK_SIZE = 1 << 16


class _StrictReader(DecompressingBufferedReader):  # type: ignore[misc]  # warcio has no type hints
    """warcio's gzip-or-plain reader, except that broken gzip data raises instead of ending quietly."""

    decompressor: Any  # a zlib decompress object, or None once the data proved to be uncompressed

    def __init__(self, stream: Any, block_size: int) -> None:
        self.first_member = True
        super().__init__(stream, block_size=block_size)

    def _init_decomp(self, decomp_type: str | None) -> None:
        super()._init_decomp(decomp_type)
        self.fed = False  # has the current gzip member received any input?

    def read_next_member(self) -> bool:
        moved = bool(super().read_next_member())
        self.first_member = self.first_member and not moved
        return moved

    def _decompress(self, data: bytes) -> bytes:
        if self.decompressor is None or not data:
            return data
        self.fed = True
        try:
            return bytes(self.decompressor.decompress(data))
        except zlib.error as e:
            if self.first_member and self.num_block_read == 0 and not data.startswith(GZIP_MAGIC):
                # the file does not start with gzip at all: an uncompressed WARC
                self.decompressor = None
                return data
            raise Broken(f"corrupt gzip member at offset {{offset}}: {e}") from e


class _StrictIterator(WARCIterator):  # type: ignore[misc]
    """warcio's WARC iterator on the strict reader, raising where warcio would warn or stop."""

    def __init__(self, stream: BinaryIO) -> None:
        # no_record_parse: the HTTP head is split out here, byte-exact (see capreplay.archive.warc.http)
        super().__init__(stream, no_record_parse=True)
        # iteration is lazy, so nothing has been read through warcio's reader yet
        self.reader = _StrictReader(self.fh, block_size=_BLOCK_SIZE)

    def _consume_blanklines(self) -> tuple[bytes | None, int]:
        empty_size = 0
        while True:
            line = self.reader.readline()
            if not line:
                if empty_size == 0 and self.reader.decompressor is None:
                    raise Broken("truncated WARC record at offset {offset}: the blank lines ending it are missing")
                return None, empty_size
            if line.strip():
                if empty_size == 0:
                    raise Broken("WARC record at offset {offset} runs past its Content-Length")
                return line, empty_size
            empty_size += len(line)

    def close(self) -> None:
        reader = self.reader
        if reader is not None and reader.decompressor is not None and reader.fed and not reader.decompressor.eof:
            raise Broken("truncated gzip member at offset {offset}: the file ends inside it")
        super().close()


def iter_records(
    stream: BinaryIO, name: str, *, check_digests: bool = False, allow_digest_mismatch: bool = False
) -> Iterator[StoredRecord]:
    """Every record of a ``.warc.gz`` or ``.warc`` stream, in file order, with offset and length.

    Raises :class:`ArchiveError` (``where=name``) for a truncated, corrupt or non-WARC file, including
    an empty one; never stops early in silence. ``check_digests`` also verifies every record's
    WARC-Block-Digest and WARC-Payload-Digest (algorithms it cannot compute are skipped): a digest over
    a documented other form of the body (see :mod:`capreplay.archive.warc.digests`) is accepted and noted in
    the record's ``digests``; one that matches no form is an :class:`ArchiveError` naming the record,
    or, with ``allow_digest_mismatch``, noted there too.
    """
    digests = _policy(check_digests, allow_digest_mismatch)
    it = _StrictIterator(stream)
    count = 0
    while True:
        at = it.offset
        try:
            rec = next(it)
            stored = _load(it, rec, digests=digests)
        except StopIteration:
            break
        except PARSE_ERRORS as e:
            raise archive_error(name, at, e) from e
        count += 1
        yield stored
    if count == 0:
        raise ArchiveError("not a WARC file: it holds no records (empty?)", where=name)


def read_record(stream: BinaryIO, offset: int, *, name: str | None = None, check_digests: bool = False) -> StoredRecord:
    """The one record that starts at ``offset``; reads only that record, never scans the file.

    ``check_digests`` as for :func:`iter_records` (a mismatch of every form raises).
    """
    where = name or str(getattr(stream, "name", "<stream>"))
    try:
        stream.seek(offset)
    except (OSError, ValueError) as e:
        raise ArchiveError(f"cannot seek to offset {offset}: {e}", where=where) from e
    it = _StrictIterator(stream)
    try:
        rec = next(it)
        return _load(it, rec, digests=_policy(check_digests, allow=False))
    except StopIteration:
        raise ArchiveError(f"no WARC record at offset {offset}: past the end of the file", where=where) from None
    except PARSE_ERRORS as e:
        raise archive_error(where, offset, e) from e


def _policy(check: bool, allow: bool) -> Digests:
    return "skip" if not check else "note" if allow else "refuse"


def _load(it: _StrictIterator, rec: Any, *, digests: Digests) -> StoredRecord:
    """Read one record's block fully and check it is whole before anything is believed."""
    headers = rec.rec_headers
    rec_type, record_id, date = (headers.get_header(n) for n in ("WARC-Type", "WARC-Record-ID", "WARC-Date"))
    length_text = (headers.get_header("Content-Length") or "").strip()
    if not (length_text.isascii() and length_text.isdigit()):
        raise Broken("WARC record at offset {offset} has no valid Content-Length (truncated header?)")
    missing = [n for n, v in (("WARC-Type", rec_type), ("WARC-Record-ID", record_id), ("WARC-Date", date)) if not v]
    if missing:
        raise Broken(f"WARC record at offset {{offset}} lacks {', '.join(missing)}")
    declared = int(length_text)
    block = _read_exactly(rec.raw_stream, declared)
    if len(block) < declared:
        raise Broken(
            f"truncated WARC record at offset {{offset}}: Content-Length is {declared} bytes, "
            f"the file ends after {len(block)}"
        )
    offset, length = it.get_record_offset(), it.get_record_length()  # reads up to the record's end
    _check_member_end(it)

    return stored_record(
        rec_type=str(rec_type),
        record_id=str(record_id),
        url=headers.get_header("WARC-Target-URI"),
        date=str(date),
        warc_headers=list(headers.headers),
        offset=offset,
        length=length,
        block=block,
        digests=digests,
    )


def _check_member_end(it: _StrictIterator) -> None:
    """A .warc.gz record must fill its gzip member exactly: no second record, no missing end."""
    decompressor = it.reader.decompressor
    if decompressor is None:
        return
    if it.next_line is not None:
        raise Broken("gzip member at offset {offset} holds more than one record (use `warcio recompress`)")
    if not decompressor.eof:
        raise Broken("truncated gzip member at offset {offset}: the file ends inside it")


def _read_exactly(stream: Any, size: int) -> bytes:
    """Up to ``size`` bytes; fewer only if the data ends first."""
    parts: list[bytes] = []
    remaining = size
    while remaining > 0:
        chunk = stream.read(min(remaining, _BLOCK_SIZE))
        if not chunk:
            break
        parts.append(chunk)
        remaining -= len(chunk)
    return b"".join(parts)
