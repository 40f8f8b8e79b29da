"""The practical limit for replay on aiohttp: every archived response held in memory, one dict lookup each.

    python scripts/bench_limit_server.py SNAPSHOT_DIR [--port 0]

Loads every response record of the snapshot's WARCs into a dict keyed by (Host, request target), then
answers each request with the archived status, the same headers capreplay sends (``replay_headers``:
hop-by-hop, Alt-Svc and Content-Length dropped) and the archived body, built into a ``web.Response`` the
way capreplay's app builds it. No matching rules, no files, no logging. Prints one JSON line
(``{"http_port": N, "responses": N}``) once it listens, then serves until SIGTERM.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import sys
from pathlib import Path
from urllib.parse import urlsplit

from aiohttp import web
from multidict import CIMultiDict

from capreplay.archive.warc.read import iter_records
from capreplay.replay.response import Outgoing, replay_headers

BODIES = web.AppKey("bodies", dict[tuple[str, str], Outgoing])


def load_responses(snapshot: Path) -> dict[tuple[str, str], Outgoing]:
    """(host, path and query) -> the archived response, for every response record; the first one wins."""
    out: dict[tuple[str, str], Outgoing] = {}
    for warc in sorted((snapshot / "archive").glob("*.warc*")):
        with open(warc, "rb") as stream:
            for rec in iter_records(stream, str(warc)):
                if rec.rec_type != "response" or not rec.url:
                    continue
                parts = urlsplit(rec.url)
                target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
                outgoing = Outgoing(rec.status or 200, rec.reason or "", replay_headers(rec.http_headers), rec.payload)
                out.setdefault((parts.netloc.lower(), target), outgoing)
    return out


async def handle(request: web.Request) -> web.Response:
    """One dict lookup; the response is built as capreplay's ``_send`` builds it."""
    found = request.app[BODIES].get((request.host, request.raw_path))
    if found is None:
        return web.Response(status=404, text="not archived")
    return web.Response(
        status=found.status, reason=found.reason or None, headers=CIMultiDict(found.headers), body=found.body
    )


async def serve(snapshot: Path, port: int) -> None:
    """Load, listen, print the JSON line, serve until SIGTERM."""
    app = web.Application()
    app[BODIES] = load_responses(snapshot)
    app.router.add_route("*", "/{tail:.*}", handle)
    runner = web.AppRunner(app, access_log=None, handle_signals=False)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", port)
    await site.start()
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    bound = int(runner.addresses[0][1])
    sys.stdout.write(json.dumps({"http_port": bound, "responses": len(app[BODIES])}) + "\n")
    sys.stdout.flush()
    try:
        await stop.wait()
    finally:
        await runner.cleanup()


def main() -> int:
    """Parse the arguments and serve."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("snapshot", type=Path)
    p.add_argument("--port", type=int, default=0)
    args = p.parse_args()
    asyncio.run(serve(args.snapshot, args.port))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
