"""WebSocket messages and server-sent events in a HAR, to and from capreplay's live-traffic records. Pure.

A HAR holds a WebSocket connection as one entry: its handshake (status 101) with the messages in Chrome's
``_webSocketMessages`` (DevTools and mitmproxy write it): ``{"type": "send"|"receive", "time": <epoch
seconds>, "opcode": 1|2, "data": <text, or base64 of a binary message>}``. An event stream is an ordinary
entry whose ``Content-Type`` is ``text/event-stream``; its body holds the events (mitmproxy keeps none: it
streams them), and some writers add ``_eventSourceMessages``, one ``{"time", "eventName", "eventId", "data"}``
per event dispatched (CDP's ``eventSourceMessageReceived``). Importing, each becomes the records
:mod:`capreplay.archive.warc.live` describes, and exporting writes the same fields back:

- times: the records count seconds since the response headers; a HAR gives wall-clock times. The response
  headers are taken to arrive at ``startedDateTime`` plus the HAR timings before them (``blocked``, ``dns``,
  ``connect``, ``send``, ``wait``; ``-1`` and missing count 0), or at the first message if that is earlier
  (mitmproxy counts connection and TLS set-up inside ``wait`` as well, so its phases overlap). Exported
  entries have zero timings, so their messages' times are ``startedDateTime`` plus ``ts``, and a HAR
  exported and imported again gives the same ``ts``;
- a WebSocket message of another opcode (ping, pong) is left out and counted; a close frame (opcode 8) is
  kept, its ``data`` the reason and its ``closeCode`` (capreplay's export writes one) the code;
- an event stream's timeline: with ``_eventSourceMessages``, each message times the event of the body that
  carries ``data`` in the same place (blocks with no data, keep-alive comments among them, take the time of
  the next timed event, or of the last); an event stream whose HAR gives no times, or times that do not
  pair up with its body's events, has every event at ts 0: replay sends them all at once. A body the HAR
  kept empty but whose ``_eventSourceMessages`` say what came is rebuilt from them (``id``, ``event`` and
  ``data`` lines).
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, TypeGuard

from capreplay.archive.har.content import BadContent, header
from capreplay.archive.har.model import Entry
from capreplay.archive.warc.event_stream import event_ends, is_event_stream
from capreplay.archive.warc.live import http_url, stream_timeline_record, websocket_record, websocket_url
from capreplay.models.live_traffic import (
    OPCODE_BINARY,
    OPCODE_CLOSE,
    OPCODE_TEXT,
    StreamEvent,
    StreamTimeline,
    WebSocketLog,
    WebSocketMessage,
)

WEBSOCKET_FIELD = "_webSocketMessages"
EVENTS_FIELD = "_eventSourceMessages"
_PHASES = ("blocked", "dns", "connect", "send", "wait")
_LINE_END = re.compile(rb"\r\n|\r|\n")


@dataclass(frozen=True)
class Live:
    """What an entry holds besides its exchange: a WebSocket's messages or an event stream's timeline."""

    websocket: WebSocketLog | None = None
    timeline: StreamTimeline | None = None
    body: bytes | None = None
    """An event stream's body rebuilt from ``_eventSourceMessages``, when the HAR kept it empty."""
    timed: bool = True
    """False for an event stream with events but no times for them: all are at ts 0."""
    left_out: int = 0
    """WebSocket messages of opcodes other than text, binary and close."""


def is_websocket(entry: Entry) -> bool:
    """A WebSocket handshake: status 101 with ``_webSocketMessages``, or marked or upgraded as a WebSocket."""
    if entry.response.status != 101:
        return False
    upgrade = header(entry.response.headers, "upgrade") or header(entry.request.headers, "upgrade") or ""
    kind = entry.extra("_resourceType")
    return (isinstance(entry.extra(WEBSOCKET_FIELD), list) or upgrade.strip().lower() == "websocket"
            or (isinstance(kind, str) and kind.lower() == "websocket"))  # fmt: skip


def live_of(entry: Entry, body: bytes) -> Live | None:
    """The live traffic of ``entry`` whose response body is ``body``; None for an ordinary exchange.

    Raises :class:`BadContent` for messages that cannot be read (no time, a bad type, base64 that is not).
    """
    if is_websocket(entry):
        return _websocket(entry)
    content_type = header(entry.response.headers, "content-type") or entry.response.content.mimeType
    if entry.response.status == 200 and is_event_stream(content_type):
        return _stream(entry, body)
    return None


def live_record(live: Live, *, concurrent_to: str, date: datetime, warcinfo_id: str, record_id: str) -> bytes:
    """The record that goes right after the entry's response record (``concurrent_to``)."""
    if live.websocket is not None:
        return websocket_record(live.websocket, concurrent_to=concurrent_to, date=date, warcinfo_id=warcinfo_id,
                                record_id=record_id)  # fmt: skip
    assert live.timeline is not None, "a Live holds a WebSocket log or a timeline"
    return stream_timeline_record(live.timeline, concurrent_to=concurrent_to, date=date, warcinfo_id=warcinfo_id,
                                  record_id=record_id)  # fmt: skip


def har_websocket_messages(log: WebSocketLog, opened: datetime) -> list[dict[str, Any]]:
    """``log`` as ``_webSocketMessages``, timed from ``opened`` (the exported entry's ``startedDateTime``)."""
    start = _utc(opened).timestamp()
    out: list[dict[str, Any]] = []
    for m in log.messages:
        item: dict[str, Any] = {"type": m.type, "time": start + m.ts, "opcode": m.opcode}
        if m.opcode == OPCODE_CLOSE:
            item["data"] = m.close_reason
            if m.close_code is not None:
                item["closeCode"] = m.close_code
        elif m.opcode == OPCODE_TEXT:
            item["data"] = m.payload.decode("utf-8", "surrogateescape")
        else:
            item["data"] = base64.b64encode(m.payload).decode("ascii")
        out.append(item)
    return out


def har_event_messages(body: bytes, timeline: StreamTimeline, opened: datetime) -> list[dict[str, Any]]:
    """The events of ``body`` that carry data as ``_eventSourceMessages``, timed from ``opened``."""
    start = _utc(opened).timestamp()
    out: list[dict[str, Any]] = []
    begin = 0
    for event in timeline.events:
        fields = _fields(body[begin : event.end])
        begin = event.end
        data = [value for name, value in fields if name == "data"]
        if not data:
            continue
        name = next((value for n, value in reversed(fields) if n == "event"), "") or "message"
        out.append({"time": start + event.ts, "eventName": name, "eventId": event.id or "", "data": "\n".join(data)})
    return out


def _websocket(entry: Entry) -> Live:
    raw = entry.extra(WEBSOCKET_FIELD)
    items = raw if isinstance(raw, list) else []
    read: list[tuple[float, dict[str, Any]]] = []
    left_out = 0
    for number, item in enumerate(items):
        if not isinstance(item, dict) or item.get("type") not in ("send", "receive"):
            raise BadContent(f"{WEBSOCKET_FIELD}[{number}] is no message with a type 'send' or 'receive'")
        when, opcode = item.get("time"), item.get("opcode", OPCODE_TEXT)
        if not _number(when) or not isinstance(opcode, int) or isinstance(opcode, bool):
            raise BadContent(f"{WEBSOCKET_FIELD}[{number}] has no numeric time and opcode")
        if opcode not in (OPCODE_TEXT, OPCODE_BINARY, OPCODE_CLOSE):
            left_out += 1
            continue
        read.append((float(when), item))
    base = _headers_time(entry, min((t for t, _ in read), default=None))
    messages = [_message(number, max(0.0, when - base), item) for number, (when, item) in enumerate(read)]
    log = WebSocketLog(url=websocket_url(entry.request.url.split("#", 1)[0]), messages=messages)
    return Live(websocket=log, left_out=left_out)


def _message(number: int, ts: float, item: dict[str, Any]) -> WebSocketMessage:
    data = item.get("data") or ""
    if not isinstance(data, str):
        raise BadContent(f"{WEBSOCKET_FIELD}[{number}].data is not a string")
    opcode = item.get("opcode", OPCODE_TEXT)
    if opcode == OPCODE_CLOSE:
        code = item.get("closeCode")
        return WebSocketMessage.make_close(ts, item["type"], code if isinstance(code, int) else None, data)
    if opcode == OPCODE_TEXT:
        return WebSocketMessage(ts=ts, type=item["type"], opcode=opcode, payload=data.encode("utf-8", "surrogatepass"))
    try:
        payload = base64.b64decode("".join(data.split()), validate=True)
    except (binascii.Error, ValueError) as e:
        raise BadContent(f"{WEBSOCKET_FIELD}[{number}].data is not valid base64 ({e})") from e
    return WebSocketMessage(ts=ts, type=item["type"], opcode=opcode, payload=payload)


def _stream(entry: Entry, body: bytes) -> Live:
    raw = entry.extra(EVENTS_FIELD)
    items = [i for i in raw if isinstance(i, dict)] if isinstance(raw, list) else []
    rebuilt = _body_of(items) if items and not body else None
    body = body if rebuilt is None else rebuilt
    ends = event_ends(body)
    starts = [0, *(end for end, _ in ends)][: len(ends)]
    with_data = [i for i, (start, (end, _)) in enumerate(zip(starts, ends, strict=True))
                 if any(name == "data" for name, _ in _fields(body[start:end]))]  # fmt: skip
    times = [float(t) for i in items if _number(t := i.get("time"))]
    timed = bool(with_data) and len(times) == len(items) == len(with_data)
    ts = [0.0] * len(ends)
    if timed:
        base = _headers_time(entry, min(times))
        at = {i: max(0.0, t - base) for i, t in zip(with_data, times, strict=True)}
        following = at[with_data[-1]]  # blocks after the last event with data: its time
        for i in range(len(ends) - 1, -1, -1):  # a block without data had arrived by the next event with data
            following = at.get(i, following)
            ts[i] = following
    events = [StreamEvent(ts=t, end=end, id=last_id) for t, (end, last_id) in zip(ts, ends, strict=True)]
    timeline = StreamTimeline(url=http_url(entry.request.url.split("#", 1)[0]), events=events)
    return Live(timeline=timeline, body=rebuilt, timed=timed or not ends)


def _body_of(items: list[dict[str, Any]]) -> bytes:
    """An event-stream body that dispatches ``items`` (``_eventSourceMessages``) in order."""
    lines: list[str] = []
    for item in items:
        event_id, name, data = item.get("eventId"), item.get("eventName"), item.get("data")
        if isinstance(event_id, str) and event_id:
            lines.append(f"id: {event_id}")
        if isinstance(name, str) and name and name != "message":
            lines.append(f"event: {name}")
        lines.extend(f"data: {line}" for line in (data if isinstance(data, str) else "").split("\n"))
        lines.append("")
    return "".join(line + "\n" for line in lines).encode("utf-8")


def _fields(block: bytes) -> list[tuple[str, str]]:
    """The (name, value) fields of one event block, comments left out, as the HTML standard reads them."""
    out = []
    for line in _LINE_END.split(block.removeprefix(b"\xef\xbb\xbf")):
        if not line or line.startswith(b":"):
            continue
        name, colon, value = line.partition(b":")
        value = value[1:] if colon and value.startswith(b" ") else value
        out.append((name.decode("utf-8", "replace"), value.decode("utf-8", "replace")))
    return out


def _headers_time(entry: Entry, first: float | None) -> float:
    """When the response headers arrived, in epoch seconds (see the module docstring)."""
    phases = entry.timings.model_dump()
    spent = 0.0
    for name in _PHASES:
        value = phases.get(name)
        if _number(value) and value > 0:
            spent += value
    at = _utc(entry.startedDateTime).timestamp() + spent / 1000
    return at if first is None else min(at, first)


def _number(value: object) -> TypeGuard[float]:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _utc(when: datetime) -> datetime:
    return when.replace(tzinfo=UTC) if when.tzinfo is None else when.astimezone(UTC)
