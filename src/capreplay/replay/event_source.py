"""Replaying event streams: which recording answers a request, and sending its events paced as they came.

A ``GET`` of a URL whose exact key holds a ``text/event-stream`` recording is answered here, not in one piece
(:func:`stream_answer`). Among that key's ``GET`` recordings (streams, and whatever else the server answered
there, such as the ``204`` that tells ``EventSource`` to stop):

1. the first one, in capture order, whose request carried the same ``Last-Event-ID`` as this one (or, like this
   one, none): what the server answered to this very request, so a reconnect gets what it got then;
2. else, for a ``Last-Event-ID`` that some recorded stream holds, that stream from the event after it
   (rule ``last-event-id``); when no stream holds anything after it, a ``204`` that ends the reconnecting;
3. else the first stream from its start, as the captured server would have had nothing to go on either.

The events are then sent with the captured gaps, each at most :data:`capreplay.replay.pacing.GAP_CAP_S`
(:func:`send_stream`). A stream the server closed is closed after its last event, and ``EventSource``
reconnects as it did; a stream the capture cut stays open, sending nothing more, until the client goes or the
server stops (closing it would make ``EventSource`` reconnect forever). The request counts as in flight only
until its headers are out, so an open stream does not keep a page from settling.
"""

from __future__ import annotations

import asyncio
import contextlib
import weakref
from dataclasses import dataclass
from typing import Literal

from aiohttp import web
from multidict import CIMultiDict

from capreplay.archive.index.cdxj import IndexEntry
from capreplay.archive.index.keys import surt
from capreplay.archive.warc.event_stream import EVENT_STREAM_TYPE, is_event_stream, resume_index
from capreplay.errors import ArchiveError
from capreplay.models.live_traffic import StreamTimeline
from capreplay.replay.answer import Result, Served
from capreplay.replay.pacing import gaps
from capreplay.replay.quiet import release
from capreplay.replay.response import Outgoing, header
from capreplay.replay.store import SnapshotStore, outgoing
from capreplay.replay.stream_timelines import timeline_of

RESUME_RULE = "last-event-id"
_MIME = b'"mime":"' + EVENT_STREAM_TYPE.encode() + b'"'
_POLL_S = 0.25
"""How often an open, cut stream looks whether its client is still there."""
_STOPPING: weakref.WeakKeyDictionary[web.Application, asyncio.Event] = weakref.WeakKeyDictionary()
"""Set for an app when it shuts down."""


@dataclass(frozen=True)
class StreamAnswer:
    """What to send for one event-stream request: the head, the body in timed pieces, and how it ends."""

    out: Outgoing
    """Status and headers (``body`` is the whole stored body; :attr:`pieces` is what is sent)."""
    pieces: list[tuple[float, bytes]]
    """``(wait before, bytes)`` in order."""
    ended: Literal["closed", "cut"]
    served: Served


def pieces(body: bytes, timeline: StreamTimeline, start: int) -> list[tuple[float, bytes]]:
    """The body from event ``start`` on, cut at each event's end, each piece with the wait before it. Bytes after
    the last timed event (one cut off by the capture) go with the last piece."""
    events = timeline.events[start:]
    begin = timeline.events[start - 1].end if start > 0 else 0
    since = timeline.events[start - 1].ts if start > 0 else 0.0
    waits = gaps([e.ts for e in events], since=since)
    sent: list[tuple[float, bytes]] = []
    for wait, event in zip(waits, events, strict=True):
        sent.append((wait, body[begin : event.end]))
        begin = event.end
    if begin < len(body):
        if sent:
            sent[-1] = (sent[-1][0], sent[-1][1] + body[begin:])
        else:
            sent.append((0.0, body[begin:]))
    return sent


def _stream_lines(store: SnapshotStore, method: str, url: str) -> list[tuple[int, bytes]] | None:
    """The index lines of ``url``'s exact key when one of them is an event stream and ``method`` is GET."""
    if method != "GET":
        return None
    lines = store.index.lines(surt(url))
    return lines if any(_MIME in line for _, line in lines) else None


def holds_stream(store: SnapshotStore, method: str, url: str) -> bool:
    """Whether ``method url`` is answered by :func:`stream_answer` (one index lookup, nothing read)."""
    return _stream_lines(store, method, url) is not None


def stream_answer(store: SnapshotStore, method: str, url: str, last_event_id: str | None) -> StreamAnswer | None:
    """The answer to ``method url`` (with its ``Last-Event-ID``) when its exact key holds an event stream (see
    the module's rules), else None: the request is not one for this module."""
    lines = _stream_lines(store, method, url)
    if lines is None:
        return None
    entries = sorted(((store.index.entry(ref), ref) for ref, _ in lines), key=lambda pair: pair[0].seq)
    recordings = [(ref, entry) for entry, ref in entries if entry.method == "GET" and entry.revisit_of is None]
    try:
        return _choose(store, method, url, last_event_id, recordings)
    except ArchiveError as e:
        body = e.line().encode()
        out = Outgoing(502, "Bad Gateway", [("Content-Type", "text/plain")], body)
        return StreamAnswer(out, [(0.0, body)], "closed", Served(method, url, "miss", "unreadable-record", None, 502))


def _choose(
    store: SnapshotStore, method: str, url: str, last_id: str | None, recordings: list[tuple[int, IndexEntry]]
) -> StreamAnswer | None:
    for ref, entry in recordings:
        request = store.request_record(ref)
        if (header(request.http_headers, "Last-Event-ID") if request is not None else None) == last_id:
            return _answer(store, ref, entry, 0, method, url, None)
    streams = [(ref, entry) for ref, entry in recordings if entry.mime == EVENT_STREAM_TYPE]
    if not streams:
        return None
    if last_id is not None:
        held = False
        for ref, entry in streams:
            start = resume_index(timeline_of(store, entry.filename, store.record(ref)), last_id)
            held = held or start > 0
            if start > 0:
                answered = _answer(store, ref, entry, start, method, url, RESUME_RULE)
                if answered.pieces:
                    return answered
        if held:  # the capture holds nothing after that event: tell the client to stop reconnecting
            out = Outgoing(204, "No Content", [("Cache-Control", "no-store")], b"")
            return StreamAnswer(out, [], "closed", Served(method, url, "fuzzy", RESUME_RULE, None, 204))
    ref, entry = streams[0]
    return _answer(store, ref, entry, 0, method, url, None if last_id is None else RESUME_RULE)


def _answer(
    store: SnapshotStore, ref: int, entry: IndexEntry, start: int, method: str, url: str, rule: str | None
) -> StreamAnswer:
    """Recording ``ref`` from event ``start``; anything but an identity-coded event stream goes in one piece."""
    record = store.record(ref)
    out = outgoing(record)
    result: Result = "hit" if rule is None else "fuzzy"
    served = Served(method, url, result, rule, None if rule is None else entry.url, out.status)
    encoded = header(out.headers, "Content-Encoding") not in (None, "identity")
    if not is_event_stream(header(out.headers, "Content-Type")) or encoded:
        return StreamAnswer(out, [(0.0, out.body)] if out.body else [], "closed", served)
    timeline = timeline_of(store, entry.filename, record)
    return StreamAnswer(out, pieces(out.body, timeline, start), timeline.ended, served)


def _stopping(app: web.Application) -> asyncio.Event:
    event = _STOPPING.get(app)
    if event is None:
        event = _STOPPING[app] = asyncio.Event()
    return event


async def end_streams(app: web.Application) -> None:
    """``on_shutdown`` of the replay app: the streams left open (cut by the capture) end, so the server stops."""
    _stopping(app).set()


def _gone(request: web.Request) -> bool:
    return request.transport is None or request.transport.is_closing()


async def send_stream(request: web.Request, answer: StreamAnswer) -> web.StreamResponse:
    """Send ``answer``: the head, then each piece after its wait; close a closed stream after its last piece, keep a
    cut one open until the client goes or the server stops. The request stops counting in flight once the head is
    out."""
    out = answer.out
    response = web.StreamResponse(status=out.status, reason=out.reason or None, headers=CIMultiDict(out.headers))
    try:
        await response.prepare(request)
        release(request)
        for wait, data in answer.pieces:
            if wait > 0:
                await asyncio.sleep(wait)
            await response.write(data)
        if answer.ended == "closed":
            await response.write_eof()
            return response
        stopping = _stopping(request.app)
        while not stopping.is_set() and not _gone(request):
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(_POLL_S):
                    await stopping.wait()
    except ConnectionError:
        pass  # the client went away: nothing more to send
    return response
