"""Determinism benchmark: every page of ``../shared/interop/`` replayed five times, each in a fresh browser.

    .venv/bin/python scripts/bench_determinism.py [--replays 5] [--only SUBSTRING ...] [--variant NAME ...]

Each WARC and WACZ is imported with ``capreplay import``; every page the import lists is loaded
``--replays`` times, each time by a fresh replay server and a fresh Chromium launched by
``capreplay.browser`` (``load_page`` with the page's actions, so after load and settle), keeping
``page.content()`` and a viewport screenshot. A page is DOM-stable when all its serialised DOMs are equal,
pixel-stable when all its screenshots are; the shares of such pages are the two figures (goal: 90% each).
Every page that differs is listed with where: the first differing stretch of DOM (the earliest over the
replays, compared with the first replay) and the changed pixels with the box holding them.

``--variant`` runs the whole measurement once per variant in one run, the variants of a page one after the
other (the default is ``default``, the browser and server every capreplay consumer gets); ``baseline`` turns
off the rendering settlement that ``capreplay.browser.launch`` adds, ``unordered`` the server's page order
(``ReplayServer(order=False)``: each response sent as soon as it is ready, see
:mod:`capreplay.replay.sequence`), to show what each changes and costs. ``proxy`` browses through
``serve_proxy`` (the browser's ``proxy_chromium_args``), whose answers keep the same page order;
``proxy-unordered`` with the proxy's order off; ``proxy-forward`` through a proxy that forwards every request to
a loopback replay app that orders it (the other way the proxy could have kept the order: one more hop per
request; see ``bench_proxy_order.py``). Every replay is timed:
``load_s``,
from the launch of the browser to the page loaded, settled and its DOM and screenshot taken, and
``span_s``, at the server, from the first request to the last response sent; with the order on, how many
responses it held and for how long in all. Results go to ``results/bench/determinism-<date>.json``, a
Markdown table to stdout.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import json
import logging
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from aiohttp import web
from bench_interop import ROOT, code_version, import_file, interop_files, short_name
from bench_pages import Run, capreplay_classify, load
from bench_proxy_order import proxy_variant

from capreplay.archive.snapshot.manifest import load_manifest
from capreplay.browser.launch import BrowserSettings
from capreplay.errors import CapreplayError
from capreplay.models.capture_plan import Action, CapturePlan
from capreplay.models.manifest import PageEntry
from capreplay.replay.page_order import ORDER
from capreplay.replay.server import ReplayServer
from capreplay.verify.sameness import first_dom_difference, pixel_region, union_box

VARIANTS = ("default", "baseline", "unordered", "proxy", "proxy-unordered", "proxy-forward")


def _actions(entry: PageEntry) -> list[Action]:
    plan = CapturePlan.model_validate({"pages": [{"url": entry.url, "actions": entry.actions}]})
    return list(plan.pages[0].actions)


def _settings(base: BrowserSettings, variant: str) -> BrowserSettings:
    if variant == "baseline":
        return dataclasses.replace(base, settle_rendering=False)
    return base


@dataclasses.dataclass
class Span:
    """When the server received its first request and sent its last response (loop times)."""

    first: float | None = None
    last: float | None = None

    @web.middleware
    async def middleware(
        self, request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
    ) -> web.StreamResponse:
        """Outermost: sees a request come in and, after every other middleware has sent it, go out."""
        loop = asyncio.get_running_loop()
        self.first = loop.time() if self.first is None else self.first
        try:
            return await handler(request)
        finally:
            self.last = loop.time()


async def replay_once(snapshot: Path, entry: PageEntry, variant: str) -> tuple[Run, dict[str, Any]]:
    """One replay of one page: a fresh server, a fresh browser; the run and its times."""
    server = ReplayServer(snapshot, order=variant != "unordered")
    span = Span()
    server.app.middlewares.insert(0, span.middleware)
    info = await server.start()
    try:
        async with contextlib.AsyncExitStack() as stack:
            manifest = server.store.manifest
            args, order = info.chromium_args, server.app[ORDER]
            if variant.startswith("proxy"):
                kind = {"proxy": "ordered", "proxy-unordered": "unordered", "proxy-forward": "forward"}[variant]
                _, _, args, order = await stack.enter_async_context(proxy_variant(server, kind))
            settings = _settings(BrowserSettings(args, manifest.frozen_time, manifest.random_seed), variant)
            started = time.perf_counter()
            run = await load(settings, entry.url, capreplay_classify, _actions(entry))
            span_s = span.last - span.first if span.first is not None and span.last is not None else None
            times = {"load_s": time.perf_counter() - started, "span_s": None if variant.startswith("proxy") else span_s,
                     "held": order.held, "held_s": order.held_s}  # fmt: skip
            return run, times
    finally:
        await server.stop()


def timing(times: list[dict[str, Any]]) -> dict[str, Any]:
    """Medians over a page's replays, and every replay's figures."""
    spans = [t["span_s"] for t in times if t["span_s"] is not None]
    return {
        "load_s_median": round(statistics.median(t["load_s"] for t in times), 4),
        "span_s_median": round(statistics.median(spans), 4) if spans else None,
        "held_median": statistics.median(t["held"] for t in times),
        "held_s_median": round(statistics.median(t["held_s"] for t in times), 4),
        "times": [{k: round(v, 4) if isinstance(v, float) else v for k, v in t.items()} for t in times],
    }


def differences(runs: list[Run]) -> dict[str, Any]:
    """Whether all replays agree, and where the ones that do not differ from the first."""
    first = runs[0]
    doms = [first_dom_difference(first.dom, r.dom) for r in runs[1:]]
    pixels = [pixel_region(first.screenshot, r.screenshot) for r in runs[1:]]
    dom_diffs = [d for d in doms if d is not None]
    earliest = min(dom_diffs, key=lambda d: d.offset) if dom_diffs else None
    return {
        "dom_identical": not dom_diffs,
        "pixels_identical": all(p.changed == 0 for p in pixels),
        "dom_replays_differing": len(dom_diffs),
        "first_dom_difference": asdict(earliest) if earliest else None,
        "pixel_replays_differing": sum(p.changed > 0 for p in pixels),
        "max_pixels_changed": max((p.changed for p in pixels), default=0),
        "max_pixel_fraction": round(max((p.fraction for p in pixels), default=0.0), 6),
        "pixel_box": union_box([p.box for p in pixels]),
        "statuses": [r.status for r in runs],
        "errors": sorted({r.error for r in runs if r.error}),
        "requests": [len(r.outcomes) for r in runs],
        "misses": [sum(o.result in ("miss", "blocked") for o in r.outcomes) for r in runs],
    }


async def bench_file(path: Path, args: argparse.Namespace) -> list[dict[str, Any]]:
    """Every page of one file, ``--replays`` times per variant."""
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="bench-determinism-") as tmp:
        imported = import_file(path, Path(tmp, "snapshot"))
        if not imported.ok:
            return [{"file": short_name(path), "import_failed": imported.message}]
        try:
            pages = list(load_manifest(imported.snapshot).pages)
        except CapreplayError as e:
            return [{"file": short_name(path), "import_failed": f"imported, but unreadable: {e.line()}"}]
        for entry in pages:
            for variant in args.variant:
                try:
                    replays = [await replay_once(imported.snapshot, entry, variant) for _ in range(args.replays)]
                except CapreplayError as e:  # a snapshot the server refuses: reported, and the run goes on
                    rows.append({"file": short_name(path), "page": entry.url, "variant": variant,
                                 "serve_failed": e.line()})  # fmt: skip
                    continue
                runs = [run for run, _ in replays]
                row = {"file": short_name(path), "page": entry.url, "variant": variant, **differences(runs),
                       **timing([times for _, times in replays])}  # fmt: skip
                rows.append(row)
                print(f"   {variant:9} {'dom same' if row['dom_identical'] else 'DOM DIFFERS':11} "
                      f"{'pixels same' if row['pixels_identical'] else 'PIXELS DIFFER':13} "
                      f"load {row['load_s_median']:.2f}s span {row['span_s_median'] or 0:.3f}s "
                      f"held {row['held_median']} {entry.url}", flush=True)  # fmt: skip
                if args.keep and not (row["dom_identical"] and row["pixels_identical"]):
                    _keep(args.keep / f"{short_name(path).replace('/', '+')}-{len(rows):03d}-{variant}", runs)
    return rows


def _keep(folder: Path, runs: list[Run]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for i, run in enumerate(runs):
        (folder / f"{i}.png").write_bytes(run.screenshot)
        (folder / f"{i}.html").write_text(run.dom)


def shares(rows: list[dict[str, Any]], variant: str) -> dict[str, Any]:
    """The two figures for one variant."""
    pages = [r for r in rows if r.get("variant") == variant and "dom_identical" in r]
    n = len(pages)
    dom = sum(r["dom_identical"] for r in pages)
    px = sum(r["pixels_identical"] for r in pages)
    loads = [r["load_s_median"] for r in pages]
    spans = [r["span_s_median"] for r in pages if r["span_s_median"] is not None]
    return {"pages": n, "dom_identical": dom, "pixels_identical": px,
            "dom_share": round(dom / n, 4) if n else None, "pixel_share": round(px / n, 4) if n else None,
            "load_s_median": round(statistics.median(loads), 4) if loads else None,
            "load_s_total": round(sum(loads), 3), "span_s_total": round(sum(spans), 3),
            "span_s_median": round(statistics.median(spans), 4) if spans else None}  # fmt: skip


def table(rows: list[dict[str, Any]], variants: list[str]) -> str:
    """Shares per variant, then every page that differs with where."""
    head = ("| variant | pages | DOM identical in all replays | pixel-identical in all replays "
            "| load s (median page; sum of page medians) | server span s (median page; sum) |")  # fmt: skip
    lines = [head, "|---|---|---|---|---|---|"]
    for v in variants:
        s = shares(rows, v)
        if s["pages"]:
            lines.append(f"| {v} | {s['pages']} | {s['dom_identical']} ({s['dom_share']:.0%}) | "
                         f"{s['pixels_identical']} ({s['pixel_share']:.0%}) | {s['load_s_median']:.2f}; "
                         f"{s['load_s_total']:.1f} | {s['span_s_median'] or 0:.3f}; "
                         f"{s['span_s_total']:.2f} |")  # fmt: skip
    failed = [r for r in rows if "import_failed" in r]
    if failed:
        lines += ["", "Files that did not import (no pages measured):"]
        lines += [f"- {r['file']}: {r['import_failed'][:160]}" for r in failed]
    lines += [
        "",
        "| variant | file | page | DOM: first difference | pixels: changed (max), box |",
        "|---|---|---|---|---|",
    ]
    for r in rows:
        if "serve_failed" in r:
            lines.append(f"| {r['variant']} | {_short(r['file'])} | {r['page'][:90]} | not served: "
                         f"{r['serve_failed'][:80]} | - |")  # fmt: skip
        if "dom_identical" not in r or (r["dom_identical"] and r["pixels_identical"]):
            continue
        d = r["first_dom_difference"]
        dom = "same"
        if d is not None:
            dom = f"line {d['line']}, offset {d['offset']}: `{_clip(d['first'])}` vs `{_clip(d['second'])}`"
        px = "same"
        if not r["pixels_identical"]:
            px = f"{r['max_pixels_changed']} ({r['max_pixel_fraction']:.2%}), {r['pixel_box']}"
        lines.append(f"| {r['variant']} | {_short(r['file'])} | {r['page'][:90]} | {dom} | {px} |")
    return "\n".join(lines)


def _short(file: str) -> str:
    """A file's name without the folders that only say where it came from."""
    return file.rsplit("/", 1)[-1] if "/collections/" not in file else file.split("/collections/")[1].split("/")[0]


def _clip(text: str, width: int = 70) -> str:
    return text.replace("\n", "⏎").replace("|", "\\|").replace("`", "'")[:width]


async def main_async(args: argparse.Namespace) -> int:
    logging.getLogger("capreplay.replay").setLevel(logging.ERROR)  # misses are counted, not printed one by one
    files = [f for f in interop_files() if not args.only or any(s in str(f) for s in args.only)]
    rows: list[dict[str, Any]] = []
    for path in files:
        print(f"== {short_name(path)}", flush=True)
        rows += await bench_file(path, args)
    stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H%M")
    out = args.out or ROOT / "results" / "bench" / f"determinism-{stamp}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    result = {"benchmark": "determinism", "date": stamp, "code": code_version(), "replays": args.replays,
              "shares": {v: shares(rows, v) for v in args.variant}, "pages": rows}  # fmt: skip
    out.write_text(json.dumps(result, indent=1, default=str) + "\n")
    print(table(rows, args.variant))
    print(f"\nwrote {out}")
    return 0


def parse_args(argv: Iterable[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--replays", type=int, default=5, help="replays of each page, each in a fresh browser")
    p.add_argument("--only", action="append", default=[], metavar="SUBSTRING", help="files whose path contains this")
    p.add_argument("--variant", action="append", choices=VARIANTS, help="browser variants to measure (repeatable)")
    p.add_argument("--keep", type=Path, help="keep the DOMs and screenshots of pages that differ in this folder")
    p.add_argument("--out", type=Path, help="JSON result file (default: results/bench/determinism-<date>.json)")
    args = p.parse_args(None if argv is None else list(argv))
    args.variant = args.variant or ["default"]
    return args


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main_async(parse_args())))
