"""The mitmproxy addon that answers every request from the snapshot and refuses every other host.

Methods are named after mitmproxy's events. A CONNECT or a request for a host and port the replay does
not serve gets a 403 naming it; every other request is answered by :func:`capreplay.replay.answer.answer`,
exactly as the replay server answers it, and released in the page's capture order as the server releases it
(:meth:`capreplay.replay.turns.Ordering.turn`; every browser on one proxy port is one browser to it), and no
server connection is ever opened but to the loopback stream app (``server_connect`` fails any other). Which
hosts are served is the pure :func:`reachable`; how an answer becomes a mitmproxy response the pure
:func:`to_response`.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Iterable
from http import HTTPStatus
from urllib.parse import urlsplit

from mitmproxy import http
from mitmproxy.proxy import server_hooks

from capreplay.browser.flags import replay_endpoints
from capreplay.replay.answer import Served, answer
from capreplay.replay.event_source import holds_stream
from capreplay.replay.nearest import is_beacon
from capreplay.replay.response import Outgoing
from capreplay.replay.store import SnapshotStore
from capreplay.replay.turns import Ordering, fetch_dest
from capreplay.replay.websocket import FORWARDED_SCHEME, is_websocket_request

# Under replay's logger, so refusals reach stderr as the replay server's misses do (serve logs both).
log = logging.getLogger("capreplay.replay.proxy")

_STREAM = "capreplay_event_stream"
"""Flow metadata: an event-stream request forwarded to the loopback stream app."""

NEVER_CONNECTS = "capreplay serves from the snapshot and never connects to a server"

Endpoints = frozenset[tuple[str, int]]


def reachable(origins: Iterable[tuple[str, str, int]]) -> Endpoints:
    """The ``(host, port)`` pairs the proxy answers for: those the replay server's resolver rules map.

    Every archived host on 80 and 443 whichever scheme it was archived under, its ``www.`` twin, and any
    other archived port (see :func:`capreplay.browser.flags.replay_endpoints`).
    """
    return frozenset((host, port) for host, port, _ in replay_endpoints(origins, http_port=0, https_port=0))


def served_here(host: str, port: int, endpoints: Endpoints) -> bool:
    """Whether ``host:port`` is one the snapshot answers for (names compared as DNS compares them)."""
    return (host.lower().rstrip("."), port) in endpoints


def refusal(where: str) -> Outgoing:
    """The 403 for a host outside the snapshot: a short text naming it."""
    text = f"capreplay: {where} is not in the snapshot; this proxy forwards nothing\n"
    headers = [("Content-Type", "text/plain; charset=utf-8"), ("Cache-Control", "no-store"), ("X-Capreplay", "refused")]
    return Outgoing(403, "Forbidden", headers, text.encode())


def to_response(out: Outgoing, method: str) -> http.Response:
    """The mitmproxy response that sends ``out`` as it is: headers as archived (latin-1, one byte each),
    the body with its archived Content-Encoding untouched, and the Content-Length the server sets."""
    headers = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in out.headers]
    body = out.body
    if out.status < 200 or out.status in (204, 304):
        body = b""  # these carry no body and no length
    else:
        headers.append((b"Content-Length", str(len(body)).encode()))
    if method.upper() == "HEAD":
        body = b""  # the length of the body a GET would get, and no body
    reason = out.reason or _phrase(out.status)
    now = time.time()
    return http.Response(b"HTTP/1.1", out.status, reason.encode("latin-1"), http.Headers(headers), body, None, now, now)


def _phrase(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return ""


class SnapshotResponder:
    """mitmproxy addon: answers from ``store``, refuses hosts outside it, and never contacts a server.

    With ``served`` given, every answer's :class:`Served` record is appended to it (with the proxy's port),
    as the replay server's log keeps them, and every refused URL to :attr:`refused`.
    """

    def __init__(
        self,
        store: SnapshotStore,
        served: list[Served] | None = None,
        stream_port: int | None = None,
        *,
        order: bool = True,
    ) -> None:
        """``stream_port``: where event streams are forwarded, to come back paced
        (:mod:`capreplay.replay.proxy.streams`); ``order``: release each page's answers in the capture's order
        (:attr:`ordering`), else each when ready."""
        self.store = store
        self.ordering = Ordering(store, enabled=order)
        self.stream_port = stream_port
        self.endpoints = reachable(store.origins())
        self.served = served
        self.refused: list[str] = []

    def _refuse(self, flow: http.HTTPFlow, where: str) -> None:
        log.warning("refused %s %s: not in the snapshot", flow.request.method, where)
        if self.served is not None:
            self.refused.append(where)
        flow.response = to_response(refusal(where), flow.request.method)

    def http_connect(self, flow: http.HTTPFlow) -> None:
        """Refuse a tunnel to a host outside the snapshot; accept the others (TLS ends here, with our CA)."""
        if not served_here(flow.request.host, flow.request.port, self.endpoints):
            self._refuse(flow, f"{flow.request.host}:{flow.request.port}")

    async def request(self, flow: http.HTTPFlow) -> None:
        """Answer a request from the archive, or refuse it when its target or its Host is outside the snapshot.

        The answer waits for its turn in its page (a hook may await: mitmproxy goes on with other flows)."""
        if flow.response is not None:
            return  # refused at CONNECT
        req = flow.request
        url = req.pretty_url
        parts = urlsplit(url)
        named = (parts.hostname or "", parts.port or (443 if parts.scheme == "https" else 80))
        # The target is where a proxy would connect; the Host header is what replay matches on. Both must be ours.
        for host, port in ((req.host, req.port), named):
            if not served_here(host, port, self.endpoints):
                self._refuse(flow, url if (host, port) == named else f"{host}:{port}")
                return
        if self.stream_port is not None and is_websocket_request(req.method, req.headers.get("Upgrade", "")):
            self._forward_websocket(flow)
            return
        if self.stream_port is not None and holds_stream(self.store, req.method, url):
            self._forward_stream(flow)
            return
        beacon = is_beacon(req.headers)
        out, served = answer(self.store, req.method, url, req.raw_content, req.headers.get("Range"), beacon=beacon)
        proxy_port = int(flow.client_conn.sockname[1])
        if self.served is not None:
            self.served.append(dataclasses.replace(served, port=proxy_port))
        # Sent here means handed to mitmproxy, which writes it out in the same turn of the loop once this hook
        # returns; the browser's own reading order is what ``sequence.SPACE_S`` covers, as for the server.
        async with self.ordering.turn(proxy_port, fetch_dest(req.headers), lambda: served.seq):
            flow.response = to_response(out, req.method)

    def _forward_stream(self, flow: http.HTTPFlow) -> None:
        """Send an event-stream request to the loopback stream app, with its Host (what replay matches on)."""
        req = flow.request
        host = req.host_header
        req.scheme, req.host, req.port = "http", "127.0.0.1", self.stream_port  # type: ignore[assignment]
        req.host_header = host
        flow.metadata[_STREAM] = True

    def _forward_websocket(self, flow: http.HTTPFlow) -> None:
        """Send a WebSocket upgrade to the loopback replay app, which plays the connection's messages; mitmproxy
        relays them. The scheme the browser used goes along, since the app is reached over plain HTTP."""
        req = flow.request
        req.headers[FORWARDED_SCHEME] = req.scheme
        host = req.host_header
        req.scheme, req.host, req.port = "http", "127.0.0.1", self.stream_port  # type: ignore[assignment]
        req.host_header = host

    def responseheaders(self, flow: http.HTTPFlow) -> None:
        """Pass a forwarded event stream on to the browser as it comes."""
        if flow.metadata.get(_STREAM) and flow.response is not None:
            flow.response.stream = True

    def server_connect(self, data: server_hooks.ServerConnectionHookData) -> None:
        """Fail every server connection mitmproxy would open but the one to the loopback stream app: nothing is
        forwarded outside this process, whatever the request."""
        if self.stream_port is not None and data.server.address == ("127.0.0.1", self.stream_port):
            return
        data.server.error = NEVER_CONNECTS
