"""mitmproxy running inside the caller's asyncio loop, with the recorder addon and a private CA."""

from __future__ import annotations

import asyncio
import contextlib
import tempfile
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

from mitmproxy import options
from mitmproxy.tools.dump import DumpMaster

from capreplay.capture.addon import Recorder
from capreplay.certs import spki_pin_of_pem
from capreplay.errors import CaptureError


@dataclass(frozen=True)
class RunningProxy:
    """A started proxy: where it listens and the SPKI pin of the CA that signs its certificates."""

    port: int
    ca_pin: str


@contextlib.asynccontextmanager
async def run_proxy(recorder: Recorder, *, verify_upstream: bool = True) -> AsyncIterator[RunningProxy]:
    """Start mitmproxy on 127.0.0.1 (a free port) with ``recorder``; stop it when the block ends."""
    with tempfile.TemporaryDirectory(prefix="capreplay-mitm-") as confdir:
        opts = options.Options(
            listen_host="127.0.0.1",
            listen_port=0,
            confdir=confdir,
            ssl_insecure=not verify_upstream,
        )
        master = DumpMaster(opts, with_termlog=False, with_dumper=False)
        master.addons.add(recorder)
        task = asyncio.create_task(master.run())
        try:
            ca_file = Path(confdir, "mitmproxy-ca-cert.pem")
            port = await _wait_listening(master, task, ca_file)
            ca = ca_file.read_bytes()
            yield RunningProxy(port=port, ca_pin=spki_pin_of_pem(ca))
        finally:
            master.shutdown()
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.wait_for(task, timeout=10)


async def _wait_listening(master: DumpMaster, task: asyncio.Task[None], ca_file: Path) -> int:
    """The port the proxy bound, once it listens and has written its CA (bounded: 10 s).

    Both happen in mitmproxy's ``running`` hooks, the proxy server's first: it can listen a moment before
    the TLS addon has written the CA into the configuration folder (seen on a busy machine).
    """
    server = master.addons.get("proxyserver")
    for _ in range(200):
        if task.done():
            raise CaptureError(f"mitmproxy stopped while starting: {task.exception()!r}")
        addrs = server.listen_addrs()
        if addrs and ca_file.exists():
            return int(addrs[0][1])
        await asyncio.sleep(0.05)
    raise CaptureError("mitmproxy did not start listening and write its CA within 10 s")
