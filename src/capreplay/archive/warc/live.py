"""WebSocket messages and event-stream timelines as WARC records, and back. Pure: values to bytes and bytes to values.

The layout follows the proposal for WebSockets in WARC that Webrecorder prototyped and put to the IIPC
(iipc/warc-specifications issue 115, Browsertrix Crawler pull request 1020): the handshake stays an ordinary
``request``/``response`` pair (the response is ``101 Switching Protocols`` with no body), and the messages go
into one ``resource`` record of their own, written when the connection ends:

- ``WARC-Type: resource``, ``WARC-Target-URI`` the ``ws://``/``wss://`` URL, ``WARC-Resource-Type: websocket``,
  ``Content-Type: application/jsonl``, ``WARC-Concurrent-To`` the handshake's response record;
- one JSON object a line, in the order the client saw them: ``ts`` (seconds since the handshake's response),
  ``type`` (``send`` from the page, ``receive`` from the server, as Chrome names them), ``opcode`` (1 text,
  2 binary, 8 close), ``payloadData`` (the text, or base64 of a binary payload), and for a close
  ``closeCode`` and ``closeReason``;
- ``WARC-Truncated: time`` when the connection was still open as the capture ended.

An event stream's body is stored in its ``response`` record exactly as it arrived (so any WARC reader sees
the events), and a ``metadata`` record next to it (``WARC-Concurrent-To`` the response,
``WARC-Resource-Type: event-stream``, ``Content-Type: application/jsonl``) says when each event was whole:
``ts`` (seconds since the response headers), ``end`` (the offset just past the event in the body) and ``id``
(the last event id in force after it). A stream the capture ended at the page's settle point carries
``WARC-Truncated: time`` on both records.
"""

from __future__ import annotations

import base64
import binascii
import json
from datetime import datetime

from pydantic import ValidationError

from capreplay.archive.warc.build import format_warc_date, new_record_id, plain_record
from capreplay.errors import ArchiveError
from capreplay.models.live_traffic import (
    OPCODE_BINARY,
    OPCODE_CLOSE,
    OPCODE_TEXT,
    StreamEvent,
    StreamTimeline,
    WebSocketLog,
    WebSocketMessage,
)

JSONL = "application/jsonl"
RESOURCE_TYPE_HEADER = "WARC-Resource-Type"
WEBSOCKET_RESOURCE = "websocket"
EVENT_STREAM_RESOURCE = "event-stream"
TRUNCATED_HEADER = "WARC-Truncated"


def websocket_url(url: str) -> str:
    """The ``ws://``/``wss://`` form of a handshake URL (``http``/``https`` as a proxy sees it)."""
    scheme, sep, rest = url.partition("://")
    return {"http": "ws", "https": "wss"}.get(scheme.lower(), scheme.lower()) + sep + rest if sep else url


def http_url(url: str) -> str:
    """The ``http://``/``https://`` form of a ``ws://``/``wss://`` URL (the form the replay matches on)."""
    scheme, sep, rest = url.partition("://")
    return {"ws": "http", "wss": "https"}.get(scheme.lower(), scheme) + sep + rest if sep else url


def websocket_record(
    log: WebSocketLog,
    *,
    concurrent_to: str,
    date: datetime,
    warcinfo_id: str | None = None,
    record_id: str | None = None,
) -> bytes:
    """The ``resource`` record holding every message of ``log``; ``concurrent_to`` is the handshake's response id."""
    headers = _headers("resource", log.url, concurrent_to, date, warcinfo_id, record_id)
    headers.append((RESOURCE_TYPE_HEADER, WEBSOCKET_RESOURCE))
    if log.ended == "cut":
        headers.append((TRUNCATED_HEADER, "time"))
    body = b"".join(_line(m.as_line()) for m in log.messages)
    return plain_record("resource", headers, body, JSONL)


def stream_timeline_record(
    timeline: StreamTimeline,
    *,
    concurrent_to: str,
    date: datetime,
    warcinfo_id: str | None = None,
    record_id: str | None = None,
) -> bytes:
    """The ``metadata`` record with ``timeline``'s event times; ``concurrent_to`` is the stream's response id."""
    headers = _headers("metadata", timeline.url, concurrent_to, date, warcinfo_id, record_id)
    headers.append((RESOURCE_TYPE_HEADER, EVENT_STREAM_RESOURCE))
    if timeline.ended == "cut":
        headers.append((TRUNCATED_HEADER, "time"))
    body = b"".join(_line(e.model_dump(exclude_none=True)) for e in timeline.events)
    return plain_record("metadata", headers, body, JSONL)


def read_websocket_messages(url: str, payload: bytes, *, truncated: str | None = None) -> WebSocketLog:
    """The :class:`WebSocketLog` of a ``websocket`` resource record's payload; ``truncated`` its WARC-Truncated."""
    messages = []
    for number, obj in _objects(payload, url):
        try:
            messages.append(_message(obj))
        except (KeyError, TypeError, ValueError, binascii.Error, ValidationError) as e:
            raise ArchiveError(f"WebSocket message {number} is malformed: {e}", where=url) from e
    return WebSocketLog(url=url, messages=messages, ended="cut" if truncated else "closed")


def read_stream_timeline(url: str, payload: bytes, *, truncated: str | None = None) -> StreamTimeline:
    """The :class:`StreamTimeline` of an ``event-stream`` metadata record's payload."""
    events = []
    for number, obj in _objects(payload, url):
        try:
            events.append(StreamEvent.model_validate(obj))
        except ValidationError as e:
            raise ArchiveError(f"event-stream entry {number} is malformed: {e}", where=url) from e
    return StreamTimeline(url=url, events=events, ended="cut" if truncated else "closed")


def _message(obj: dict[str, object]) -> WebSocketMessage:
    opcode = int(obj["opcode"])  # type: ignore[call-overload]
    common = {"ts": obj["ts"], "type": obj["type"], "opcode": opcode}
    if opcode == OPCODE_CLOSE:
        close = {"close_code": obj.get("closeCode"), "close_reason": obj.get("closeReason", "")}
        return WebSocketMessage.model_validate({**common, **close})
    data = obj.get("payloadData", "")
    if not isinstance(data, str):
        raise TypeError("payloadData is not a string")
    if opcode == OPCODE_TEXT:
        payload = data.encode("utf-8", "surrogateescape")
    elif opcode == OPCODE_BINARY:
        payload = base64.b64decode(data, validate=True)
    else:
        raise ValueError(f"opcode {opcode} is not a data or close frame")
    return WebSocketMessage.model_validate({**common, "payload": payload})


def _objects(payload: bytes, url: str) -> list[tuple[int, dict[str, object]]]:
    found = []
    for number, raw in enumerate(payload.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw)
        except ValueError as e:
            raise ArchiveError(f"line {number} is not JSON: {e}", where=url) from e
        if not isinstance(obj, dict):
            raise ArchiveError(f"line {number} is not a JSON object", where=url)
        found.append((number, obj))
    return found


def _headers(
    rec_type: str, url: str, concurrent_to: str, date: datetime, warcinfo_id: str | None, record_id: str | None
) -> list[tuple[str, str]]:
    headers = [
        ("WARC-Type", rec_type),
        ("WARC-Record-ID", record_id or new_record_id()),
        ("WARC-Date", format_warc_date(date)),
        ("WARC-Target-URI", url),
        ("WARC-Concurrent-To", concurrent_to),
    ]
    if warcinfo_id:
        headers.append(("WARC-Warcinfo-ID", warcinfo_id))
    return headers


def _line(obj: dict[str, object]) -> bytes:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "surrogateescape") + b"\n"
