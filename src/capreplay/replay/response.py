"""Turning an archived response into the response replay sends: pure functions, no server.

Hop-by-hop headers describe one connection, not the resource, and ``Alt-Svc`` would send Chromium to
QUIC on the local port, so they are dropped; the body keeps its original Content-Encoding.
"""

from __future__ import annotations

import re
from typing import NamedTuple

DROPPED_HEADERS: frozenset[str] = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "proxy-connection",
        "te",
        "trailer",
        "trailers",
        "transfer-encoding",
        "upgrade",
        "alt-svc",
        "content-length",
    }
)

_RANGE = re.compile(r"^bytes=(\d*)-(\d*)$")
_CONTENT_RANGE = re.compile(r"^bytes (\d+)-(\d+)/(\d+|\*)$")


class Outgoing(NamedTuple):
    """The status, headers and body that replay sends for one request. (A NamedTuple, not a frozen dataclass:
    one is made for every archived response when the ready responses are built: twice as fast.)"""

    status: int
    reason: str
    headers: list[tuple[str, str]]
    body: bytes


def replay_headers(headers: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The archived headers minus hop-by-hop, ``Alt-Svc`` and ``Content-Length`` (the server sets it)."""
    return [(k, v) for k, v in headers if k.lower() not in DROPPED_HEADERS]


def header(headers: list[tuple[str, str]], name: str) -> str | None:
    """The first value of header ``name`` (case-insensitive), or None."""
    name = name.lower()
    return next((v for k, v in headers if k.lower() == name), None)


def full_body(status: int, headers: list[tuple[str, str]], body: bytes) -> tuple[int, bytes] | None:
    """Where the archived body starts in the whole resource: ``(start, body)``, or None if unknown.

    A 200 holds the whole resource from byte 0; a 206 holds the part its Content-Range names.
    """
    if status == 200:
        return 0, body
    if status == 206:
        m = _CONTENT_RANGE.match((header(headers, "content-range") or "").strip())
        if m and int(m.group(2)) - int(m.group(1)) + 1 == len(body):
            return int(m.group(1)), body
    return None


def total_length(status: int, headers: list[tuple[str, str]], body: bytes) -> int | None:
    """Length of the whole resource, when the archived response tells it."""
    if status == 200:
        return len(body)
    m = _CONTENT_RANGE.match((header(headers, "content-range") or "").strip())
    return int(m.group(3)) if m and m.group(3) != "*" else None


def parse_range(value: str, total: int) -> tuple[int, int] | None:
    """The inclusive byte range ``(first, last)`` a single-range ``Range`` header asks for, or None."""
    m = _RANGE.match(value.strip())
    if not m or (not m.group(1) and not m.group(2)):
        return None
    if not m.group(1):
        suffix = int(m.group(2))
        return (max(total - suffix, 0), total - 1) if suffix else None
    first = int(m.group(1))
    last = int(m.group(2)) if m.group(2) else total - 1
    if first >= total or last < first:
        return None
    return first, min(last, total - 1)


def serve_range(archived: Outgoing, range_value: str) -> Outgoing | None:
    """A 206 for ``range_value`` cut from an archived 200 or 206, or None when it cannot be served.

    Ranges of content-encoded bodies are not served: the byte offsets would be of the encoded form.
    """
    if header(archived.headers, "content-encoding") not in (None, "identity"):
        return None
    located = full_body(archived.status, archived.headers, archived.body)
    total = total_length(archived.status, archived.headers, archived.body)
    if located is None or total is None:
        return None
    start, body = located
    wanted = parse_range(range_value, total)
    if wanted is None:
        return None
    first, last = wanted
    if first < start or last >= start + len(body):
        return None
    headers = [(k, v) for k, v in archived.headers if k.lower() not in ("content-range", "accept-ranges")]
    headers += [("Content-Range", f"bytes {first}-{last}/{total}"), ("Accept-Ranges", "bytes")]
    return Outgoing(206, "Partial Content", headers, body[first - start : last - start + 1])


def miss_page(url: str, nearest: str | None, snapshot_id: str) -> Outgoing:
    """The 404 a request gets when its URL is not in the snapshot."""
    from html import escape

    near = f"<p>Nearest archived URL: <code>{escape(nearest)}</code></p>" if nearest else ""
    html = (
        "<!doctype html><meta charset=utf-8><title>Not in snapshot</title>"
        f"<h1>Not in snapshot</h1><p>capreplay has no archived response for <code>{escape(url)}</code> "
        f"in snapshot <code>{escape(snapshot_id[:16])}</code>.</p>{near}"
    ).encode()
    headers = [("Content-Type", "text/html; charset=utf-8"), ("Cache-Control", "no-store"), ("X-Capreplay", "miss")]
    return Outgoing(404, "Not Found", headers, html)
