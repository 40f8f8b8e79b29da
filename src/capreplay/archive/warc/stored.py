"""A WARC record as it is stored, made from its block: the HTTP message split out, its digests checked.

Both readers (:mod:`.read`, warcio's strict parsing of any file, and :mod:`.scan`, the lean parser of a
snapshot's own files) build their records here, so a record read either way is the same record, and every
problem found is one :class:`ArchiveError` naming the file and the offset.
"""

from __future__ import annotations

import functools
import zlib
from dataclasses import dataclass, field
from typing import Literal, NamedTuple

from warcio.exceptions import ArchiveLoadFailed
from warcio.statusandheaders import StatusAndHeadersParserException

from capreplay.archive.warc.digests import DigestFinding, check_record
from capreplay.archive.warc.http import Status, dechunk, is_chunked, parse_http_head, parse_status_line
from capreplay.errors import ArchiveError

GZIP_MAGIC = b"\x1f\x8b"
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
        single = self._single
        if single is not None:
            return single.get(name.lower())
        values = self._by_name.get(name.lower())
        return values[0] if values else None

    def warc_header_values(self, name: str) -> list[str]:
        """Every value of WARC header ``name``, e.g. a repeated WARC-Concurrent-To."""
        single = self._single
        if single is not None:
            value = single.get(name.lower())
            return [] if value is None else [value]
        return self._by_name.get(name.lower(), [])

    # Indexing asks each record for several headers: one pass over them instead of one per question.
    @functools.cached_property
    def _single(self) -> dict[str, str] | None:
        """Lowercase name -> value, when no name is repeated (nearly every record); else None."""
        found = {n.lower(): v for n, v in self.warc_headers}
        return found if len(found) == len(self.warc_headers) else None

    @functools.cached_property
    def _by_name(self) -> dict[str, list[str]]:
        found: dict[str, list[str]] = {}
        for n, v in self.warc_headers:
            found.setdefault(n.lower(), []).append(v)
        return found

    def http_header(self, name: str) -> str | None:
        """The first HTTP header called ``name`` (case-insensitive), or None."""
        lower = name.lower()
        for n, v in self.http_headers:
            if n.lower() == lower:
                return v
        return None


class Broken(Exception):
    """A problem found inside warcio's machinery. ``{offset}`` in the text is filled in by the caller."""


# warcio's own exceptions for input it cannot parse; anything else would be a bug worth a traceback
PARSE_ERRORS = (Broken, ArchiveLoadFailed, StatusAndHeadersParserException, zlib.error)


type Digests = Literal["skip", "refuse", "note"]


def stored_record(
    *,
    rec_type: str,
    record_id: str,
    url: str | None,
    date: str,
    warc_headers: list[tuple[str, str]],
    offset: int,
    length: int,
    block: bytes,
    digests: Digests,
    head: tuple[int, str] | None = None,
) -> StoredRecord:
    """The record of a whole block: its HTTP message split out, digests checked when asked. ``head``: what
    :func:`plain_head` found in ``block``, when the caller already asked it."""
    message = split_http(rec_type, block, head) if has_http(rec_type, url, block) else None
    payload = message.payload if message else block
    findings: tuple[DigestFinding, ...] = ()
    if digests != "skip" and rec_type != "revisit":
        # revisits carry the digest of the payload they stand for, not their own (warcio skips them too)
        headers = message.headers if message else None
        checked = payload
        if message and url and url[:3].lower() in ("ws:", "wss"):
            # A WebSocket handshake under ws(s): warcio reads HTTP only under http(s), so a WARC that passes
            # ``warcio check`` hashed the whole block; a body digest is the documented ``http-body`` form.
            checked, headers = block, None
        findings = tuple(check_record(block=block, payload=checked, headers=headers, labels=dict(warc_headers)))
        wrong = next((f for f in findings if f.form is None), None)
        if wrong and digests == "refuse":
            raise Broken(
                f"{wrong.digest} digest of the record at offset {{offset}} ({record_id}, {url or 'no URI'}) does "
                f"not match: the record says {wrong.expected}, its bytes give {wrong.actual} "
                "(--allow-digest-mismatch imports it anyway)"
            )
    if message and is_chunked(message.headers):
        plain = dechunk(payload)
        payload = payload if plain is None else plain
    return built_record(
        rec_type,
        record_id,
        url,
        date,
        warc_headers,
        offset,
        length,
        status=message.status.code if message and message.status else None,
        reason=message.status.reason if message and message.status else None,
        written_status=message.status.written if message and message.status else None,
        method=message.method if message else None,
        http_headers=message.headers if message else [],
        payload=payload,
        digests=findings,
    )


def built_record(
    rec_type: str,
    record_id: str,
    url: str | None,
    date: str,
    warc_headers: list[tuple[str, str]],
    offset: int,
    length: int,
    *,
    status: int | None = None,
    reason: str | None = None,
    written_status: str | None = None,
    digests: tuple[DigestFinding, ...] = (),
    method: str | None = None,
    http_headers: list[tuple[str, str]] | None = None,
    payload: bytes = b"",
) -> StoredRecord:
    """``StoredRecord(...)`` of these fields, the same object, made without the frozen dataclass's ``__init__``
    (one ``object.__setattr__`` per field: 4 µs a record, 5% of an index build): the instance's dict is
    set at once, its keys in field order."""
    record = object.__new__(StoredRecord)
    object.__setattr__(
        record,
        "__dict__",
        {
            "rec_type": rec_type,
            "record_id": record_id,
            "url": url,
            "date": date,
            "warc_headers": warc_headers,
            "offset": offset,
            "length": length,
            "status": status,
            "reason": reason,
            "written_status": written_status,
            "digests": digests,
            "method": method,
            "http_headers": [] if http_headers is None else http_headers,
            "payload": payload,
        },
    )
    return record


class _HttpMessage(NamedTuple):
    headers: list[tuple[str, str]]
    payload: bytes
    status: Status | None = None
    method: str | None = None


def split_http(rec_type: str, block: bytes, head: tuple[int, str] | None = None) -> _HttpMessage:
    start_line, headers, payload = _plain_head(block, head) or parse_http_head(block)
    if rec_type == "request":
        method = start_line.split(" ", 1)[0]
        if not method:
            raise Broken("request record at offset {offset} has no request line")
        return _HttpMessage(headers, payload, method=method)
    parsed = parse_status_line(start_line)
    if parsed is None:
        raise Broken(f"{rec_type} record at offset {{offset}} has no HTTP status line: {start_line[:60]!r}")
    return _HttpMessage(headers, payload, status=parsed)


def plain_head(block: bytes) -> tuple[int, str] | None:
    """Where the head of the HTTP message ``block`` ends and its text, when it ends at a CRLF blank line,
    every line break in it is a CRLF and no header line is folded (the head of nearly every record); None
    for any other message."""
    end = block.find(b"\r\n\r\n")
    if end < 0:
        return None
    text = block[:end].decode("latin-1")
    breaks = text.count("\r\n")
    if text.count("\r") != breaks or text.count("\n") != breaks or "\n " in text or "\n\t" in text:
        return None  # a bare CR or LF, or a folded line: the general parser decides
    return end, text


def _plain_head(block: bytes, found: tuple[int, str] | None = None) -> tuple[str, list[tuple[str, str]], bytes] | None:
    """What :func:`parse_http_head` returns for a :func:`plain_head` message, in one pass that needs no
    per-line checks; None for any other message. ``found``: :func:`plain_head` of ``block``, if known."""
    found = found or plain_head(block)
    if found is None:
        return None
    end, text = found
    lines = text.split("\r\n")
    split = [line.partition(":") for line in lines[1:]]
    headers = [(name.rstrip(" \t"), value.strip(" \t")) for name, colon, value in split if colon and name.strip()]
    return lines[0].strip(), headers, block[end + 4 :]


def has_http(rec_type: str | None, url: str | None, block: bytes) -> bool:
    """Does the block hold an HTTP message? A revisit may store no HTTP head at all."""
    if rec_type not in _HTTP_RECORDS or not block or not url:
        return False
    if not url.lower().startswith(("http://", "https://", "ws://", "wss://")):  # a WebSocket handshake is HTTP
        return False
    return rec_type != "revisit" or block.startswith(b"HTTP/")


def archive_error(where: str, offset: int, e: Exception) -> ArchiveError:
    """One clear line for a problem at ``offset``."""
    if isinstance(e, Broken):
        return ArchiveError(str(e).replace("{offset}", str(offset)), where=where)
    text = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
    if "non-chunked gzip" in str(e):
        text = "a gzip member holds more than one record (use `warcio recompress`)"
    elif text.startswith(("Invalid WARC record", "Unknown archive format")):
        first = text.split("first line:", 1)[-1].strip()
        what = "not a WARC file" if offset == 0 else f"no WARC record at offset {offset}"
        return ArchiveError(f"{what}: it starts with {first[:60]!r}, not 'WARC/1.x'", where=where)
    return ArchiveError(f"cannot read the record at offset {offset}: {text[:200]}", where=where)
