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

import functools
import mmap
import os
import re
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, BinaryIO, Literal

from warcio.archiveiterator import WARCIterator
from warcio.bufferedreaders import DecompressingBufferedReader
from warcio.exceptions import ArchiveLoadFailed
from warcio.statusandheaders import StatusAndHeadersParserException

from capreplay.archive.digests import DigestFinding, check_record
from capreplay.archive.http import Status, dechunk, is_chunked, parse_http_head, parse_status_line
from capreplay.errors import ArchiveError

_GZIP_MAGIC = b"\x1f\x8b"
_BLOCK_SIZE = 1 << 16
_HTTP_RECORDS = ("response", "request", "revisit")


@dataclass(frozen=True)
class StoredRecord:
    """One WARC record as stored, with its HTTP message split out for request/response/revisit."""

    rec_type: str
    """WARC-Type: warcinfo, request, response, revisit, resource, metadata, ..."""
    record_id: str
    """WARC-Record-ID, with its angle brackets."""
    url: str | None
    """WARC-Target-URI; None for records without one (warcinfo)."""
    date: str
    """WARC-Date as written."""
    warc_headers: list[tuple[str, str]]
    """Every WARC header in order."""
    offset: int
    """Where the record starts in the file (its gzip member, for .warc.gz)."""
    length: int
    """Bytes the record takes in the file (the whole gzip member, for .warc.gz)."""
    status: int | None = None
    """HTTP status of a response (or revisit with HTTP headers)."""
    reason: str | None = None
    """HTTP reason phrase of a response."""
    written_status: str | None = None
    """The status code as the record wrote it, when HTTP cannot carry it (``0``): ``status`` is then 204,
    as pywb serves it (see :func:`parse_status_line`)."""
    digests: tuple[DigestFinding, ...] = ()
    """Digests that did not match the stored form, when they were checked: those over another form of the
    body, and (if allowed) mismatches. Empty when digests were not checked."""
    method: str | None = None
    """HTTP method of a request."""
    http_headers: list[tuple[str, str]] = field(default_factory=list)
    """HTTP headers in order; strings hold one character per byte (latin-1), as they were on the wire."""
    payload: bytes = b""
    """The HTTP body as stored: Content-Encoding kept (gzip stays gzip) and never chunk-framed, since a
    foreign record's chunked body is de-chunked here. For a non-HTTP record, the whole record block."""

    def warc_header(self, name: str) -> str | None:
        """The first WARC header called ``name`` (case-insensitive), or None."""
        values = self.warc_header_values(name)
        return values[0] if values else None

    def warc_header_values(self, name: str) -> list[str]:
        """Every value of WARC header ``name``, e.g. a repeated WARC-Concurrent-To."""
        return self._by_name.get(name.lower(), [])

    @functools.cached_property
    def _by_name(self) -> dict[str, list[str]]:
        # Indexing asks each record for several headers: one pass over them instead of one per question.
        found: dict[str, list[str]] = {}
        for n, v in self.warc_headers:
            found.setdefault(n.lower(), []).append(v)
        return found

    def http_header(self, name: str) -> str | None:
        """The first HTTP header called ``name`` (case-insensitive), or None."""
        lower = name.lower()
        return next((v for n, v in self.http_headers if n.lower() == lower), None)


class _Broken(Exception):
    """A problem found inside warcio's machinery. ``{offset}`` in the text is filled in by the caller."""


# warcio's own exceptions for input it cannot parse; anything else would be a bug worth a traceback
_PARSE_ERRORS = (_Broken, ArchiveLoadFailed, StatusAndHeadersParserException, zlib.error)


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
            if self.first_member and self.num_block_read == 0 and not data.startswith(_GZIP_MAGIC):
                # the file does not start with gzip at all: an uncompressed WARC
                self.decompressor = None
                return data
            raise _Broken(f"corrupt gzip member at offset {{offset}}: {e}") from e


class _StrictIterator(WARCIterator):  # type: ignore[misc]
    """warcio's WARC iterator on the strict reader, raising where warcio would warn or stop."""

    def __init__(self, stream: BinaryIO) -> None:
        # no_record_parse: the HTTP head is split out here, byte-exact (see capreplay.archive.http)
        super().__init__(stream, no_record_parse=True)
        # iteration is lazy, so nothing has been read through warcio's reader yet
        self.reader = _StrictReader(self.fh, block_size=_BLOCK_SIZE)

    def _consume_blanklines(self) -> tuple[bytes | None, int]:
        empty_size = 0
        while True:
            line = self.reader.readline()
            if not line:
                if empty_size == 0 and self.reader.decompressor is None:
                    raise _Broken("truncated WARC record at offset {offset}: the blank lines ending it are missing")
                return None, empty_size
            if line.strip():
                if empty_size == 0:
                    raise _Broken("WARC record at offset {offset} runs past its Content-Length")
                return line, empty_size
            empty_size += len(line)

    def close(self) -> None:
        reader = self.reader
        if reader is not None and reader.decompressor is not None and reader.fed and not reader.decompressor.eof:
            raise _Broken("truncated gzip member at offset {offset}: the file ends inside it")
        super().close()


def iter_records(
    stream: BinaryIO, name: str, *, check_digests: bool = False, allow_digest_mismatch: bool = False
) -> Iterator[StoredRecord]:
    """Every record of a ``.warc.gz`` or ``.warc`` stream, in file order, with offset and length.

    Raises :class:`ArchiveError` (``where=name``) for a truncated, corrupt or non-WARC file, including
    an empty one; never stops early in silence. ``check_digests`` also verifies every record's
    WARC-Block-Digest and WARC-Payload-Digest (algorithms it cannot compute are skipped): a digest over
    a documented other form of the body (see :mod:`capreplay.archive.digests`) is accepted and noted in
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
        except _PARSE_ERRORS as e:
            raise _error(name, at, e) from e
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
    except _PARSE_ERRORS as e:
        raise _error(where, offset, e) from e


type _Digests = Literal["skip", "refuse", "note"]


def _policy(check: bool, allow: bool) -> _Digests:
    return "skip" if not check else "note" if allow else "refuse"


def _load(it: _StrictIterator, rec: Any, *, digests: _Digests) -> StoredRecord:
    """Read one record's block fully and check it is whole before anything is believed."""
    headers = rec.rec_headers
    rec_type, record_id, date = (headers.get_header(n) for n in ("WARC-Type", "WARC-Record-ID", "WARC-Date"))
    length_text = (headers.get_header("Content-Length") or "").strip()
    if not (length_text.isascii() and length_text.isdigit()):
        raise _Broken("WARC record at offset {offset} has no valid Content-Length (truncated header?)")
    missing = [n for n, v in (("WARC-Type", rec_type), ("WARC-Record-ID", record_id), ("WARC-Date", date)) if not v]
    if missing:
        raise _Broken(f"WARC record at offset {{offset}} lacks {', '.join(missing)}")
    declared = int(length_text)
    block = _read_exactly(rec.raw_stream, declared)
    if len(block) < declared:
        raise _Broken(
            f"truncated WARC record at offset {{offset}}: Content-Length is {declared} bytes, "
            f"the file ends after {len(block)}"
        )
    offset, length = it.get_record_offset(), it.get_record_length()  # reads up to the record's end
    _check_member_end(it)

    return _stored(
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


def _stored(
    *,
    rec_type: str,
    record_id: str,
    url: str | None,
    date: str,
    warc_headers: list[tuple[str, str]],
    offset: int,
    length: int,
    block: bytes,
    digests: _Digests,
) -> StoredRecord:
    """The record of a whole block: its HTTP message split out, digests checked when asked."""
    message = _split_http(rec_type, block) if _has_http(rec_type, url, block) else None
    payload = message.payload if message else block
    findings: tuple[DigestFinding, ...] = ()
    if digests != "skip" and rec_type != "revisit":
        # revisits carry the digest of the payload they stand for, not their own (warcio skips them too)
        headers = message.headers if message else None
        findings = tuple(check_record(block=block, payload=payload, headers=headers, labels=dict(warc_headers)))
        wrong = next((f for f in findings if f.form is None), None)
        if wrong and digests == "refuse":
            raise _Broken(
                f"{wrong.digest} digest of the record at offset {{offset}} ({record_id}, {url or 'no URI'}) does "
                f"not match: the record says {wrong.expected}, its bytes give {wrong.actual} "
                "(--allow-digest-mismatch imports it anyway)"
            )
    if message and is_chunked(message.headers):
        plain = dechunk(payload)
        payload = payload if plain is None else plain
    return StoredRecord(
        rec_type=rec_type,
        record_id=record_id,
        url=url,
        date=date,
        warc_headers=warc_headers,
        offset=offset,
        length=length,
        status=message.status.code if message and message.status else None,
        reason=message.status.reason if message and message.status else None,
        written_status=message.status.written if message and message.status else None,
        method=message.method if message else None,
        http_headers=message.headers if message else [],
        payload=payload,
        digests=findings,
    )


def read_record_at(fd: int, offset: int, length: int, *, name: str) -> StoredRecord:
    """The record that fills ``length`` bytes at ``offset`` of the open file ``fd``, as an index places it.

    Replay's fast path: one ``pread`` and, for a gzip member, one ``zlib`` call, with the same checks and
    the same result as :func:`read_record` (a gzip member must hold exactly this one record, the block must
    be as long as its Content-Length), without warcio's buffered parsing.
    """
    try:
        data = os.pread(fd, length, offset)
    except OSError as e:
        raise ArchiveError(f"cannot read {length} bytes at offset {offset}: {e.strerror or e}", where=name) from e
    try:
        if len(data) < length:
            raise _Broken(f"truncated WARC record at offset {{offset}}: the file ends {length - len(data)} bytes early")
        raw = _gunzip_member(data) if data.startswith(_GZIP_MAGIC) else data
        record, end = _parse_raw(raw, offset, length)
        if raw[end:].strip(b"\r\n"):
            raise _Broken("WARC record at offset {offset} is followed by data: wrong Content-Length")
        return record
    except _PARSE_ERRORS as e:
        raise _error(name, offset, e) from e


def scan_records(data: bytes | mmap.mmap, name: str) -> Iterator[StoredRecord]:
    """Every record of a whole WARC file held in ``data`` (a memory map, say), for building an index.

    The lean counterpart of :func:`iter_records` for a snapshot's own files, whose digests the manifest
    already vouches for: each gzip member is inflated by one ``zlib`` object and its headers parsed
    directly, with the same structural checks (truncation, one record per member, Content-Length).
    Response payloads are not kept (``payload`` is empty): an index needs only headers, places and the
    bodies of requests.
    """
    offset, end = 0, len(data)
    if end == 0:
        raise ArchiveError("not a WARC file: it holds no records (empty?)", where=name)
    try:
        while offset < end:
            if data[offset : offset + 2] == _GZIP_MAGIC:
                raw, length = _inflate_at(data, offset)
                record, used = _index_view(raw, offset, length)
                if raw[used:].strip(b"\r\n"):
                    raise _Broken("gzip member at offset {offset} holds more than one record (use `warcio recompress`)")
            else:
                if data[offset : offset + 5] != b"WARC/":
                    first = bytes(data[offset : offset + 60]).split(b"\n", 1)[0].decode("latin-1")
                    what = "not a WARC file" if offset == 0 else "no WARC record at offset {offset}"
                    raise _Broken(f"{what}: it starts with {first!r}, not 'WARC/1.x'")
                head_end = data.find(b"\r\n\r\n", offset, offset + _HEAD_LIMIT)
                declared = _declared_length(data[offset : max(head_end, offset)])
                stop = head_end + 4 + declared
                following = stop
                while data[following : following + 2] == b"\r\n":
                    following += 2
                raw = data[offset:stop]
                record, _ = _index_view(raw, offset, following - offset)
                length = following - offset
            yield record
            offset += length
            while offset < end and data[offset : offset + 1] in (b"\r", b"\n"):
                offset += 1  # blank lines between uncompressed records
    except _PARSE_ERRORS as e:
        raise _error(name, offset, e) from e


_HEAD_LIMIT = 1 << 20  # a WARC header longer than this is not one


def _inflate_at(data: bytes | mmap.mmap, offset: int) -> tuple[bytes, int]:
    """The content of the gzip member at ``offset`` and the member's length in bytes."""
    inflater = zlib.decompressobj(wbits=31)
    parts: list[bytes] = []
    # Most members are a few kilobytes: start small (the unread rest is copied into unused_data), then grow.
    view, pos, step = memoryview(data), offset, 1 << 14
    try:
        while not inflater.eof:
            chunk = view[pos : pos + step]
            if not chunk:
                raise _Broken("truncated gzip member at offset {offset}: the file ends inside it")
            parts.append(inflater.decompress(chunk))
            pos += len(chunk)
            step = min(step * 2, 1 << 22)
    except zlib.error as e:
        raise _Broken(f"corrupt gzip member at offset {{offset}}: {e}") from e
    return b"".join(parts), pos - offset - len(inflater.unused_data)


def _declared_length(head: bytes) -> int:
    for line in head.split(b"\r\n"):
        name, sep, value = line.partition(b":")
        if sep and name.strip().lower() == b"content-length" and value.strip().isdigit():
            return int(value)
    raise _Broken("WARC record at offset {offset} has no valid Content-Length (truncated header?)")


def _parse_raw(raw: bytes, offset: int, length: int) -> tuple[StoredRecord, int]:
    """The record at the start of ``raw`` (one whole uncompressed record) and where its block ends."""
    headers, block, stop = _split_raw(raw)
    return _whole(headers, block, offset, length), stop


def _whole(headers: list[tuple[str, str]], block: bytes, offset: int, length: int) -> StoredRecord:
    fields = dict(headers)
    return _stored(
        rec_type=fields["WARC-Type"],
        record_id=fields["WARC-Record-ID"],
        url=fields.get("WARC-Target-URI"),
        date=fields["WARC-Date"],
        warc_headers=headers,
        offset=offset,
        length=length,
        block=block,
        digests="skip",
    )


def _split_raw(raw: bytes) -> tuple[list[tuple[str, str]], bytes, int]:
    """WARC headers, block, and the end of the block of the record at the start of ``raw``, checked."""
    head_end = raw.find(b"\r\n\r\n")
    if not raw.startswith(b"WARC/") or head_end < 0:
        raise _Broken("no WARC record at offset {offset}")
    headers = []
    for line in raw[:head_end].decode("utf-8", "replace").split("\r\n")[1:]:
        name, colon, value = line.partition(":")
        if colon:
            headers.append((name.strip(), value.strip()))
    headers = target_uri_fixed(headers)
    fields = dict(headers)
    length_text = fields.get("Content-Length", "")
    if not (length_text.isascii() and length_text.isdigit()):
        raise _Broken("WARC record at offset {offset} has no valid Content-Length (truncated header?)")
    declared = int(length_text)
    stop = head_end + 4 + declared
    block = raw[head_end + 4 : stop]
    if len(block) < declared:
        raise _Broken(f"truncated WARC record at offset {{offset}}: Content-Length is {declared} bytes")
    missing = [n for n in ("WARC-Type", "WARC-Record-ID", "WARC-Date") if not fields.get(n)]
    if missing:
        raise _Broken(f"WARC record at offset {{offset}} lacks {', '.join(missing)}")
    return headers, block, stop


_INDEXED_HTTP = re.compile(rb"^(content-type|transfer-encoding)[ \t]*:[ \t]*([^\r\n]*)", re.MULTILINE | re.I)


def target_uri_fixed(headers: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The WARC headers with WARC-Target-URI repaired as warcio repairs it while parsing.

    wget 1.18 and 1.19 wrote the URI of request records inside angle brackets (``<http://...>``, the form
    WARC/1.0's grammar showed), and some tools leave spaces in it; warcio strips the brackets and writes
    each space as ``%20``, so the fast readers here must do the same to return what the strict one does.
    """
    fixed = []
    for name, value in headers:
        if name.lower() == "warc-target-uri":
            if value.startswith("<") and value.endswith(">"):
                value = value[1:-1]
            value = value.replace(" ", "%20")
        fixed.append((name, value))
    return fixed


def _index_view(raw: bytes, offset: int, length: int) -> tuple[StoredRecord, int]:
    """What an index reads of the record at the start of ``raw``: its WARC headers, the HTTP status or
    method, the Content-Type and Transfer-Encoding headers only, and the payload of a request (or of a
    response without a payload digest, which the index must compute). Checked as :func:`_parse_raw` is."""
    headers, block, stop = _split_raw(raw)
    fields = dict(headers)
    rec_type, url = fields["WARC-Type"], fields.get("WARC-Target-URI")
    keep = rec_type == "request" or (rec_type == "response" and not fields.get("WARC-Payload-Digest"))
    if keep or not _has_http(rec_type, url, block):
        return _whole(headers, block, offset, length), stop
    head_end = block.find(b"\r\n\r\n")
    if head_end < 0:
        return _whole(headers, block, offset, length), stop  # an unusual message: the full parser decides
    head = block[:head_end]
    parsed = parse_status_line(head[: head.find(b"\r\n") if b"\r\n" in head else len(head)].decode("latin-1"))
    if parsed is None:
        raise _Broken(f"{rec_type} record at offset {{offset}} has no HTTP status line")
    wanted = [(k.decode("latin-1"), v.rstrip(b" \t").decode("latin-1")) for k, v in _INDEXED_HTTP.findall(head)]
    record = StoredRecord(
        rec_type=rec_type,
        record_id=fields["WARC-Record-ID"],
        url=url,
        date=fields["WARC-Date"],
        warc_headers=headers,
        offset=offset,
        length=length,
        status=parsed.code,
        reason=parsed.reason,
        written_status=parsed.written,
        http_headers=wanted,
    )
    return record, stop


def _gunzip_member(data: bytes) -> bytes:
    """The content of the one gzip member ``data`` must be exactly."""
    inflater = zlib.decompressobj(wbits=31)
    try:
        raw = inflater.decompress(data)
    except zlib.error as e:
        raise _Broken(f"corrupt gzip member at offset {{offset}}: {e}") from e
    if not inflater.eof:
        raise _Broken("truncated gzip member at offset {offset}: the file ends inside it")
    if inflater.unused_data:
        raise _Broken("gzip member at offset {offset} is shorter than its index entry says")
    return raw


def _check_member_end(it: _StrictIterator) -> None:
    """A .warc.gz record must fill its gzip member exactly: no second record, no missing end."""
    decompressor = it.reader.decompressor
    if decompressor is None:
        return
    if it.next_line is not None:
        raise _Broken("gzip member at offset {offset} holds more than one record (use `warcio recompress`)")
    if not decompressor.eof:
        raise _Broken("truncated gzip member at offset {offset}: the file ends inside it")


@dataclass(frozen=True)
class _HttpMessage:
    headers: list[tuple[str, str]]
    payload: bytes
    status: Status | None = None
    method: str | None = None


def _split_http(rec_type: str, block: bytes) -> _HttpMessage:
    start_line, headers, payload = parse_http_head(block)
    if rec_type == "request":
        method = start_line.split(" ", 1)[0]
        if not method:
            raise _Broken("request record at offset {offset} has no request line")
        return _HttpMessage(headers, payload, method=method)
    parsed = parse_status_line(start_line)
    if parsed is None:
        raise _Broken(f"{rec_type} record at offset {{offset}} has no HTTP status line: {start_line[:60]!r}")
    return _HttpMessage(headers, payload, status=parsed)


def _has_http(rec_type: str | None, url: str | None, block: bytes) -> bool:
    """Does the block hold an HTTP message? A revisit may store no HTTP head at all."""
    if rec_type not in _HTTP_RECORDS or not block or not url:
        return False
    if not url.lower().startswith(("http://", "https://")):
        return False
    return rec_type != "revisit" or block.startswith(b"HTTP/")


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


def _error(where: str, offset: int, e: Exception) -> ArchiveError:
    """One clear line for a problem at ``offset``."""
    if isinstance(e, _Broken):
        return ArchiveError(str(e).replace("{offset}", str(offset)), where=where)
    text = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
    if "non-chunked gzip" in str(e):
        text = "a gzip member holds more than one record (use `warcio recompress`)"
    elif text.startswith(("Invalid WARC record", "Unknown archive format")):
        first = text.split("first line:", 1)[-1].strip()
        what = "not a WARC file" if offset == 0 else f"no WARC record at offset {offset}"
        return ArchiveError(f"{what}: it starts with {first[:60]!r}, not 'WARC/1.x'", where=where)
    return ArchiveError(f"cannot read the record at offset {offset}: {text[:200]}", where=where)
