"""``capreplay serve DIR``: replay a snapshot offline on 127.0.0.1 until interrupted.

With ``--proxy-port``, the snapshot is also an HTTP and HTTPS proxy on that port, in the same process and
event loop, for clients that cannot take Chromium's resolver rules (Firefox, curl, httpx); HTTPS through
it is signed by the snapshot's own CA, whose certificate file the first line names.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import signal
import sys
from pathlib import Path
from typing import Any

from capreplay.errors import UsageError


def port(text: str) -> int:
    """A TCP port number, 0 to 65535 (0: any free port)."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"must be a port number from 0 to 65535, not {text!r}")
    return value


def add_parser(sub: Any) -> None:
    """Register the verb."""
    p = sub.add_parser("serve", help="replay a snapshot offline", description=__doc__)
    p.add_argument("snapshot", type=Path, metavar="DIR", help="the snapshot folder to serve")
    p.add_argument("--http-port", type=port, default=0, metavar="PORT",
                   help="plain HTTP port on 127.0.0.1 (default: 0, any free port)")
    p.add_argument("--https-port", type=port, default=0, metavar="PORT",
                   help="HTTPS port on 127.0.0.1 (default: 0, any free port)")
    p.add_argument("--proxy-port", type=port, default=None, metavar="PORT",
                   help="also answer as an HTTP(S) proxy on 127.0.0.1:PORT (0: any free port); the first line "
                        "then adds proxy_port, ca_cert (the CA certificate to trust) and proxy_chromium_args")
    p.add_argument("--strict", action="store_true", default=None,
                   help="turn off the nearest-query rule: serve only what a keyed rule matches "
                        "(default: as the snapshot's manifest says)")
    p.set_defaults(run=run)


async def _serve(args: argparse.Namespace) -> None:
    # Imported when the verb runs: importing every verb's libraries would slow every command's start-up.
    from capreplay.replay.server import ReplayServer

    # serve runs for as long as the user likes: it keeps no per-request log (misses still go to logging).
    server = ReplayServer(args.snapshot, keep_log=False, strict=args.strict)
    info = await server.start(args.http_port, args.https_port)
    try:
        async with contextlib.AsyncExitStack() as stack:
            first = info.as_json()
            if args.proxy_port is not None:
                # mitmproxy takes seconds to import: only a proxy pays for it.
                from capreplay.replay.proxy.serve import serve_proxy

                proxy = await stack.enter_async_context(serve_proxy(server.store, port=args.proxy_port))
                first |= proxy.as_json()
                if proxy.ca_made is not None:
                    # A client must trust this certificate before HTTPS through the proxy works.
                    print(f"capreplay serve: made the snapshot's CA ({proxy.ca_made}); clients must trust "
                          f"{proxy.ca_cert}", file=sys.stderr)  # fmt: skip
            # The loaded index is hundreds of thousands of long-lived objects; without freezing them every full
            # collection walks them all (272 ms pauses at 100,000 records, p99 232 ms -> 10 ms when frozen).
            gc.freeze()
            stop = asyncio.Event()
            asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
            # The first line is a contract: one JSON object with the ports, hosts and Chromium arguments.
            sys.stdout.write(json.dumps(first) + "\n")
            sys.stdout.flush()
            await stop.wait()
    finally:
        await server.stop()


def run(args: argparse.Namespace) -> int:
    """Serve until Ctrl-C or SIGTERM."""
    if args.http_port and args.http_port == args.https_port:
        raise UsageError(f"--http-port and --https-port are both {args.http_port}: one port cannot serve both")
    for name in ("http_port", "https_port"):
        if args.proxy_port and args.proxy_port == getattr(args, name):
            flag = "--" + name.replace("_", "-")
            raise UsageError(f"--proxy-port and {flag} are both {args.proxy_port}: one port cannot serve both")
    try:
        asyncio.run(_serve(args))
    except KeyboardInterrupt:
        return 0
    return 0
