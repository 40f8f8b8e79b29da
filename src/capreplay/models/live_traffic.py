"""Traffic that goes on after the response headers: WebSocket messages and server-sent events. Pure models.

A WebSocket connection is its handshake (an ordinary request/response pair, status 101) plus the messages
both sides sent, in the order the client saw them. An event stream is an ordinary ``text/event-stream``
response whose body arrived over time; :class:`StreamEvent` says when each event of it was complete.
:mod:`capreplay.archive.warc.live` writes and reads both as WARC records.
"""

from __future__ import annotations

import base64
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

OPCODE_TEXT = 1
OPCODE_BINARY = 2
OPCODE_CLOSE = 8

Direction = Literal["send", "receive"]


class WebSocketMessage(BaseModel):
    """One WebSocket message (or the close frame) as the client saw it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    ts: float = Field(ge=0, description="Seconds since the handshake's response arrived.")
    type: Direction = Field(
        description="'send': the client (the page) sent it; 'receive': the server sent it. The names are "
        "Chrome's (DevTools' HAR `_webSocketMessages` and CDP's frame events)."
    )
    opcode: int = Field(description="1 text, 2 binary, 8 close (RFC 6455).")
    payload: bytes = Field(default=b"", description="The message's bytes: UTF-8 for text, raw for binary.")
    close_code: int | None = Field(default=None, description="A close frame's status code (1000, 1001, ...).")
    close_reason: str = Field(default="", description="A close frame's reason text.")

    @property
    def text(self) -> str:
        """The payload as text (a binary payload's bytes decoded with replacement, for display)."""
        return self.payload.decode("utf-8", "replace")

    @classmethod
    def make_text(cls, ts: float, type: Direction, text: str) -> WebSocketMessage:
        """A text message."""
        return cls(ts=ts, type=type, opcode=OPCODE_TEXT, payload=text.encode("utf-8"))

    @classmethod
    def make_close(cls, ts: float, type: Direction, code: int | None, reason: str = "") -> WebSocketMessage:
        """A close frame sent by the client ('send') or the server ('receive')."""
        return cls(ts=ts, type=type, opcode=OPCODE_CLOSE, close_code=code, close_reason=reason)

    def as_line(self) -> dict[str, object]:
        """The JSON line of this message in the archive (see :mod:`capreplay.archive.warc.live`)."""
        line: dict[str, object] = {"ts": round(self.ts, 6), "type": self.type, "opcode": self.opcode}
        if self.opcode == OPCODE_TEXT:
            line["payloadData"] = self.payload.decode("utf-8", "surrogateescape")
        elif self.opcode == OPCODE_CLOSE:
            line["closeCode"] = self.close_code
            line["closeReason"] = self.close_reason
        else:
            line["payloadData"] = base64.b64encode(self.payload).decode("ascii")
        return line


class WebSocketLog(BaseModel):
    """Every message of one WebSocket connection, and how the capture saw it end."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    url: str = Field(description="The connection's ws:// or wss:// URL.")
    messages: list[WebSocketMessage] = Field(default_factory=list, description="In the order the client saw them.")
    ended: Literal["closed", "cut"] = Field(
        default="closed",
        description="'closed': a side closed it (the close frames are among the messages) or the connection "
        "dropped; 'cut': still open when the capture ended, so more might have followed.",
    )

    @property
    def sent(self) -> list[WebSocketMessage]:
        """The client's data messages (close frames aside)."""
        return [m for m in self.messages if m.type == "send" and m.opcode != OPCODE_CLOSE]

    @property
    def received(self) -> list[WebSocketMessage]:
        """The server's data messages (close frames aside)."""
        return [m for m in self.messages if m.type == "receive" and m.opcode != OPCODE_CLOSE]


class StreamEvent(BaseModel):
    """One server-sent event of a ``text/event-stream`` body: where it ends in the body and when it was whole."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    ts: float = Field(ge=0, description="Seconds since the response headers arrived, when the event was complete.")
    end: int = Field(ge=0, description="Offset in the stored body just past the event (past its blank line).")
    id: str | None = Field(default=None, description="The stream's last event id once this event is read, if any.")


class StreamTimeline(BaseModel):
    """When each event of one event-stream response arrived, and how the stream ended."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    url: str = Field(description="The event stream's URL.")
    events: list[StreamEvent] = Field(default_factory=list, description="In body order.")
    ended: Literal["closed", "cut"] = Field(
        default="closed",
        description="'closed': the server ended the response; 'cut': the capture ended an endless stream at "
        "the page's settle point, keeping what had arrived.",
    )
