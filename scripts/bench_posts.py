"""POST benchmark: every request other than GET that a replay of ``../shared/interop/`` sends, and how it was served.

    .venv/bin/python scripts/bench_posts.py [--label after] [--only SUBSTRING ...]

Two kinds of sources:

- pages: each real capture whose page sends POSTs today (servo-warc-tests' Google, Twitter, Facebook, VK,
  Instagram recordings, kiwix) is imported with ``capreplay import`` and its main page loaded in Chromium
  through ``ReplayServer``, as ``bench_fidelity`` does; every non-GET request the server received is
  counted from the server's own log;
- archived POSTs with no page to send them (pywb's ``post-test.warc.gz``, mitmproxy's HARs with POSTs):
  each snapshot's origin is opened in Chromium and every archived POST is sent by ``fetch`` twice, once as
  archived and once as a later visit sends it (every run of six or more digits, a time or a counter, made
  different; ``_reqid``-style counters and ``pageViewId`` times).

Each request is served exact (``hit``), ``fuzzy`` by a named rule, or missed; a miss is of an archived POST
when the archive holds a request of its method on its path. ``beacon-get`` answers are counted apart. The
code measured is whatever ``capreplay`` imports: put an older tree's ``src`` first on ``PYTHONPATH`` to
measure it (``--label before``). The JSON result goes to ``results/bench/posts-<label>-<date>.json`` and a
Markdown table to stdout. A benchmark, not a test: it asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import re
import tempfile
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench_interop import INTEROP, ROOT, code_version, import_file, read_held, short_name
from bench_pages import capreplay_classify, load
from playwright.async_api import async_playwright

from capreplay.browser.launch import BrowserSettings, find_chromium
from capreplay.replay.server import ReplayServer

PAGES = ["Google/", "GoogleBR/", "GoogleDE/", "GoogleJapan/", "GoogleUK/", "Twitter/", "Facebook/", "VK/",
         "Instagram/", "kiwix-with-redirects"]  # fmt: skip
ARCHIVED = ["post-test.warc.gz", "postdata.har", "diff_data.har", "successful_log.har"]
_DIGITS = re.compile(rb"[0-9]{6,}")


def _sources(only: list[str]) -> tuple[list[Path], list[Path]]:
    files = sorted(p for p in INTEROP.rglob("*") if p.is_file() and p.name.endswith((".warc.gz", ".har")))
    pages = [p for p in files if any(k in str(p) for k in PAGES)]
    archived = [p for p in files if p.name in ARCHIVED]
    keep = (lambda p: any(o in str(p) for o in only)) if only else (lambda p: True)
    return [p for p in pages if keep(p)], [p for p in archived if keep(p)]


def _later(body: bytes) -> bytes:
    """The body a later visit sends: each run of six or more digits (a time, a counter, an id) changed."""
    return _DIGITS.sub(lambda m: str(int(m[0]) + 7919).encode()[: len(m[0])].rjust(len(m[0]), b"0"), body)


def _served(server: ReplayServer) -> list[dict[str, Any]]:
    return [{"method": s.method, "url": s.url, "result": s.result, "rule": s.rule, "answered_by": s.nearest,
             "archived": s.archived, "status": s.status} for s in server.served if s.method != "GET"]  # fmt: skip


async def bench_page(path: Path, work: Path) -> dict[str, Any]:
    """The file's main page in Chromium through the replay server; every non-GET request it sent."""
    done = import_file(path, work / "snap")
    held = read_held(path)
    if not done.ok or held.main_page is None:
        return {"file": short_name(path), "error": done.message}
    server = ReplayServer(done.snapshot)
    info = await server.start()
    try:
        manifest = server.store.manifest
        settings = BrowserSettings(info.chromium_args, manifest.frozen_time, manifest.random_seed)
        run = await load(settings, held.main_page, capreplay_classify, screenshot=False)
        return {"file": short_name(path), "page": held.main_page, "status": run.status, "requests": _served(server)}
    finally:
        await server.stop()


async def bench_archived(path: Path, work: Path) -> dict[str, Any]:
    """Every archived POST of the file sent by Chromium's ``fetch`` from its origin, as archived and as later."""
    done = import_file(path, work / "snap")
    if not done.ok:
        return {"file": short_name(path), "error": done.message}
    server = ReplayServer(done.snapshot)
    info = await server.start()
    try:
        posts = [e for _, e in server.store.entries() if e.method == "POST"]
        async with async_playwright() as pw:
            browser = await pw.chromium.launch(executable_path=find_chromium(), args=info.chromium_args)
            tab = await browser.new_page()
            for entry in posts:
                origin = "/".join(entry.url.split("/")[:3])
                await tab.goto(origin + "/capreplay-bench-origin")  # the miss page: any page of the origin
                body = base64.b64decode(entry.post_body) if entry.post_body else b""
                script = "([u, b]) => fetch(u, {method: 'POST', body: new Uint8Array(b)}).then(r => r.status)"
                for url, sent in ((entry.url, body), (_later_url(entry.url), _later(body))):
                    await tab.evaluate(script, [url, list(sent)])
            await browser.close()
        return {"file": short_name(path), "archived_posts": len(posts), "requests": _served(server)}
    finally:
        await server.stop()


def _later_url(url: str) -> str:
    return _later(url.encode()).decode()


def summary(results: list[dict[str, Any]]) -> dict[str, Any]:
    """Counts over every request: by result and rule, archived POSTs served, beacons answered by their GET."""
    requests = [r for f in results for r in f.get("requests", [])]
    by = Counter(r["result"] if r["result"] != "fuzzy" else f"fuzzy:{r['rule']}" for r in requests)
    archived = [r for r in requests if r["result"] != "miss" or r["archived"]]
    return {
        "requests": len(requests),
        "by_result": dict(sorted(by.items())),
        "archived_method_requests": len(archived),
        "archived_method_served": sum(r["result"] != "miss" for r in archived),
        "beacon_get": sum(r["rule"] == "beacon-get" for r in requests),
        "missed": sum(r["result"] == "miss" for r in requests),
    }


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--label", default="after")
    parser.add_argument("--only", action="append", default=[])
    args = parser.parse_args()
    pages, archived = _sources(args.only)
    results: list[dict[str, Any]] = []
    for path, bench in [*((p, bench_page) for p in pages), *((p, bench_archived) for p in archived)]:
        with tempfile.TemporaryDirectory() as work:
            results.append(await bench(path, Path(work)))
        print(short_name(path), summary(results[-1:]), flush=True)
    date = datetime.now(UTC).strftime("%Y-%m-%dT%H%M")
    out = {"benchmark": "posts", "label": args.label, "date": date, "code": code_version(),
           "pages": summary([r for r in results if "page" in r]),
           "archived": summary([r for r in results if "archived_posts" in r]),
           "all": summary(results), "files": results}  # fmt: skip
    target = ROOT / "results" / "bench" / f"posts-{args.label}-{date}.json"
    target.write_text(json.dumps(out, indent=1) + "\n")
    print("\n| | requests | served | missed | by result | beacon-get |\n|---|---|---|---|---|---|")
    for part in ("pages", "archived", "all"):
        s = out[part]
        print(f"| {part} | {s['requests']} | {s['requests'] - s['missed']} | {s['missed']} | {s['by_result']} "
              f"| {s['beacon_get']} |")  # fmt: skip
    print(f"\n{target}")


if __name__ == "__main__":
    asyncio.run(main())
