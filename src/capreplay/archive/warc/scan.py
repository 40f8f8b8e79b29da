"""Reading a snapshot's own WARC records fast: one record at an index's offset, or every record of a file.

Replay and indexing read files whose digests the manifest already vouches for, so they skip warcio's
buffered parsing: a ``pread`` and one ``zlib`` call per gzip member, with the same structural checks as
:mod:`.read` (truncation, one record per member, Content-Length) and the same :class:`StoredRecord`.
"""

from __future__ import annotations

import mmap
import os
import re
import zlib
from collections.abc import Iterator

from capreplay.archive.warc.http import parse_status_line
from capreplay.archive.warc.stored import (
    GZIP_MAGIC,
    PARSE_ERRORS,
    Broken,
    StoredRecord,
    archive_error,
    built_record,
    has_http,
    plain_head,
    stored_record,
)
from capreplay.errors import ArchiveError, os_reason


def read_record_at(fd: int, offset: int, length: int, *, name: str) -> StoredRecord:
    """The record that fills ``length`` bytes at ``offset`` of the open file ``fd``, as an index places it.

    Replay's fast path: one ``pread`` and, for a gzip member, one ``zlib`` call, with the same checks and
    the same result as :func:`read_record` (a gzip member must hold exactly this one record, the block must
    be as long as its Content-Length), without warcio's buffered parsing.
    """
    try:
        data = os.pread(fd, length, offset)
    except OSError as e:
        raise ArchiveError(f"cannot read {length} bytes at offset {offset}: {os_reason(e)}", where=name) from e
    try:
        if len(data) < length:
            raise Broken(f"truncated WARC record at offset {{offset}}: the file ends {length - len(data)} bytes early")
        raw = _gunzip_member(data) if data.startswith(GZIP_MAGIC) else data
        record, end = _parse_raw(raw, offset, length)
        if raw[end:].strip(b"\r\n"):
            raise Broken("WARC record at offset {offset} is followed by data: wrong Content-Length")
        return record
    except PARSE_ERRORS as e:
        raise archive_error(name, offset, e) from e


def scan_records(data: bytes | mmap.mmap, name: str) -> Iterator[StoredRecord]:
    """Every record of a whole WARC file held in ``data`` (a memory map, say), for building an index.

    The lean counterpart of :func:`iter_records` for a snapshot's own files, whose digests the manifest
    already vouches for: each gzip member is inflated by one ``zlib`` object and its headers parsed
    directly, with the same structural checks (truncation, one record per member, Content-Length).
    Response payloads are not kept (``payload`` is empty): an index needs only headers, places and the
    bodies of requests.
    """
    return (record for record, _, _, _ in scan_blocks(data, name))


def scan_blocks(
    data: bytes | mmap.mmap, name: str, *, whole_responses: bool = False
) -> Iterator[tuple[StoredRecord, list[tuple[str, str]], bytes, bool]]:
    """What :func:`scan_records` yields, with each record's WARC headers and whole block, and whether the
    record is the whole one (:func:`read_record_at`'s, payload included): one inflate of a record serves both
    its index entry and whatever else is made of its bytes (the ready responses). With ``whole_responses``,
    a response record whose whole form reads as the index's view does (nearly all: see
    :func:`_whole_response`) comes whole, parsed once for both."""
    offset, end = 0, len(data)
    if end == 0:
        raise ArchiveError("not a WARC file: it holds no records (empty?)", where=name)
    try:
        while offset < end:
            if data[offset : offset + 2] == GZIP_MAGIC:
                raw, length = _inflate_at(data, offset)
                headers, fields, block, used = _split_raw(raw)
                if raw[used:].strip(b"\r\n"):
                    raise Broken("gzip member at offset {offset} holds more than one record (use `warcio recompress`)")
            else:
                if data[offset : offset + 5] != b"WARC/":
                    first = bytes(data[offset : offset + 60]).split(b"\n", 1)[0].decode("latin-1")
                    what = "not a WARC file" if offset == 0 else "no WARC record at offset {offset}"
                    raise Broken(f"{what}: it starts with {first!r}, not 'WARC/1.x'")
                head_end = data.find(b"\r\n\r\n", offset, offset + _HEAD_LIMIT)
                declared = _declared_length(data[offset : max(head_end, offset)])
                stop = head_end + 4 + declared
                following = stop
                while data[following : following + 2] == b"\r\n":
                    following += 2
                headers, fields, block, _ = _split_raw(data[offset:stop])
                length = following - offset
            whole = _whole_response(headers, fields, block, offset, length) if whole_responses else None
            if whole is not None:
                yield whole, headers, block, True
            else:
                view, whole_view = _index_view(headers, fields, block, offset, length)
                yield view, headers, block, whole_view
            offset += length
            while offset < end and data[offset : offset + 1] in (b"\r", b"\n"):
                offset += 1  # blank lines between uncompressed records
    except PARSE_ERRORS as e:
        raise archive_error(name, offset, e) from e


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
                raise Broken("truncated gzip member at offset {offset}: the file ends inside it")
            parts.append(inflater.decompress(chunk))
            pos += len(chunk)
            step = min(step * 2, 1 << 22)
    except zlib.error as e:
        raise Broken(f"corrupt gzip member at offset {{offset}}: {e}") from e
    return b"".join(parts), pos - offset - len(inflater.unused_data)


def _declared_length(head: bytes) -> int:
    for line in head.split(b"\r\n"):
        name, sep, value = line.partition(b":")
        if sep and name.strip().lower() == b"content-length" and value.strip().isdigit():
            return int(value)
    raise Broken("WARC record at offset {offset} has no valid Content-Length (truncated header?)")


def _parse_raw(raw: bytes, offset: int, length: int) -> tuple[StoredRecord, int]:
    """The record at the start of ``raw`` (one whole uncompressed record) and where its block ends."""
    headers, fields, block, stop = _split_raw(raw)
    return _whole(headers, fields, block, offset, length), stop


def _whole(
    headers: list[tuple[str, str]],
    fields: dict[str, str],
    block: bytes,
    offset: int,
    length: int,
    head: tuple[int, str] | None = None,
) -> StoredRecord:
    """The whole record of checked WARC headers (``fields``: their dict) and block; ``head``: what
    :func:`plain_head` found in the block, if it was asked."""
    return stored_record(
        rec_type=fields["WARC-Type"],
        record_id=fields["WARC-Record-ID"],
        url=fields.get("WARC-Target-URI"),
        date=fields["WARC-Date"],
        warc_headers=headers,
        offset=offset,
        length=length,
        block=block,
        digests="skip",
        head=head,
    )


def _split_raw(raw: bytes) -> tuple[list[tuple[str, str]], dict[str, str], bytes, int]:
    """WARC headers (and their dict: the last value of a repeated name), block, and the end of the block of the
    record at the start of ``raw``, checked."""
    head_end = raw.find(b"\r\n\r\n")
    if not raw.startswith(b"WARC/") or head_end < 0:
        raise Broken("no WARC record at offset {offset}")
    text = raw[:head_end].decode("utf-8", "replace")
    headers = [
        (n.strip(), v.strip()) for n, colon, v in [line.partition(":") for line in text.split("\r\n")[1:]] if colon
    ]
    fields = dict(headers)
    target = fields.get("WARC-Target-URI")
    # Most records have one WARC-Target-URI spelled so, needing no repair: skip the pass over every header.
    if text.lower().count("warc-target-uri") != (target is not None) or (target and _needs_repair(target)):
        headers = target_uri_fixed(headers)
        fields = dict(headers)
    length_text = fields.get("Content-Length", "")
    if not (length_text.isascii() and length_text.isdigit()):
        raise Broken("WARC record at offset {offset} has no valid Content-Length (truncated header?)")
    declared = int(length_text)
    stop = head_end + 4 + declared
    block = raw[head_end + 4 : stop]
    if len(block) < declared:
        raise Broken(f"truncated WARC record at offset {{offset}}: Content-Length is {declared} bytes")
    if not (fields.get("WARC-Type") and fields.get("WARC-Record-ID") and fields.get("WARC-Date")):
        missing = [n for n in ("WARC-Type", "WARC-Record-ID", "WARC-Date") if not fields.get(n)]
        raise Broken(f"WARC record at offset {{offset}} lacks {', '.join(missing)}")
    return headers, fields, block, stop


def _needs_repair(uri: str) -> bool:
    return " " in uri or (uri.startswith("<") and uri.endswith(">"))


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


def _index_view(
    headers: list[tuple[str, str]], fields: dict[str, str], block: bytes, offset: int, length: int
) -> tuple[StoredRecord, bool]:
    """What an index reads of a record (its checked WARC headers and block, as :func:`_split_raw` gives them):
    its WARC headers, the HTTP status or method, the Content-Type and Transfer-Encoding headers only, and
    the payload of a request with a body (or of a response without a payload digest, which the index must
    compute); and whether that is the whole record (as :func:`read_record_at` reads it)."""
    rec_type, url = fields["WARC-Type"], fields.get("WARC-Target-URI")
    record_id, date = fields["WARC-Record-ID"], fields["WARC-Date"]
    if rec_type == "request" and block.startswith((b"GET ", b"HEAD ")) and has_http(rec_type, url, block):
        # the index keeps only the method of a request without a body: its head need not be parsed
        method = block[: block.index(b" ")].decode("ascii")
        return built_record(rec_type, record_id, url, date, headers, offset, length, method=method), False
    keep = rec_type == "request" or (rec_type == "response" and not fields.get("WARC-Payload-Digest"))
    if keep or not has_http(rec_type, url, block) or (head_end := block.find(b"\r\n\r\n")) < 0:
        return _whole(headers, fields, block, offset, length), True  # (no blank line: the full parser decides)
    head = block[:head_end]
    parsed = parse_status_line(head[: head.find(b"\r\n") if b"\r\n" in head else len(head)].decode("latin-1"))
    if parsed is None:
        raise Broken(f"{rec_type} record at offset {{offset}} has no HTTP status line")
    wanted = [(k.decode("latin-1"), v.rstrip(b" \t").decode("latin-1")) for k, v in _INDEXED_HTTP.findall(head)]
    record = built_record(
        rec_type,
        record_id,
        url,
        date,
        headers,
        offset,
        length,
        status=parsed.code,
        reason=parsed.reason,
        written_status=parsed.written,
        http_headers=wanted,
    )
    return record, False


def _whole_response(
    headers: list[tuple[str, str]], fields: dict[str, str], block: bytes, offset: int, length: int
) -> StoredRecord | None:
    """The whole record of a response whose whole parse reads what :func:`_index_view` reads: an HTTP message
    with a plain head (:func:`plain_head`) whose status line starts with no white space, so that the first
    Content-Type of its headers is the first line :data:`_INDEXED_HTTP` finds and its status line is the view's
    raw first line; None for any other record, and for one the whole parse refuses (the view then says why)."""
    if fields["WARC-Type"] != "response":
        return None
    if not block or block[:1].decode("latin-1").isspace():
        return None
    head = plain_head(block)
    if head is None:
        return None
    try:
        return _whole(headers, fields, block, offset, length, head)
    except PARSE_ERRORS:
        return None


def _gunzip_member(data: bytes) -> bytes:
    """The content of the one gzip member ``data`` must be exactly."""
    inflater = zlib.decompressobj(wbits=31)
    try:
        raw = inflater.decompress(data)
    except zlib.error as e:
        raise Broken(f"corrupt gzip member at offset {{offset}}: {e}") from e
    if not inflater.eof:
        raise Broken("truncated gzip member at offset {offset}: the file ends inside it")
    if inflater.unused_data:
        raise Broken("gzip member at offset {offset} is shorter than its index entry says")
    return raw
