"""Start and stop the snapshot proxy: mitmproxy in the caller's event loop, with the snapshot's CA.

The proxy runs beside the replay server, in the same process and loop, and shares its store (so its
matcher's state, its record cache and, when kept, its log of served requests).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from capreplay.browser.flags import BASE_ARGS
from capreplay.certs.authority import snapshot_ca
from capreplay.errors import ReplayError
from capreplay.mitm.loop import run_mitmproxy
from capreplay.replay.answer import Served
from capreplay.replay.proxy.responder import SnapshotResponder
from capreplay.replay.proxy.streams import stream_server
from capreplay.replay.store import SnapshotStore
from capreplay.replay.turns import Ordering

SETTINGS: dict[str, object] = {
    # No upstream connection to learn a certificate's names from: the leaf carries the name asked for.
    "upstream_cert": False,
    # Connect to a server only when a request needs one, which no request does (every one is answered).
    "connection_strategy": "lazy",
    # mitmproxy's own pages (http://mitm.it/) would be answered by something other than the snapshot.
    "onboarding": False,
    # HTTP/1.1 only, as the replay server speaks: one wire form for both, and archived headers that
    # HTTP/2 would refuse (connection-specific ones) cannot break a stream.
    "http2": False,
}


@dataclass(frozen=True)
class ProxyInfo:
    """What a client needs to use the proxy; ``serve --proxy-port`` adds it to its first line."""

    proxy_port: int
    ca_cert: Path
    """The snapshot CA's certificate (PEM), for clients to trust."""
    ca_pin: str
    """The SPKI pin of that CA, which is also every leaf's (mitmproxy signs leaves with the CA's key)."""
    chromium_args: list[str]
    ca_made: str | None = None
    """None when the snapshot's kept CA was used; else why a CA was made (see :class:`SnapshotCA`)."""
    ordering: Ordering | None = field(default=None, compare=False, repr=False)
    """The page order the proxy keeps (what it held and gave up, for tests and benchmarks); not in the JSON."""

    def as_json(self) -> dict[str, Any]:
        """The keys ``serve`` adds to its first line: ``proxy_port``, ``ca_cert``, ``proxy_chromium_args``."""
        return {"proxy_port": self.proxy_port, "ca_cert": str(self.ca_cert), "proxy_chromium_args": self.chromium_args}


def proxy_args(port: int, ca_pin: str) -> list[str]:
    """The arguments a Chromium needs to browse the snapshot through the proxy on ``port`` and leak nothing.

    ``--proxy-server`` sends every http(s) request to the proxy; loopback too (``<-loopback>``), which
    Chromium would otherwise reach directly, outside the snapshot. The resolver rules leave every name
    unresolvable, so nothing Chromium resolves itself (the DNS probe of its error page, prefetching)
    reaches a DNS server; the proxy, an IP literal, needs no name. WebRTC may not send UDP, which no
    proxy carries (a flag every capreplay browser has).
    """
    return [
        f"--proxy-server=http://127.0.0.1:{port}",
        "--proxy-bypass-list=<-loopback>",
        "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
        f"--ignore-certificate-errors-spki-list={ca_pin}",
        *BASE_ARGS,
    ]


@contextlib.asynccontextmanager
async def serve_proxy(
    store: SnapshotStore, *, port: int = 0, served: list[Served] | None = None, order: bool = True
) -> AsyncIterator[ProxyInfo]:
    """Run the proxy for ``store`` on ``127.0.0.1:port`` (0: a free port) until the block ends.

    With ``served``, every answer is logged into it (pass the replay server's log to have one log of both);
    ``order`` as :class:`~capreplay.replay.server.ReplayServer`'s: each page's answers released in the capture's
    order (:mod:`capreplay.replay.sequence`), else each as soon as it is ready.
    """
    async with stream_server(store, served) as stream_port:
        responder = SnapshotResponder(store, served, stream_port, order=order)
        ca = snapshot_ca(store.snapshot_id, {host for host, _ in responder.endpoints})
        async with run_mitmproxy(
            [responder], confdir=ca.folder, listen_port=port, failure=ReplayError, **SETTINGS
        ) as run:
            yield ProxyInfo(run.port, ca.cert, ca.pin, proxy_args(run.port, ca.pin), ca.made, responder.ordering)
