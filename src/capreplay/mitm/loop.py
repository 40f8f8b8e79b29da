"""mitmproxy running inside the caller's asyncio loop, with any addons.

:func:`run_mitmproxy` is the one place that starts mitmproxy's ``DumpMaster`` in-process and waits until
it listens: the capture runs it with a throw-away CA and its recording addon
(:mod:`capreplay.capture.recording_proxy`), the snapshot proxy (:mod:`capreplay.replay.proxy`) with the
snapshot's own CA and an addon that answers from the archive.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from mitmproxy import options
from mitmproxy.tools.dump import DumpMaster

from capreplay.certs.hosts import spki_pin_of_pem
from capreplay.errors import CapreplayError, CaptureError

CA_CERT = "mitmproxy-ca-cert.pem"
"""The CA certificate (no key) mitmproxy writes into, or finds in, its configuration folder."""


@dataclass(frozen=True)
class RunningProxy:
    """A started proxy: where it listens and the SPKI pin of the CA that signs its certificates."""

    port: int
    ca_pin: str


@contextlib.asynccontextmanager
async def run_mitmproxy(
    addons: Sequence[object],
    *,
    confdir: Path,
    listen_port: int = 0,
    failure: type[CapreplayError] = CaptureError,
    **settings: object,
) -> AsyncIterator[RunningProxy]:
    """Start mitmproxy on ``127.0.0.1:listen_port`` (0: a free port) with ``addons``; stop it when the block ends.

    ``confdir`` holds its CA (``mitmproxy-ca.pem``, key and certificate; made there if missing);
    ``settings`` are mitmproxy options, set once the master exists, since addons' own options (such as
    ``connection_strategy``) exist only then. A proxy that cannot start raises ``failure``.
    """
    opts = options.Options(listen_host="127.0.0.1", listen_port=listen_port, confdir=str(confdir))
    master = DumpMaster(opts, with_termlog=False, with_dumper=False)
    # mitmproxy's start-up check calls sys.exit() when anything logged an error (a port in use): in a
    # process that also serves or records, that must be an exception instead, with the logged reason.
    errorcheck = master.addons.get("errorcheck")
    errorcheck.finish()
    master.addons.remove(errorcheck)
    startup = _Errors()
    logger = logging.getLogger("mitmproxy")
    # While it starts, its errors become the exception's reason rather than log lines of their own.
    logger.addHandler(startup)
    logger.propagate = False
    try:
        opts.update(**settings)
        master.addons.add(*addons)
        task = asyncio.create_task(master.run())
        try:
            port = await _wait_listening(master, task, confdir / CA_CERT, startup, failure)
            logger.propagate = True
            logger.removeHandler(startup)
            yield RunningProxy(port=port, ca_pin=spki_pin_of_pem((confdir / CA_CERT).read_bytes()))
        finally:
            master.shutdown()
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.wait_for(task, timeout=10)
    finally:
        logger.propagate = True
        logger.removeHandler(startup)


class _Errors(logging.Handler):
    """The error lines mitmproxy logs while it starts (why a port could not be bound)."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


async def _wait_listening(
    master: DumpMaster, task: asyncio.Task[None], ca_file: Path, startup: _Errors, failure: type[CapreplayError]
) -> int:
    """The port the proxy bound, once it listens and has written its CA (bounded: 10 s).

    Both happen in mitmproxy's ``running`` hooks, the proxy server's first: it can listen a moment before
    the TLS addon has written the CA into the configuration folder (seen on a busy machine). A proxy server
    that is running but listens nowhere failed to bind.
    """
    server = master.addons.get("proxyserver")
    for _ in range(200):
        if task.done():
            raise failure(f"mitmproxy stopped while starting: {task.exception()!r}")
        addrs = server.listen_addrs()
        if addrs and ca_file.exists():
            return int(addrs[0][1])
        if server.is_running and not addrs:
            reason = "; ".join(line.splitlines()[0] for line in startup.lines if line) or "no reason logged"
            raise failure(f"mitmproxy could not listen on 127.0.0.1: {reason}")
        await asyncio.sleep(0.05)
    raise failure("mitmproxy did not start listening and write its CA within 10 s")
