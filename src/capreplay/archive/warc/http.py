"""HTTP messages as WARC records store them: the head split from the body, status lines, transfer and
content codings. Pure functions on bytes, shared by the readers, the digest checks and page detection.
"""

from __future__ import annotations

import zlib
from typing import NamedTuple

import brotli  # type: ignore[import-untyped]  # no type hints

MAX_REDIRECTS = 10
"""Archived redirect hops followed from one response, as a browser gives up after about 20."""


def parse_http_head(block: bytes) -> tuple[str, list[tuple[str, str]], bytes]:
    """Split an HTTP message into its start line, headers and payload.

    Header strings are decoded as latin-1, one character per byte, so they go back to the same bytes;
    folded lines are joined and lines without a colon skipped, as HTTP parsers do.
    """
    crlf, lf = block.find(b"\r\n\r\n"), block.find(b"\n\n")
    if crlf >= 0 and (lf < 0 or crlf < lf):
        head, payload = block[:crlf], block[crlf + 4 :]
    elif lf >= 0:
        head, payload = block[:lf], block[lf + 2 :]
    else:
        head, payload = block, b""
    lines = [line.rstrip("\r") for line in head.decode("latin-1").split("\n")]
    headers: list[tuple[str, str]] = []
    for line in lines[1:]:
        if line[:1] in (" ", "\t") and headers:
            name, value = headers[-1]
            headers[-1] = (name, f"{value} {line.strip(' \t')}")
            continue
        name, colon, value = line.partition(":")
        if colon and name.strip():
            headers.append((name.rstrip(" \t"), value.strip(" \t")))
    return lines[0].strip(), headers, payload


class Status(NamedTuple):
    """A response's status as replay serves it."""

    code: int
    reason: str
    written: str | None = None
    """The code as the record wrote it, when HTTP cannot carry it and ``code`` is 204 instead."""


NO_CONTENT = Status(204, "No Content")


def parse_status_line(line: str) -> Status | None:
    """The status of ``HTTP/x.y NNN reason``, or None if ``line`` is no status line at all.

    A line that starts as a status line does (``HTTP/x.y``) but whose code HTTP cannot carry (``0``, a
    word, nothing, anything but three digits from 100 up) stands for ``204 No Content``: pywb serves such
    a record so (its ``ResolvingLoader`` calls warcio's ``validate_statusline('204 No Content')`` on every
    record it loads). The real case is Browsertrix's ``HTTP/1.1 0 No Content`` in openzim/warc2zim's
    status-code test data, the answer to ``/204-response``: a 204 when it was sent. ``written`` keeps the
    code as it stood, for the import's report. pywb lets a number above 999 through; HTTP has no such
    code, and neither Chromium nor an HTTP server takes one, so it is a 204 here too.
    """
    parts = line.split(" ", 2)
    if not parts[0].upper().startswith("HTTP/"):
        return None
    code = parts[1].strip() if len(parts) > 1 else ""
    if len(code) != 3 or not (code.isascii() and code.isdigit()) or code[0] == "0":
        return NO_CONTENT._replace(written=code)
    return Status(int(code), parts[2].strip() if len(parts) > 2 else "")


def is_chunked(headers: list[tuple[str, str]]) -> bool:
    """Is ``chunked`` the last transfer coding the headers announce?"""
    # nearly every message has no Transfer-Encoding: one lower() of all the names tells it (lower-casing a
    # string lower-cases each character, so a name that lowers to it shows in the joined names' lower form)
    if "transfer-encoding" not in "\n".join([n for n, _ in headers]).lower():
        return False
    codings = [c.strip().lower() for n, v in headers if n.lower() == "transfer-encoding" for c in v.split(",")]
    return bool(codings) and codings[-1] == "chunked"


def dechunk(data: bytes) -> bytes | None:
    """The body inside HTTP/1.1 chunk framing, or None if ``data`` is not well-formed chunked data.

    Headers may say chunked while a tool stored the body already de-chunked; None tells the caller to
    keep the bytes as they are rather than guess.
    """
    out = bytearray()
    pos = 0
    while True:
        eol = data.find(b"\n", pos)
        if eol < 0:
            return None
        size_text = data[pos:eol].rstrip(b"\r").split(b";", 1)[0].strip()
        if not size_text or size_text.strip(b"0123456789abcdefABCDEF"):
            return None
        size = int(size_text, 16)
        pos = eol + 1
        if size == 0:
            return bytes(out)  # trailers, if any, are not part of the body
        if pos + size > len(data):
            return None
        out += data[pos : pos + size]
        pos += size
        if data[pos : pos + 2] == b"\r\n":
            pos += 2
        elif data[pos : pos + 1] == b"\n":
            pos += 1
        else:
            return None


def decode_body(encoding: str | None, body: bytes, limit: int | None = None) -> bytes | None:
    """``body`` with the Content-Encoding ``encoding`` undone; None if a coding is unknown or broken.

    ``limit`` stops after that many bytes of the decoded body where a coding allows it (gzip, deflate),
    for callers that need only its start (a page's ``<title>``).
    """
    data = body
    codings = [c.strip().lower() for c in (encoding or "").split(",") if c.strip()]
    for coding in reversed(codings):  # the last coding listed was applied last
        try:
            if coding in ("gzip", "x-gzip"):
                data = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(data, limit or 0)
            elif coding == "deflate":
                data = _inflate(data, limit or 0)
            elif coding == "br":
                data = brotli.decompress(data)
            elif coding != "identity":
                return None
        except (zlib.error, brotli.error):
            return None
    return data if limit is None else data[:limit]


def _inflate(data: bytes, limit: int) -> bytes:
    """Deflate as servers send it: zlib-wrapped as the RFC says, or raw as some servers do."""
    try:
        return zlib.decompressobj().decompress(data, limit)
    except zlib.error:
        return zlib.decompressobj(-zlib.MAX_WBITS).decompress(data, limit)
