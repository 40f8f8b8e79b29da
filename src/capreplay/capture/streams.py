"""Event-stream responses recorded as they arrive, with each chunk's time, and written whole or cut.

A ``text/event-stream`` response may never end, so mitmproxy would never call ``response`` for it. Its flow is
switched to streaming when its headers arrive (:meth:`EventStreams.start`): every chunk goes on to the browser at
once and is kept with the time it came, counted from the headers. A stream the server ends is written then
(:meth:`EventStreams.finish`); one still open when the capture settles the page, finishes or is interrupted is
written as it stands, marked cut (:meth:`EventStreams.cut_all`), and whatever it sends after that is passed on
to the browser but no longer kept.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from typing import Literal

from mitmproxy import http

from capreplay.archive.warc.event_stream import is_event_stream, timeline_from_chunks
from capreplay.archive.warc.exchange import Exchange
from capreplay.archive.warc.live import TRUNCATED_HEADER

_TAP = "capreplay_event_stream"
"""The flow metadata key that holds a stream's :class:`_Tap`."""


class _Tap:
    """mitmproxy's stream callable for one response: keeps each chunk with its time and passes it on."""

    def __init__(self) -> None:
        self.started = time.monotonic()
        self.chunks: list[tuple[float, bytes]] = []
        self.written = False
        """Written to the archive (ended or cut): later chunks are passed on, not kept."""

    def __call__(self, data: bytes) -> bytes:
        if data and not self.written:
            self.chunks.append((time.monotonic() - self.started, data))
        return data


class EventStreams:
    """The event streams of one capture; each becomes an :class:`Exchange` with its timeline, given to ``sink``.

    ``exchange_of`` makes the exchange of a flow (its body is replaced by the chunks kept here).
    """

    def __init__(self, sink: Callable[[Exchange], None], exchange_of: Callable[[http.HTTPFlow], Exchange]) -> None:
        self.sink = sink
        self.exchange_of = exchange_of
        self._open: dict[str, http.HTTPFlow] = {}

    def start(self, flow: http.HTTPFlow) -> bool:
        """At a response's headers: if it is an event stream, stream it through a tap; whether it is one."""
        resp = flow.response
        if resp is None or flow.request.method == "HEAD" or not is_event_stream(resp.headers.get("content-type")):
            return False
        tap = _Tap()
        flow.metadata[_TAP] = tap
        resp.stream = tap
        self._open[flow.id] = flow
        return True

    def owns(self, flow: http.HTTPFlow) -> bool:
        """Whether ``flow`` is an event stream recorded here."""
        return _TAP in flow.metadata

    def finish(self, flow: http.HTTPFlow, ended: Literal["closed", "cut"]) -> None:
        """The stream's response ended (``closed``) or failed (``cut``): write it, unless it was cut already."""
        self._write(flow, ended)

    def cut_all(self) -> int:
        """Write every stream still open as cut (the page settled, or the capture ends); how many there were."""
        flows = list(self._open.values())
        for flow in flows:
            self._write(flow, "cut")
        return len(flows)

    def _write(self, flow: http.HTTPFlow, ended: Literal["closed", "cut"]) -> None:
        tap: _Tap = flow.metadata[_TAP]
        self._open.pop(flow.id, None)
        if tap.written:
            return
        tap.written = True
        exchange = self.exchange_of(flow)
        body, timeline = timeline_from_chunks(exchange.url, tap.chunks, ended=ended)
        extra = {**exchange.extra, TRUNCATED_HEADER: "time"} if ended == "cut" else exchange.extra
        self.sink(dataclasses.replace(exchange, response_body=body, timeline=timeline, extra=extra))
