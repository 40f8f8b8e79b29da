"""The server's side of one archived WebSocket connection, played back against the client that is there now. Pure.

The rule, deterministic for a given client:

- **Captured order.** The server's messages (and its close, if it closed) are released one after another in
  the order the capture saw them; none overtakes another.
- **After the client's messages that preceded it.** A server message waits until every client message the
  capture saw before it has arrived again. An arriving client message is matched by position first (the
  next captured client message not yet matched, if the bytes are the same), then by content (the earliest
  unmatched captured client message with the same opcode and bytes), then alike (the next captured client
  message, else the earliest unmatched one, that says the same but for the ids and times the client made
  up: :mod:`capreplay.replay.client_messages`). One that matches nothing is a *client miss*: it releases
  nothing, and is counted.
- **Ids echoed.** After an alike match, the server's messages carry the ids and times that client message
  sent where they carried the recorded ones, as the live server would have echoed them.
- **Captured gaps, capped.** A server message is released the captured gap after the later of the previous
  server message's release and the arrival of the last client message it waits for; a gap is at most
  :data:`capreplay.replay.pacing.GAP_CAP_S` (one cap for WebSocket messages and event streams), so a ticker
  that pushed once a minute does not keep a replay waiting for minutes.
  The gap before the first message counts from the handshake.

Time is given by the caller (the event loop's clock), so the rule is tested without a server or a clock.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from capreplay.models.live_traffic import OPCODE_CLOSE, WebSocketLog, WebSocketMessage
from capreplay.replay.client_messages import alike, echo
from capreplay.replay.pacing import GAP_CAP_S


@dataclass(frozen=True)
class _Scheduled:
    message: WebSocketMessage
    needs: int
    """How many captured client messages came before it: all of them must have arrived again."""
    gap: float
    """Captured seconds since the event it followed (the previous server message, or the last client message
    it waits for, or the handshake), capped."""


@dataclass
class Conversation:
    """Plays back the server side of ``log``; ``start`` is the loop time of the handshake."""

    log: WebSocketLog
    start: float
    cap: float = GAP_CAP_S
    client_misses: list[WebSocketMessage] = field(default_factory=list)
    """Client messages that matched no captured one, as they arrived (their ``ts`` is since ``start``)."""
    client_alike: int = 0
    """Client messages that matched a captured one alike (not byte for byte)."""
    _client: list[WebSocketMessage] = field(init=False)
    _arrived: list[float | None] = field(init=False)
    _script: list[_Scheduled] = field(init=False)
    _released: int = field(default=0, init=False)
    _last_release: float = field(init=False)
    _echoes: dict[str, str] = field(default_factory=dict, init=False)

    def __post_init__(self) -> None:
        self._client = [m for m in self.log.messages if m.type == "send" and m.opcode != OPCODE_CLOSE]
        self._arrived = [None] * len(self._client)
        self._script = _script(self.log, self.cap)
        self._last_release = self.start

    @property
    def captured(self) -> int:
        """The server's data messages in the capture (its close aside)."""
        return sum(s.message.opcode != OPCODE_CLOSE for s in self._script)

    @property
    def served(self) -> int:
        """The server's data messages released so far."""
        return sum(s.message.opcode != OPCODE_CLOSE for s in self._script[: self._released])

    @property
    def done(self) -> bool:
        """Every server message (and its close, if any) has been released."""
        return self._released == len(self._script)

    def receive(self, opcode: int, payload: bytes, now: float) -> bool:
        """A client message arrived at ``now``; whether it matched a captured one (else it is a client miss)."""
        open_ = [i for i, t in enumerate(self._arrived) if t is None]  # the first is the position
        found = next((i for i in open_ if _same(self._client[i], opcode, payload)), None)
        if found is None:
            for i in open_:
                echoes = alike(self._client[i], opcode, payload)
                if echoes is not None:
                    found = i
                    self.client_alike += 1
                    self._echoes.update(echoes)
                    break
        if found is None:
            self.client_misses.append(
                WebSocketMessage(ts=max(0.0, now - self.start), type="send", opcode=opcode, payload=payload)
            )
            return False
        self._arrived[found] = now
        return True

    def next_release(self, now: float) -> tuple[WebSocketMessage | None, float | None]:
        """What to send at ``now``: ``(message, None)`` to send it now (then call :meth:`released`),
        ``(None, seconds)`` to look again that much later, ``(None, None)`` when the next one waits for a client
        message (or none is left)."""
        if self.done:
            return None, None
        step = self._script[self._released]
        waited = self._arrived[: step.needs]
        if any(t is None for t in waited):
            return None, None
        after = max([self._last_release, *(t for t in waited if t is not None)])
        due = after + step.gap
        return (echo(step.message, self._echoes), None) if due <= now else (None, due - now)

    def released(self, now: float) -> None:
        """The message :meth:`next_release` gave was sent at ``now``."""
        self._released += 1
        self._last_release = now

    @property
    def untouched(self) -> bool:
        """No client message has matched and no server message has been released yet."""
        return self._released == 0 and all(t is None for t in self._arrived)

    @property
    def waiting_for_client(self) -> bool:
        """Whether the next server message waits for a client message (none is due on a timer)."""
        return not self.done and any(t is None for t in self._arrived[: self._script[self._released].needs])


def _same(captured: WebSocketMessage, opcode: int, payload: bytes) -> bool:
    return captured.opcode == opcode and captured.payload == payload


def _script(log: WebSocketLog, cap: float) -> list[_Scheduled]:
    """The server's messages with what each waits for, in captured order."""
    script = []
    clients = 0
    previous = 0.0  # the handshake
    for message in log.messages:
        if message.type == "send":
            if message.opcode != OPCODE_CLOSE:
                clients += 1
                previous = max(previous, message.ts)
            continue
        gap = min(cap, max(0.0, message.ts - previous))
        script.append(_Scheduled(message, clients, gap))
        previous = max(previous, message.ts)
    return script
