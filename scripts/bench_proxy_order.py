"""What the page order costs through the proxy, and what forwarding every request to the replay app would cost.

    .venv/bin/python scripts/bench_proxy_order.py [--rounds 5] [--only SUBSTRING ...]

Each interop file the ``--only`` substrings pick (default: the servo collection, real sites of 2018) is imported
and served once; three proxies run on its store: ``ordered`` (``serve_proxy``, the page order on),
``unordered`` (``serve_proxy(order=False)``) and ``forward`` (every request sent on to a loopback replay app,
which orders it: the other way the proxy could keep the order, one more HTTP hop per request), one at a time
(two mitmproxy masters in one process share its global context). Each round takes the variants in a rotated
order and starts each proxy with a Chromium of its own; a load is a fresh context (an empty cache) going to the
page until ``load``. Two figures:

- ``load_s``: each page's load through each proxy, ``--rounds`` times; ratios per page of the medians;
- ``fetch_s``: every archived GET of the snapshot fetched one after another by httpx through each proxy (no page,
  so nothing is held: the hop's cost alone).

Raw times and the ratios go to ``results/bench/proxy-order-<date>.json``, a summary to stdout.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import ssl
import statistics
import tempfile
import time
from collections.abc import AsyncIterator, Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
from aiohttp import web
from bench_interop import ROOT, code_version, import_file, interop_files, short_name
from mitmproxy import http
from playwright.async_api import Browser, async_playwright

from capreplay.archive.snapshot.manifest import load_manifest
from capreplay.browser.launch import find_chromium
from capreplay.certs.authority import snapshot_ca
from capreplay.errors import CapreplayError
from capreplay.mitm.loop import run_mitmproxy
from capreplay.replay.app import make_app
from capreplay.replay.page_order import ORDER
from capreplay.replay.proxy.responder import SnapshotResponder, served_here
from capreplay.replay.proxy.serve import SETTINGS, proxy_args, serve_proxy
from capreplay.replay.server import ReplayServer
from capreplay.replay.turns import Ordering

VARIANTS = ("ordered", "unordered", "forward")
LOAD_TIMEOUT_MS = 30_000


class ForwardAll(SnapshotResponder):
    """The proxy as it would be if it sent every request on to the loopback replay app (the app orders them)."""

    async def request(self, flow: http.HTTPFlow) -> None:
        """Refuse what the responder refuses; forward everything else, as it forwards WebSocket upgrades."""
        if flow.response is None and not served_here(flow.request.host, flow.request.port, self.endpoints):
            self._refuse(flow, f"{flow.request.host}:{flow.request.port}")
        if flow.response is None:
            self._forward_websocket(flow)


@contextlib.asynccontextmanager
async def proxy_variant(server: ReplayServer, variant: str) -> AsyncIterator[tuple[int, Path, list[str], Ordering]]:
    """A proxy of ``variant`` on ``server``'s store: its port, CA file, Chromium's arguments, and the page order
    that holds its answers."""
    if variant != "forward":
        async with serve_proxy(server.store, order=variant == "ordered") as proxy:
            assert proxy.ordering is not None
            yield proxy.proxy_port, proxy.ca_cert, proxy.chromium_args, proxy.ordering
        return
    # The app the proxy forwards to, with the server's ready responses; it orders what it answers.
    app = make_app(server.store, keep_log=False, ready=server.ready)
    runner = web.AppRunner(app, access_log=None, shutdown_timeout=1.0)
    await runner.setup()
    try:
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        responder = ForwardAll(server.store, None, int(runner.addresses[0][1]), order=False)
        ca = snapshot_ca(server.store.snapshot_id, {host for host, _ in responder.endpoints})
        async with run_mitmproxy([responder], confdir=ca.folder, failure=CapreplayError, **SETTINGS) as run:
            yield run.port, ca.cert, proxy_args(run.port, ca.pin), app[ORDER]
    finally:
        await runner.cleanup()


def _rotated(items: tuple[str, ...], turn: int) -> list[str]:
    k = turn % len(items)
    return [*items[k:], *items[:k]]


async def _load(browser: Browser, url: str) -> float | None:
    """One load in a fresh context: seconds from ``goto`` to ``load`` (None: it failed)."""
    context = await browser.new_context(ignore_https_errors=False)
    try:
        page = await context.new_page()
        started = time.perf_counter()
        try:
            await page.goto(url, wait_until="load", timeout=LOAD_TIMEOUT_MS)
        except Exception as e:
            print(f"   load failed: {url}: {str(e).splitlines()[0]}", flush=True)
            return None
        return time.perf_counter() - started
    finally:
        await context.close()


async def _fetch_all(port: int, ca: Path, urls: list[str]) -> float:
    """Seconds to GET every URL through the proxy on ``port``, one after another."""
    tls = ssl.create_default_context(cafile=str(ca))
    async with httpx.AsyncClient(proxy=f"http://127.0.0.1:{port}", verify=tls, trust_env=False, timeout=30) as client:
        started = time.perf_counter()
        for url in urls:
            response = await client.get(url)
            await response.aread()
        return time.perf_counter() - started


def _ratio(times: dict[str, list[float | None]], a: str, b: str) -> float | None:
    xa = [t for t in times[a] if t is not None]
    xb = [t for t in times[b] if t is not None]
    return round(statistics.median(xa) / statistics.median(xb), 4) if xa and xb else None


async def bench_file(path: Path, rounds: int) -> dict[str, Any]:
    """Every page of one file and every archived GET of it, through each proxy, ``rounds`` times."""
    with tempfile.TemporaryDirectory(prefix="bench-proxy-order-") as tmp:
        imported = import_file(path, Path(tmp, "snapshot"))
        if not imported.ok:
            return {"file": short_name(path), "import_failed": imported.message}
        pages = [p.url for p in load_manifest(imported.snapshot).pages]
        server = ReplayServer(imported.snapshot)
        await server.start()
        await asyncio.to_thread(server.ready.done.wait)  # the ready responses, as a long-running serve has them
        urls = sorted({e.url for _, e in server.store.entries() if e.method == "GET" and e.status == 200})
        loads: dict[str, dict[str, list[float | None]]] = {u: {v: [] for v in VARIANTS} for u in pages}
        fetches: dict[str, list[float | None]] = {v: [] for v in VARIANTS}
        held = {v: {"held": 0, "held_s": 0.0} for v in VARIANTS}
        try:
            async with async_playwright() as pw:
                for turn in range(rounds):
                    for v in _rotated(VARIANTS, turn):
                        # One proxy at a time: mitmproxy masters in one process share its global context, and
                        # the last one started would answer for all of them.
                        async with proxy_variant(server, v) as (port, ca, args, ordering):
                            browser = await pw.chromium.launch(executable_path=find_chromium(), args=args)
                            try:
                                for url in pages:
                                    loads[url][v].append(await _load(browser, url))
                            finally:
                                await browser.close()
                            fetches[v].append(await _fetch_all(port, ca, urls))
                            held[v]["held"] += ordering.held
                            held[v]["held_s"] = round(held[v]["held_s"] + ordering.held_s, 4)
        finally:
            await server.stop()
    row = {"file": short_name(path), "urls": len(urls), "held": held, "fetch_s": fetches,
           "fetch_ratio_ordered_unordered": _ratio(fetches, "ordered", "unordered"),
           "fetch_ratio_forward_ordered": _ratio(fetches, "forward", "ordered"),
           "pages": [{"page": u, "load_s": t, "load_ratio_ordered_unordered": _ratio(t, "ordered", "unordered"),
                      "load_ratio_forward_ordered": _ratio(t, "forward", "ordered")}
                     for u, t in loads.items()]}  # fmt: skip
    return row


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Medians over pages (and over files, for fetches) of the per-page ratios."""

    def median(values: Iterable[float | None]) -> float | None:
        xs = [x for x in values if x is not None]
        return round(statistics.median(xs), 4) if xs else None

    pages = [p for r in rows for p in r.get("pages", [])]
    return {
        "pages": len(pages),
        "load_ratio_ordered_unordered": median(p["load_ratio_ordered_unordered"] for p in pages),
        "load_ratio_forward_ordered": median(p["load_ratio_forward_ordered"] for p in pages),
        "fetch_ratio_ordered_unordered": median(r.get("fetch_ratio_ordered_unordered") for r in rows),
        "fetch_ratio_forward_ordered": median(r.get("fetch_ratio_forward_ordered") for r in rows),
        "fetch_s_total": {v: round(sum(statistics.median(r["fetch_s"][v]) for r in rows if "fetch_s" in r), 4)
                          for v in VARIANTS},
        "urls_total": sum(r.get("urls", 0) for r in rows),
    }  # fmt: skip


async def main_async(args: argparse.Namespace) -> int:
    logging.getLogger("capreplay.replay").setLevel(logging.ERROR)  # misses are counted elsewhere, not printed
    only = args.only or ["servo"]
    files = [f for f in interop_files() if any(s in str(f) for s in only)]
    rows = []
    for path in files:
        print(f"== {short_name(path)}", flush=True)
        row = await bench_file(path, args.rounds)
        rows.append(row)
        for p in row.get("pages", []):
            print(f"   load ordered/unordered {p['load_ratio_ordered_unordered']} forward/ordered "
                  f"{p['load_ratio_forward_ordered']} {p['page'][:80]}", flush=True)  # fmt: skip
        if "fetch_s" in row:
            print(f"   fetch {row['urls']} URLs: ordered/unordered {row['fetch_ratio_ordered_unordered']} "
                  f"forward/ordered {row['fetch_ratio_forward_ordered']}", flush=True)  # fmt: skip
    stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H%M")
    out = args.out or ROOT / "results" / "bench" / f"proxy-order-{stamp}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    result = {"benchmark": "proxy-order", "date": stamp, "code": code_version(), "rounds": args.rounds,
              "summary": summary(rows), "files": rows}  # fmt: skip
    out.write_text(json.dumps(result, indent=1, default=str) + "\n")
    print(json.dumps(result["summary"], indent=1))
    print(f"wrote {out}")
    return 0


def parse_args(argv: Iterable[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rounds", type=int, default=5, help="loads of each page (and fetches of each file) per variant")
    p.add_argument("--only", action="append", default=[], metavar="SUBSTRING", help="files whose path contains this")
    p.add_argument("--out", type=Path, help="JSON result file (default: results/bench/proxy-order-<date>.json)")
    return p.parse_args(None if argv is None else list(argv))


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main_async(parse_args())))
