"""WebSocket replay: the upgrade for an archived handshake, then the server's captured messages.

The handshake is matched as any request is (:meth:`capreplay.replay.matching.Matcher.match`), and its
messages record (:mod:`capreplay.replay.websocket_records`) is played by :class:`Conversation`. A handshake
with no match is answered as any miss is (a 404 naming the nearest archived URL); one whose archive holds no
messages is accepted, stays silent, and is logged as a miss, since the page does not get what it got.

While a server message is due on a timer, the connection counts as a request in flight (the quiet signal
waits for it); while it waits for the client, or has played everything, it does not, so an open connection
never keeps a page from settling.

**Which recording a connection plays.** The handshake is matched as any request is, so of several recordings of
one URL the repeat rule gives them in recorded order, counted per browser (the n-th connection a browser opens
gets the n-th recording, then the last again). That is right for a replay that follows the capture's pages in
order, and wrong for a page loaded again in the same browser: a page that opened ``/ws/echo`` twice got
recordings 1 and 2 the first time, and recording 2 for both connections the second time, whose conversation
("round 2") did not answer what its first connection said ("round 1"). So a connection is told apart by what its
client says first (:func:`retell`): when the first client message of a connection matches none of its recording,
the other recordings of the URL are tried in capture order and the first one it matches is played instead. The
same rule tells apart connections a page opens at once, which reach the server in any order. A connection whose
server speaks first has nothing to be told apart by, and plays the recording the repeat rule gave it.

**The 101 response.** Of the archived handshake response, only ``Sec-WebSocket-Protocol`` is sent again (when
the browser offers that subprotocol again: aiohttp answers with one the client offered, or none), since a page
checks ``ws.protocol``. ``Sec-WebSocket-Extensions`` is never copied: an extension changes how frames are
written, so only the server that writes them may claim one; aiohttp negotiates ``permessage-deflate`` with the
browser by itself and compresses when it does. ``Sec-WebSocket-Accept`` is computed from the browser's new key.
The other archived headers (``Date``, ``Server``, ``Set-Cookie``) are left out: a page's script cannot read a
handshake's headers, and a cookie a live handshake set is not set again (none of the fixtures sets one).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from aiohttp import WSMessage, WSMsgType, web
from multidict import CIMultiDict

from capreplay.archive.index.keys import surt
from capreplay.models.live_traffic import OPCODE_BINARY, OPCODE_CLOSE, OPCODE_TEXT, WebSocketLog, WebSocketMessage
from capreplay.replay.answer import Served, answer
from capreplay.replay.candidates import IndexCandidates
from capreplay.replay.conversation import Conversation
from capreplay.replay.quiet import TRAFFIC, request_port
from capreplay.replay.response import Outgoing, header
from capreplay.replay.store import SnapshotStore
from capreplay.replay.websocket_records import websocket_messages

log = logging.getLogger("capreplay.replay")

NO_MESSAGES = "websocket-without-messages"
"""The ``rule`` of a handshake's :class:`Served` entry when the archive holds no messages for it."""


@dataclass
class Connection:
    """One WebSocket connection replay answered, for ``verify``: filled in while it runs."""

    url: str
    port: int
    result: str
    """How the handshake matched: ``hit``, ``fuzzy``, or ``miss`` (no messages archived for it)."""
    captured: int = 0
    """The server's data messages in the capture."""
    served: int = 0
    """Those sent to the client."""
    client_messages: int = 0
    """Data messages the client sent."""
    client_misses: list[str] = field(default_factory=list)
    """Client messages that matched no captured one (text, or ``<N bytes>`` for binary)."""
    closed_by: str | None = None
    """``client``, ``server``, or None while it is open (or the connection dropped)."""

    @property
    def missed(self) -> int:
        """Captured server messages the client never got."""
        return self.captured - self.served


CONNECTIONS = web.AppKey("websocket_connections", list[Connection])
"""Every connection answered, when the app keeps its log (see :data:`capreplay.replay.app.KEEP_LOG`)."""


FORWARDED_SCHEME = "X-Capreplay-Scheme"
"""The header by which the proxy names the scheme the browser used (``https`` for ``wss://``) when it forwards an
upgrade to the loopback replay app (:mod:`capreplay.replay.proxy.responder`); a page's script cannot set it."""


def is_websocket_request(method: str, upgrade: str) -> bool:
    """A request with this method and ``Upgrade`` header asks to open a WebSocket."""
    return method.upper() == "GET" and upgrade.strip().lower() == "websocket"


def is_websocket_upgrade(request: web.BaseRequest) -> bool:
    """A ``GET`` asking to upgrade to the WebSocket protocol."""
    return is_websocket_request(request.method, request.headers.get("Upgrade", ""))


async def serve_websocket(
    request: web.Request,
    store: SnapshotStore,
    url: str,
    note: Callable[[Served], None],
    keep: bool,
    browser: int = 0,
) -> web.StreamResponse:
    """Answer the upgrade ``request`` for ``url`` from ``browser`` (for the repeat rule); ``note`` logs its
    :class:`Served` entry; ``keep`` keeps its :class:`Connection` in the app's :data:`CONNECTIONS`."""
    forwarded = request.headers.get(FORWARDED_SCHEME)
    if forwarded in ("http", "https"):
        url = forwarded + url[url.index("://") :]
    match = store.matcher.match("GET", url, None, browser=browser)
    if match is None:
        out, served = answer(store, "GET", url, None, browser=browser)
        note(served)
        return _plain(out)
    result = "hit" if match.rule is None else "fuzzy"
    script = websocket_messages(store, match.candidate.ref)  # type: ignore[arg-type]
    if script is None:
        log.warning("miss %s %s: the archive holds no messages for this connection", "GET", url)
        result = "miss"
    answered_by = None if match.rule is None else match.candidate.url
    served_entry = Served("GET", url, result, NO_MESSAGES if script is None else match.rule, answered_by, 101)  # type: ignore[arg-type]
    note(served_entry)
    handshake = store.response(match.candidate.ref)  # type: ignore[arg-type]
    protocol = header(handshake.headers, "sec-websocket-protocol")
    ws = web.WebSocketResponse(protocols=(protocol,) if protocol else (), autoclose=False, autoping=True)
    await ws.prepare(request)
    port = request_port(request)
    connection = Connection(url, port, result)
    if keep:
        request.app[CONNECTIONS].append(connection)
    traffic = request.app[TRAFFIC]
    traffic.ended(port)  # the upgrade is answered; see the module's note on what counts as in flight
    try:
        if script is None:
            await _silent(ws, connection)
        else:
            conversation = Conversation(script, asyncio.get_running_loop().time())
            connection.captured = conversation.captured
            others = _other_recordings(store, url, match.candidate.ref)  # type: ignore[arg-type]
            in_flight = lambda busy: (traffic.started if busy else traffic.ended)(port)  # noqa: E731
            await _play(ws, conversation, connection, in_flight, others)
    finally:
        traffic.started(port)  # the middleware ends it when this returns
    return ws


def _other_recordings(store: SnapshotStore, url: str, chosen: int) -> Iterator[WebSocketLog]:
    """The messages of the other recorded connections to ``url``, in capture order (read only when asked for)."""
    refs = [c.ref for c in sorted(IndexCandidates(store.index).exact(surt(url)), key=lambda c: c.seq)]
    for ref in refs:
        if ref != chosen and store.index.entry(ref).status == 101:  # type: ignore[arg-type]
            log = websocket_messages(store, ref)  # type: ignore[arg-type]
            if log is not None:
                yield log


def retell(conversation: Conversation, others: Iterable[WebSocketLog], opcode: int, payload: bytes) -> Conversation:
    """The conversation to go on with once a client message (``opcode``, ``payload``) was fed to ``conversation``.
    Pure. A page that opens several connections to one URL tells them apart by what it says first (see the
    module's note): when the first client message of a connection that has matched and released nothing yet
    matches none of its recording, ``others`` (the URL's other recordings, in capture order) are tried, and the
    first one it matches is played instead; else ``conversation`` goes on, with its client miss."""
    if not conversation.untouched or len(conversation.client_misses) != 1:
        return conversation
    for log in others:
        candidate = Conversation(log, conversation.start, conversation.cap)
        if candidate.receive(opcode, payload, conversation.client_misses[-1].ts + conversation.start):
            return candidate
    return conversation


async def _play(
    ws: web.WebSocketResponse,
    conversation: Conversation,
    connection: Connection,
    in_flight: Callable[[bool], None],
    others: Iterator[WebSocketLog],
) -> None:
    loop = asyncio.get_running_loop()
    receiving: asyncio.Task[WSMessage] | None = None
    busy = False
    try:
        while not ws.closed:
            message, wait = conversation.next_release(loop.time())
            if message is not None:
                if message.opcode == OPCODE_CLOSE:
                    connection.closed_by = "server"
                    conversation.released(loop.time())
                    await _close(ws, message)
                    return
                await _send(ws, message)
                conversation.released(loop.time())
                connection.served = conversation.served
                continue
            if wait is not None and not busy:
                busy = True
                in_flight(True)
            elif wait is None and busy:
                busy = False
                in_flight(False)
            if receiving is None:
                receiving = asyncio.ensure_future(ws.receive())
            done, _ = await asyncio.wait({receiving}, timeout=wait)
            if receiving in done:
                msg = receiving.result()
                receiving = None
                if not _take(msg, ws, conversation, connection):
                    await _answer_close(ws, msg, connection)
                    return
                if conversation.client_misses and msg.type in (WSMsgType.TEXT, WSMsgType.BINARY):
                    data = msg.data.encode("utf-8") if isinstance(msg.data, str) else bytes(msg.data)
                    opcode = OPCODE_TEXT if msg.type == WSMsgType.TEXT else OPCODE_BINARY
                    conversation = retell(conversation, others, opcode, data)
                    connection.captured = conversation.captured
    finally:
        if busy:
            in_flight(False)
        if receiving is not None and not receiving.done():
            receiving.cancel()
        connection.client_misses = [_shown(m) for m in conversation.client_misses]


def _take(msg: object, ws: web.WebSocketResponse, conversation: Conversation, connection: Connection) -> bool:
    """Feed a client message to the conversation; False when the client closed or the connection ended."""
    kind = getattr(msg, "type", None)
    data = getattr(msg, "data", None)
    if kind == WSMsgType.TEXT and isinstance(data, str):
        connection.client_messages += 1
        if not conversation.receive(OPCODE_TEXT, data.encode("utf-8"), asyncio.get_running_loop().time()):
            log.warning("websocket client miss on %s: %r", connection.url, data[:200])
        return True
    if kind == WSMsgType.BINARY and isinstance(data, bytes):
        connection.client_messages += 1
        if not conversation.receive(OPCODE_BINARY, data, asyncio.get_running_loop().time()):
            log.warning("websocket client miss on %s: %d bytes", connection.url, len(data))
        return True
    return False


async def _silent(ws: web.WebSocketResponse, connection: Connection) -> None:
    """Keep an upgrade with nothing archived to play open until the client closes it."""
    while not ws.closed:
        msg = await ws.receive()
        if msg.type in (WSMsgType.TEXT, WSMsgType.BINARY):
            connection.client_messages += 1
            data = msg.data.encode("utf-8") if isinstance(msg.data, str) else bytes(msg.data)
            connection.client_misses.append(_shown(WebSocketMessage(ts=0, type="send", opcode=1, payload=data)))
            continue
        await _answer_close(ws, msg, connection)
        return


async def _answer_close(ws: web.WebSocketResponse, msg: object, connection: Connection) -> None:
    """The client closed (or went away): echo its close code, as the capture's proxy did."""
    if getattr(msg, "type", None) == WSMsgType.CLOSE:
        connection.closed_by = "client"
        code = msg.data if isinstance(msg.data, int) else 1000  # type: ignore[attr-defined]
        await ws.close(code=code, message=str(msg.extra or "").encode("utf-8"))  # type: ignore[attr-defined]
    elif not ws.closed:
        await ws.close()


async def _send(ws: web.WebSocketResponse, message: WebSocketMessage) -> None:
    if message.opcode == OPCODE_TEXT:
        await ws.send_str(message.payload.decode("utf-8", "surrogateescape"))
    else:
        await ws.send_bytes(message.payload)


async def _close(ws: web.WebSocketResponse, message: WebSocketMessage) -> None:
    """The server's captured close. Codes that may not be sent (1005, 1006, 1015: no status, a dropped
    connection) end the connection with a plain close, the nearest thing the protocol allows."""
    code = message.close_code
    if code is None or code in (1005, 1006, 1015):
        await ws.close()
        return
    await ws.close(code=code, message=message.close_reason.encode("utf-8"))


def _shown(message: WebSocketMessage) -> str:
    return message.text if message.opcode == OPCODE_TEXT else f"<{len(message.payload)} bytes>"


def _plain(out: Outgoing) -> web.Response:
    return web.Response(status=out.status, reason=out.reason or None, headers=CIMultiDict(out.headers), body=out.body)
