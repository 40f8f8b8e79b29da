"""A mitmproxy WebSocket flow -> the :class:`WebSocketLog` the archive keeps of it. Pure.

Times are counted from the moment the handshake's response was complete (``flow.response.timestamp_end``),
which is when the client could first send or receive. mitmproxy keeps every message of a live flow in
``flow.websocket.messages`` and the close in ``close_code``/``closed_by_client``; a connection the capture
ended (``ended="cut"``) keeps what arrived and no close, since the capture, not a side, closed it.
"""

from __future__ import annotations

from typing import Literal

from mitmproxy import http

from capreplay.archive.warc.build import exchange_records, new_record_id
from capreplay.archive.warc.exchange import Exchange
from capreplay.archive.warc.live import websocket_record, websocket_url
from capreplay.models.live_traffic import OPCODE_BINARY, OPCODE_TEXT, Direction, WebSocketLog, WebSocketMessage


def is_websocket(flow: http.HTTPFlow) -> bool:
    """Whether ``flow`` is a WebSocket handshake mitmproxy upgraded (it sets ``flow.websocket`` before the
    ``response`` event of the ``101``)."""
    return flow.websocket is not None


def websocket_log(flow: http.HTTPFlow, *, ended: Literal["closed", "cut"]) -> WebSocketLog:
    """Every message of ``flow``'s connection so far, in the order mitmproxy relayed them, and its close."""
    assert flow.websocket is not None and flow.response is not None, "websocket_log needs an upgraded flow"
    opened = flow.response.timestamp_end or flow.response.timestamp_start
    messages = [
        WebSocketMessage(
            ts=max(0.0, m.timestamp - opened),
            type="send" if m.from_client else "receive",
            opcode=OPCODE_TEXT if m.is_text else OPCODE_BINARY,
            payload=m.content,
        )
        for m in flow.websocket.messages
        if not m.injected  # nothing injects during a capture; an injected message never crossed the wire
    ]
    ws = flow.websocket
    if ended == "closed" and ws.close_code is not None:
        when = max(0.0, (ws.timestamp_end or opened) - opened)
        side: Direction = "send" if ws.closed_by_client else "receive"
        messages.append(WebSocketMessage.make_close(when, side, ws.close_code, ws.close_reason or ""))
    return WebSocketLog(url=websocket_url(flow.request.pretty_url), messages=messages, ended=ended)


def websocket_members(handshake: Exchange, log: WebSocketLog, *, warcinfo_id: str) -> list[bytes]:
    """The handshake's request and response records and the messages record, in that order.

    They are written together, the messages record right after the response it names in
    ``WARC-Concurrent-To``, so replay finds a connection's messages by reading on from its handshake's response
    (:mod:`capreplay.replay.websocket_records`) without an index of its own.
    """
    ids = (new_record_id(), new_record_id())
    request, response = exchange_records(handshake, warcinfo_id=warcinfo_id, record_ids=ids)
    messages = websocket_record(log, concurrent_to=ids[1], date=handshake.started, warcinfo_id=warcinfo_id)
    return [request, response, messages]
