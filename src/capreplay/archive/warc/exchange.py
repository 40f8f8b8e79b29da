"""One HTTP exchange as the capture saw it: the unit that becomes a WARC request/response pair."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from capreplay.models.live_traffic import StreamTimeline


@dataclass(frozen=True)
class Exchange:
    """A request and its response, with bytes exactly as they crossed the wire.

    ``response_body`` keeps its Content-Encoding (gzip, br, ...); transfer framing (chunked) is already
    removed, which is why the archive normalises framing headers and keeps the originals aside.
    """

    url: str
    """Absolute URL with the real hostname (never the local address a ``--map`` sent it to)."""
    method: str
    request_headers: list[tuple[str, str]]
    """Request headers in the order sent."""
    request_body: bytes
    http_version: str
    """``HTTP/1.1``, ``HTTP/1.0`` or ``HTTP/2.0`` as the client spoke it."""
    status: int
    reason: str
    response_headers: list[tuple[str, str]]
    """Response headers in the order received."""
    response_body: bytes
    started: datetime
    """When the request was sent (timezone-aware, UTC)."""
    server_ip: str | None = None
    extra: dict[str, str] = field(default_factory=dict)
    """Further WARC headers to write on the response record."""
    timeline: StreamTimeline | None = None
    """For a ``text/event-stream`` response: when each event of ``response_body`` arrived, written as a
    ``metadata`` record next to the response (:func:`capreplay.archive.warc.live.stream_timeline_record`)."""
