"""Start and stop the replay server: HTTP and HTTPS on 127.0.0.1, a certificate per host from one key."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aiohttp import web

from capreplay.browser.flags import replay_args
from capreplay.certs.hosts import HostCertificates
from capreplay.errors import ReplayError, os_reason
from capreplay.replay.app import ORDER, SERVED, TRAFFIC, Served, make_app
from capreplay.replay.quiet import QUIET_TIMEOUT_MS, SERVER_QUIET_MS, Traffic
from capreplay.replay.ready.slot import ReadySlot
from capreplay.replay.store import SnapshotStore


@dataclass(frozen=True)
class ServeInfo:
    """What a client needs to browse the served snapshot; ``serve`` prints it as its first line."""

    http_port: int
    https_port: int
    hosts: list[str]
    chromium_args: list[str]

    def as_json(self) -> dict[str, Any]:
        """The contract's JSON object: ports, hosts and Chromium arguments."""
        return {
            "http_port": self.http_port,
            "https_port": self.https_port,
            "hosts": self.hosts,
            "chromium_args": self.chromium_args,
        }


class ReplayServer:
    """A snapshot served offline. ``start()`` binds (port 0 picks a free one), ``stop()`` releases."""

    def __init__(
        self,
        snapshot: Path | SnapshotStore,
        *,
        keep_log: bool = True,
        strict: bool | None = None,
        ready: bool = True,
        order: bool = True,
    ) -> None:
        """Serve ``snapshot``; ``strict`` turns the nearest-query rule off (None: as the snapshot says);
        ``ready``: send plain GETs of archived URLs ready-made (derived once into the user's cache folder,
        see :mod:`capreplay.replay.ready.responses` and :mod:`capreplay.replay.ready.slot`), else answer every request
        through the general path; ``order``: complete each page's concurrent responses in the order the capture
        completed them (see :mod:`capreplay.replay.sequence`), else each as soon as it is ready."""
        self.store = snapshot if isinstance(snapshot, SnapshotStore) else SnapshotStore(snapshot, strict=strict)
        self.ready = ReadySlot()
        if ready:
            self.ready.start(self.store)
        else:
            self.ready.done.set()
        self.app = make_app(self.store, keep_log=keep_log, ready=self.ready, order=order)
        self.certs = HostCertificates(self.store.hosts())
        self._runner: web.AppRunner | None = None
        self._extra: dict[tuple[int, int], tuple[web.TCPSite, web.TCPSite]] = {}
        self.info: ServeInfo | None = None

    @property
    def served(self) -> list[Served]:
        """Every request answered so far, in order."""
        return self.app[SERVED]

    @property
    def traffic(self) -> Traffic:
        """The requests in flight on each of the server's ports (the quiet signal's count)."""
        return self.app[TRAFFIC]

    async def quiet(
        self,
        info: ServeInfo,
        *,
        since: float,
        quiet_ms: float = SERVER_QUIET_MS,
        timeout_ms: float = QUIET_TIMEOUT_MS,
    ) -> bool:
        """Wait until the browser on ``info``'s ports has no request in flight and none started or ended for
        ``quiet_ms`` after ``since`` (a loop time), at most ``timeout_ms``; whether it went quiet (see
        :mod:`capreplay.replay.quiet`)."""
        ports = (info.http_port, info.https_port)
        return await self.traffic.quiet(ports, since=since, quiet_ms=quiet_ms, timeout_ms=timeout_ms)

    async def start(self, http_port: int = 0, https_port: int = 0) -> ServeInfo:
        """Bind both ports on 127.0.0.1 and return what a browser needs to use them."""
        runner = web.AppRunner(self.app, access_log=None, handle_signals=False)
        await runner.setup()
        self._runner = runner
        try:
            plain = web.TCPSite(runner, "127.0.0.1", http_port)
            await plain.start()
            tls = web.TCPSite(runner, "127.0.0.1", https_port, ssl_context=self.certs.default)
            await tls.start()
        except OSError as e:
            await self.stop()
            raise ReplayError(f"cannot bind 127.0.0.1: {os_reason(e)}") from e
        # Sites are listed in the order they started: plain first, then TLS.
        ports = [int(addr[1]) for addr in runner.addresses]
        self.app[ORDER].pair(ports)
        args = replay_args(self.store.origins(), http_port=ports[0], https_port=ports[1], spki_pin=self.certs.pin)
        self.info = ServeInfo(ports[0], ports[1], self.store.hosts(), args)
        return self.info

    async def listen(self) -> ServeInfo:
        """One more pair of ports on the running server, for one more browser.

        Browsers that share a server each get their own ports, so every request in :attr:`served` says (by
        its ``port``) which browser made it, and each browser's repeated requests get the recordings in capture
        order however the others' interleave (:meth:`Matcher.match`); the snapshot, the store and its caches
        stay shared.
        """
        if self._runner is None:
            raise ReplayError("the server is not running")
        plain = web.TCPSite(self._runner, "127.0.0.1", 0)
        tls = web.TCPSite(self._runner, "127.0.0.1", 0, ssl_context=self.certs.default)
        try:
            await plain.start()
            await tls.start()
        except OSError as e:
            await plain.stop()
            raise ReplayError(f"cannot bind 127.0.0.1: {os_reason(e)}") from e
        ports = (plain.port, tls.port)
        self._extra[ports] = (plain, tls)
        self.app[ORDER].pair(ports)
        args = replay_args(self.store.origins(), http_port=ports[0], https_port=ports[1], spki_pin=self.certs.pin)
        return ServeInfo(ports[0], ports[1], self.store.hosts(), args)

    async def unlisten(self, info: ServeInfo) -> None:
        """Close the ports :meth:`listen` opened for ``info``."""
        sites = self._extra.pop((info.http_port, info.https_port), ())
        for site in sites:
            await site.stop()
        self.traffic.forget((info.http_port, info.https_port))
        self.store.matcher.forget(self.app[ORDER].browser_of(info.http_port))
        self.app[ORDER].forget((info.http_port, info.https_port))

    async def stop(self) -> None:
        """Close the listening sockets and the archive files."""
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        self.ready.close()
        self.store.close()

    async def __aenter__(self) -> ServeInfo:
        return await self.start()

    async def __aexit__(self, *_: object) -> None:
        await self.stop()
