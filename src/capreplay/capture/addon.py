"""The mitmproxy addon that turns every exchange the capturing browser makes into an :class:`Exchange`.

Methods are named after mitmproxy's events. Which hosts may be reached is decided by the pure
:func:`decide`; what becomes of a finished flow by the pure :func:`exchange_from_flow`. The addon
only wires them to the proxy and hands each exchange to a sink. It also counts the browser's requests in flight
(:attr:`CaptureAddon.traffic`), from their headers' arrival until the response is recorded or mitmproxy gave up, so the
capture can settle a page when the proxy has seen it go quiet (:func:`capreplay.browser.settle.traffic_quiet`).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Literal

from mitmproxy import http
from mitmproxy.proxy import server_hooks

from capreplay.archive.warc.exchange import Exchange
from capreplay.browser.settle import Traffic
from capreplay.capture.streams import EventStreams
from capreplay.capture.websocket_log import is_websocket, websocket_log
from capreplay.models.live_traffic import WebSocketLog

log = logging.getLogger(__name__)

# Chromium's own background traffic: sign-in, updates, safe browsing, field trials, optimisation hints.
# None of it belongs to a page, so it is refused before a connection is made and never recorded.
BACKGROUND_HOSTS: frozenset[str] = frozenset(
    {
        "accounts.google.com",
        "android.clients.google.com",
        "clients1.google.com",
        "clients2.google.com",
        "clients4.google.com",
        "clientservices.googleapis.com",
        "content-autofill.googleapis.com",
        "edgedl.me.gvt1.com",
        "optimizationguide-pa.googleapis.com",
        "redirector.gvt1.com",
        "safebrowsing.googleapis.com",
        "sb-ssl.google.com",
        "update.googleapis.com",
        "chromewebstore.googleapis.com",
    }
)
_BACKGROUND_PATTERN = re.compile(r"^(clients\d*\.google\.com|.*\.gvt1\.com|.*safebrowsing.*)$")

Decision = Literal["connect", "map", "block"]


@dataclass(frozen=True)
class HostPolicy:
    """Where the capture may connect: mapped hosts go to local origins; others are allowed or refused."""

    maps: dict[str, tuple[str, int]] = field(default_factory=dict)
    """Hostname -> (address, port) of a local origin; the archive keeps the real hostname."""
    only_mapped: bool = False
    """Refuse every host that is not mapped (a capture of local origins must not reach the internet)."""


def decide(host: str, policy: HostPolicy) -> Decision:
    """What to do with a connection to ``host``: connect as is, send to a mapped origin, or block."""
    host = host.lower().rstrip(".")
    if host in policy.maps:
        return "map"
    if host in BACKGROUND_HOSTS or _BACKGROUND_PATTERN.match(host):
        return "block"
    return "block" if policy.only_mapped else "connect"


def _text(value: bytes) -> str:
    return value.decode("latin-1")


def exchange_from_flow(flow: http.HTTPFlow) -> Exchange:
    """The :class:`Exchange` of a finished flow: real URL, headers in order, bodies as on the wire."""
    req, resp = flow.request, flow.response
    assert resp is not None, "exchange_from_flow needs a flow with a response"
    peer = flow.server_conn.peername
    return Exchange(
        url=req.pretty_url,
        method=req.method,
        request_headers=[(_text(k), _text(v)) for k, v in req.headers.fields],
        request_body=req.raw_content or b"",
        http_version=req.http_version,
        status=resp.status_code,
        reason=resp.reason or "",
        response_headers=[(_text(k), _text(v)) for k, v in resp.headers.fields],
        response_body=resp.raw_content or b"",
        started=datetime.fromtimestamp(req.timestamp_start, UTC),
        server_ip=peer[0] if peer else None,
    )


class CaptureAddon:
    """mitmproxy addon: maps and blocks hosts, and passes every completed exchange to ``sink``."""

    def __init__(
        self,
        policy: HostPolicy,
        sink: Callable[[Exchange], None],
        websocket_sink: Callable[[Exchange, WebSocketLog], None] | None = None,
    ) -> None:
        """``websocket_sink`` gets each WebSocket connection (handshake and messages) once it ends; without it a
        handshake goes to ``sink`` as any exchange does and its messages are not kept."""
        self.policy = policy
        self.sink = sink
        self.websocket_sink = websocket_sink
        self._open_websockets: dict[str, tuple[http.HTTPFlow, Exchange]] = {}
        self.blocked: list[str] = []
        self.errors: list[str] = []
        self.failure: BaseException | None = None
        self.traffic = Traffic()
        """The capturing browser's requests in flight in the proxy (one browser: all on key 0)."""
        self._mapped: dict[str, tuple[str, int]] = {}
        """Server connection id -> the (host, port) it was asked for, until it connects to its local origin."""
        self.streams = EventStreams(sink, exchange_from_flow)
        """Event-stream responses being recorded as they arrive (:mod:`capreplay.capture.streams`)."""

    def requestheaders(self, flow: http.HTTPFlow) -> None:
        """A request from the browser arrived: it counts as in flight (a tunnel's CONNECT does not)."""
        if flow.request.method != "CONNECT":
            flow.metadata["capreplay_counted"] = True
            self.traffic.started(0)

    def _ended(self, flow: http.HTTPFlow) -> None:
        if flow.metadata.pop("capreplay_counted", False):
            self.traffic.ended(0)

    def _refuse(self, flow: http.HTTPFlow) -> bool:
        # pretty_host is the name the browser asked for; request.host may already be a mapped address.
        if decide(flow.request.pretty_host, self.policy) != "block":
            return False
        self.blocked.append(flow.request.pretty_url)
        flow.metadata["capreplay_blocked"] = True
        flow.response = http.Response.make(403, b"blocked by capreplay capture", {"Content-Type": "text/plain"})
        return True

    def http_connect(self, flow: http.HTTPFlow) -> None:
        """Refuse a tunnel to a blocked host before any TLS or DNS happens."""
        self._refuse(flow)

    def request(self, flow: http.HTTPFlow) -> None:
        """Refuse a plain request to a blocked host."""
        self._refuse(flow)

    def server_connect(self, data: server_hooks.ServerConnectionHookData) -> None:
        """Send a mapped hostname to its local origin; SNI and Host keep the real name."""
        address = data.server.address
        if address is None:
            return
        host = str(address[0])
        verdict = decide(host, self.policy)
        if verdict == "map":
            self._mapped[data.server.id] = address
            data.server.address = self.policy.maps[host.lower().rstrip(".")]
        elif verdict == "block":
            data.server.error = f"blocked by capreplay: {host}"

    def server_connected(self, data: server_hooks.ServerConnectionHookData) -> None:
        """A mapped connection is up: it takes back the name it was asked for, so that the next request for that
        name on the same browser connection reuses it.

        mitmproxy reuses a server connection only for a request to the same address, and holds at most five
        connections per address and browser connection for as long as they stay open. Left on the local
        address, every plain-http request on a kept-alive browser connection opened a new server connection
        and the sixth waited forever (a JupyterLab page's scripts never loaded)."""
        original = self._mapped.pop(data.server.id, None)
        if original is not None:
            # mitmproxy refuses to change the address of an open connection through its setter, a guard for
            # addons that would redirect one; here the socket stays where it is and only the name it answers
            # to in the proxy's reuse check changes back.
            object.__setattr__(data.server, "address", original)

    def server_connect_error(self, data: server_hooks.ServerConnectionHookData) -> None:
        """A mapped connection that failed is forgotten."""
        self._mapped.pop(data.server.id, None)

    def responseheaders(self, flow: http.HTTPFlow) -> None:
        """An event stream's headers arrived: record its body as it comes, and count it in flight no longer (a
        stream may never end, and must not keep the page from settling)."""
        if not flow.metadata.get("capreplay_blocked") and self.streams.start(flow):
            self._ended(flow)

    def cut_streams(self) -> int:
        """Record every event stream still open as cut, with what has arrived (the page settled, or the capture
        ends); how many there were. A failure is kept, as :meth:`response` keeps one."""
        try:
            return self.streams.cut_all()
        except Exception as e:
            self.failure = e
            log.exception("recording the open event streams failed")
            return 0

    def response(self, flow: http.HTTPFlow) -> None:
        """Record the finished exchange; a failure here is kept and makes the capture fail."""
        # Ended once recorded: writing the record holds the response back from the browser, and on a busy
        # machine that takes long enough to eat into the quiet interval.
        try:
            if flow.metadata.get("capreplay_blocked") or flow.request.method == "CONNECT":
                return
            if self.streams.owns(flow):
                self.streams.finish(flow, "closed")
                return
            if is_websocket(flow) and self.websocket_sink is not None:
                self._open_websockets[flow.id] = (flow, exchange_from_flow(flow))  # written when it ends
                return
            self.sink(exchange_from_flow(flow))
        except Exception as e:
            self.failure = e
            log.exception("recording %s failed", flow.request.pretty_url)
        finally:
            self._ended(flow)

    def error(self, flow: http.HTTPFlow) -> None:
        """Note a request that got no response (origin down, connection refused)."""
        self._ended(flow)
        if self.streams.owns(flow):
            # What arrived before the connection broke (or the browser left) is kept, as a cut stream.
            self._cut_stream(flow)
            return
        if not flow.metadata.get("capreplay_blocked") and flow.error is not None:
            self.errors.append(f"{flow.request.pretty_url}: {flow.error.msg}")

    def _cut_stream(self, flow: http.HTTPFlow) -> None:
        try:
            self.streams.finish(flow, "cut")
        except Exception as e:
            self.failure = e
            log.exception("recording %s failed", flow.request.pretty_url)

    def websocket_end(self, flow: http.HTTPFlow) -> None:
        """A WebSocket connection closed: its handshake and every message go to the archive together."""
        opened = self._open_websockets.pop(flow.id, None)
        if opened is not None:
            self._write_websocket(opened[1], flow, "closed")

    def cut_websockets(self) -> int:
        """End the capture's WebSocket connections that are still open: each is archived with the messages that
        arrived, marked cut (more might have followed). Later ends of them are ignored. How many there were."""
        opened, self._open_websockets = self._open_websockets, {}
        for flow, handshake in opened.values():
            self._write_websocket(handshake, flow, "cut")
        return len(opened)

    def _write_websocket(self, handshake: Exchange, flow: http.HTTPFlow, ended: Literal["closed", "cut"]) -> None:
        assert self.websocket_sink is not None  # only then are connections held open
        try:
            self.websocket_sink(handshake, websocket_log(flow, ended=ended))
        except Exception as e:
            self.failure = e
            log.exception("recording the WebSocket messages of %s failed", flow.request.pretty_url)
