"""Server-sent events in a ``text/event-stream`` body: where each event ends, its id, and when it arrived. Pure.

The parsing follows the HTML standard's event-stream interpretation: lines end with CRLF, LF or CR; a blank
line dispatches the event; an ``id`` field (without NULL) sets the last event id, which stays in force
for the events after it until another ``id`` changes it; one leading byte order mark is ignored.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Literal

from capreplay.models.live_traffic import StreamEvent, StreamTimeline

EVENT_STREAM_TYPE = "text/event-stream"
_LINE = re.compile(rb"[^\r\n]*(?:\r\n|\r|\n)")
_BOM = b"\xef\xbb\xbf"


def is_event_stream(content_type: str | None) -> bool:
    """Whether a Content-Type names an event stream."""
    return (content_type or "").split(";", 1)[0].strip().lower() == EVENT_STREAM_TYPE


def event_ends(body: bytes) -> list[tuple[int, str | None]]:
    """For each complete event of ``body``: the offset just past its blank line, and the last event id then.

    A comment block or a block with no data still ends at its blank line and is listed: a client reading
    the stream receives those bytes at that moment too (keep-alive comments are what paces many streams).
    """
    ends: list[tuple[int, str | None]] = []
    last_id: str | None = None
    in_block = False
    offset = 0
    for match in _LINE.finditer(body, len(_BOM) if body.startswith(_BOM) else 0):
        line = match.group()
        offset = match.end()
        content = line.rstrip(b"\r\n")
        if not content:
            if in_block:
                ends.append((offset, last_id))
            in_block = False
            continue
        in_block = True
        name, _, value = content.partition(b":")
        if name == b"id" and b"\0" not in value:
            last_id = (value[1:] if value.startswith(b" ") else value).decode("utf-8", "replace")
    return ends


def timeline_from_chunks(
    url: str, chunks: Iterable[tuple[float, bytes]], *, ended: Literal["closed", "cut"]
) -> tuple[bytes, StreamTimeline]:
    """The whole body and its :class:`StreamTimeline` from the ``(seconds since headers, bytes)`` chunks as they
    arrived: each event is timed by the chunk that completed it. Bytes after the last complete event (an event
    cut off by the end of the capture) stay in the body, untimed."""
    body = bytearray()
    arrivals: list[tuple[int, float]] = []
    for ts, data in chunks:
        body.extend(data)
        arrivals.append((len(body), ts))
    events = []
    index = 0
    for end, last_id in event_ends(bytes(body)):
        # A client dispatches at the CR of a CRLF: an LF that came in the next chunk does not delay the event.
        due = end - 1 if body[end - 2 : end] == b"\r\n" else end
        while arrivals[index][0] < due:
            index += 1
        events.append(StreamEvent(ts=arrivals[index][1], end=end, id=last_id))
    return bytes(body), StreamTimeline(url=url, events=events, ended=ended)


def resume_index(timeline: StreamTimeline, last_event_id: str | None) -> int:
    """The index of the first event to send to a client that reconnects with ``Last-Event-ID``.

    The events after the last one whose id is ``last_event_id``; with no such event (or no header) the stream
    starts again from its first event, as the server that was captured had nothing else to go on either.
    """
    if last_event_id is None:
        return 0
    for index in range(len(timeline.events) - 1, -1, -1):
        if timeline.events[index].id == last_event_id:
            return index + 1
    return 0
