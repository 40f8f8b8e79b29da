"""Verify's fidelity threshold: how far a correct replay is from what the capture saw, and how far a broken one is.

    .venv/bin/python scripts/bench_verify_threshold.py [--only NAME ...] [--extra DIR ...] [--group GROUP ...]
    .venv/bin/python scripts/bench_verify_threshold.py --render results/bench/verify-threshold-<date>.json

Four groups of pages, each compared with a reference the capture left, by the functions ``verify`` uses
(:func:`capreplay.verify.fidelity.compare_pixels`, :func:`~capreplay.verify.fidelity.compare_text`):

- ``correct``: every page of the committed snapshots (``snapshots/*``, and any ``--extra`` snapshot made by
  ``capreplay capture``), replayed by ``verify_pages`` itself, against the screenshot and visible text the
  capture kept;
- ``interop``: pages other tools captured with a reference of their own: ReplayWeb.page's ``example.wacz``
  (ArchiveWeb.page's extracted text in ``pages.jsonl``) and Scoop's ``example.com.wacz`` (its capture-time
  screenshot, a ``file:///screenshot.png`` record), imported and replayed the way ``verify`` replays;
- ``fonts``: the committed snapshots' pages replayed correctly, but by a browser that draws Arial, Times,
  Courier and the generic families with DejaVu instead of Liberation (a fontconfig file of the benchmark's
  own): what verifying on a machine with other fonts than the capture's does; and the pages of pywb's
  ``iana.warc.gz`` replayed with each set of fonts, the two views compared;
- ``broken``: the committed snapshots' pages replayed again with one kind of subresource refused in the
  browser (``script``; ``fetch`` and ``xhr``; ``stylesheet``): what a page looks like when what builds it never
  arrives. A page the refusal did not touch (no such request) is left out of that group.

A JSON result goes to ``results/bench/verify-threshold-<date>.json``, the distribution as Markdown to stdout.
A benchmark, not a test: it asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import logging
import os
import tempfile
import zipfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench_interop import INTEROP, ROOT, code_version, import_file
from playwright.async_api import Route
from warcio.archiveiterator import ArchiveIterator

from capreplay.archive.snapshot.manifest import load_manifest
from capreplay.browser.actions import load_page
from capreplay.browser.launch import BrowserSettings, open_browser
from capreplay.browser.observe import View, observe
from capreplay.browser.settle import traffic_quiet
from capreplay.errors import CapreplayError
from capreplay.models.capture_plan import Action, CapturePlan
from capreplay.models.manifest import PageEntry
from capreplay.replay.server import ReplayServer
from capreplay.verify.fidelity import compare_pixels, compare_text
from capreplay.verify.page_loads import verify_pages
from capreplay.verify.threshold import MAX_PIXELS_CHANGED, MIN_TEXT_SIMILARITY

SNAPSHOTS = ROOT / "snapshots"
BREAKS: dict[str, tuple[str, ...]] = {
    "no-scripts": ("script",),
    "no-fetch": ("fetch", "xhr"),
    "no-stylesheets": ("stylesheet",),
}
"""Each broken replay: the Playwright resource types the browser is not given."""
GROUPS = ("correct", "fonts", "broken", "interop")
_SWAPS = {
    "DejaVu Sans": ("Arial", "Helvetica", "Liberation Sans", "sans-serif", "system-ui"),
    "DejaVu Serif": ("Times New Roman", "Times", "Liberation Serif", "serif"),
    "DejaVu Sans Mono": ("Courier New", "Courier", "Liberation Mono", "monospace"),
}
OTHER_FONTS = (
    '<?xml version="1.0"?><!DOCTYPE fontconfig SYSTEM "fonts.dtd"><fontconfig>'
    '<include ignore_missing="no">/etc/fonts/fonts.conf</include>'
    + "".join(f'<match target="pattern"><test name="family"><string>{name}</string></test>'
              f'<edit name="family" mode="assign" binding="strong"><string>{font}</string></edit></match>'
              for font, names in _SWAPS.items() for name in names)
    + "</fontconfig>"
)  # fmt: skip
"""Chromium draws the common families (Arial, Times, Courier and the generic ones) with Liberation here; this
fontconfig file draws them with DejaVu, as a machine without Liberation would."""
FONT_PAGES = (INTEROP / "webrecorder+pywb/sample_archive/warcs/iana.warc.gz",)
WEBRECORDER = INTEROP / "webrecorder+replayweb.page/mkdocs/site/docs/examples/example.wacz"
SCOOP = INTEROP / "harvard-lil+scoop/assets/fixtures/example.com.wacz"


@dataclass
class Replayed:
    """One page replayed with some resource types refused."""

    view: View | None
    refused: int
    """Requests the browser was not let make."""
    error: str | None = None


def _actions(entry: PageEntry) -> list[Action]:
    plan = CapturePlan.model_validate({"pages": [{"url": entry.url, "actions": entry.actions}]})
    return list(plan.pages[0].actions)


async def replay_views(
    root: Path, entries: Sequence[PageEntry], refuse: tuple[str, ...] = (), viewport: tuple[int, int] | None = None
) -> list[Replayed]:
    """Replay each page as ``verify_pages`` does (one server, one browser, pages in order), refusing every
    request of a resource type in ``refuse``, and take its view; ``viewport``: another tool's window size, so
    that its screenshot can be compared."""
    server = ReplayServer(root)
    manifest = server.store.manifest
    out: list[Replayed] = []
    info = await server.start()
    try:
        settings = BrowserSettings(info.chromium_args, manifest.frozen_time, manifest.random_seed)
        async with open_browser(settings) as context:
            page = context.pages[0] if context.pages else await context.new_page()
            if viewport is not None:
                await page.set_viewport_size({"width": viewport[0], "height": viewport[1]})
            refused = 0

            async def gate(route: Route) -> None:
                nonlocal refused
                if route.request.resource_type in refuse:
                    refused += 1
                    await route.abort("blockedbyclient")
                else:
                    await route.fallback()

            if refuse:
                await page.route("**/*", gate)
            quiet = traffic_quiet(server.traffic, (info.http_port, info.https_port), page)
            for entry in entries:
                refused = 0
                try:
                    await load_page(page, entry.url, _actions(entry), quiet=quiet)
                    out.append(Replayed(await observe(page), refused))
                except Exception as e:  # a benchmark records a page that failed and goes on
                    out.append(Replayed(None, refused, str(e).splitlines()[0]))
    finally:
        await server.stop()
    return out


def _figures(captured_png: bytes | None, captured_text: str | None, view: View) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if captured_png is not None:
        px = compare_pixels(captured_png, view.screenshot)
        out |= {"pixels_changed": round(px.changed_fraction, 6), "max_channel_delta": px.max_channel_delta}
    if captured_text is not None:
        tx = compare_text(captured_text, view.text)
        out |= {"text_similarity": round(tx.similarity, 6), "first_text_difference": tx.first_difference}
    return out


async def correct_group(root: Path) -> list[dict[str, Any]]:
    """Every page of a committed snapshot, through ``verify_pages``."""
    rows = []
    for r in await verify_pages(root):
        row: dict[str, Any] = {"snapshot": root.name, "url": r.url, "status": r.status, "error": r.error,
                               "misses": r.misses, "archived_misses": r.archived_misses}  # fmt: skip
        if r.pixels is not None and r.text is not None:
            row |= {"pixels_changed": round(r.pixels.changed_fraction, 6),
                    "max_channel_delta": r.pixels.max_channel_delta,
                    "text_similarity": round(r.text.similarity, 6),
                    "first_text_difference": r.text.first_difference}  # fmt: skip
        rows.append(row)
    return rows


async def broken_group(root: Path, name: str, refuse: tuple[str, ...]) -> list[dict[str, Any]]:
    """Every page of a committed snapshot with ``refuse`` refused, against its capture; untouched pages dropped."""
    entries = [p for p in load_manifest(root).pages if p.screenshot and p.text]
    rows = []
    for entry, got in zip(entries, await replay_views(root, entries, refuse), strict=True):
        if got.refused == 0:
            continue
        row: dict[str, Any] = {"snapshot": root.name, "url": entry.url, "break": name, "refused": got.refused,
                               "error": got.error}  # fmt: skip
        if got.view is not None:
            assert entry.screenshot and entry.text
            row |= _figures((root / entry.screenshot).read_bytes(),
                            (root / entry.text).read_text(encoding="utf-8"), got.view)  # fmt: skip
        rows.append(row)
    return rows


async def _with_other_fonts(root: Path, entries: Sequence[PageEntry], work: Path) -> list[Replayed]:
    config = work / "fonts.conf"
    config.write_text(OTHER_FONTS)
    before = os.environ.get("FONTCONFIG_FILE")
    os.environ["FONTCONFIG_FILE"] = str(config)  # read by the Chromium launched next, which inherits it
    try:
        return await replay_views(root, entries)
    finally:
        if before is None:
            del os.environ["FONTCONFIG_FILE"]
        else:
            os.environ["FONTCONFIG_FILE"] = before


async def fonts_interop_group(work: Path) -> list[dict[str, Any]]:
    """Text-heavy pages of other tools' captures (iana.org), each replayed with this machine's fonts and with
    the other fonts: the two views compared, as a capture on one machine and a verify on another would be."""
    rows: list[dict[str, Any]] = []
    for path in FONT_PAGES:
        imported = import_file(path, work / f"fonts-{path.stem}")
        if not imported.ok:
            rows.append({"file": path.name, "error": imported.message})
            continue
        entries = load_manifest(imported.snapshot).pages
        here, other = await replay_views(imported.snapshot, entries), await _with_other_fonts(
            imported.snapshot, entries, work)  # fmt: skip
        for entry, a, b in zip(entries, here, other, strict=True):
            row: dict[str, Any] = {"file": path.name, "url": entry.url, "error": a.error or b.error}
            if a.view is not None and b.view is not None:
                row |= _figures(a.view.screenshot, a.view.text, b.view)
            rows.append(row)
    return rows


async def fonts_group(root: Path, work: Path) -> list[dict[str, Any]]:
    """Every page of a committed snapshot replayed by a browser with other generic fonts, against its capture."""
    entries = [p for p in load_manifest(root).pages if p.screenshot and p.text]
    replayed = await _with_other_fonts(root, entries, work)
    rows = []
    for entry, got in zip(entries, replayed, strict=True):
        row: dict[str, Any] = {"snapshot": root.name, "url": entry.url, "error": got.error}
        if got.view is not None:
            assert entry.screenshot and entry.text
            row |= _figures((root / entry.screenshot).read_bytes(),
                            (root / entry.text).read_text(encoding="utf-8"), got.view)  # fmt: skip
        rows.append(row)
    return rows


def _wacz_pages(path: Path) -> list[dict[str, Any]]:
    with zipfile.ZipFile(path) as z:
        lines = z.read("pages/pages.jsonl").decode().splitlines()
    return [json.loads(line) for line in lines[1:] if line.strip()]


def _wacz_record(path: Path, uri: str) -> bytes:
    with zipfile.ZipFile(path) as z:
        for name in z.namelist():
            if name.startswith("archive/") and ".warc" in name:
                for record in ArchiveIterator(io.BytesIO(z.read(name))):
                    if record.rec_headers.get_header("WARC-Target-URI") == uri:
                        # warcio parses no HTTP head for a file:/// URI; Scoop writes one anyway.
                        body = bytes(record.content_stream().read())
                        return body.split(b"\r\n\r\n", 1)[1] if body.startswith(b"HTTP/") else body
    raise LookupError(f"{path.name} holds no record of {uri}")


async def interop_group(work: Path) -> list[dict[str, Any]]:
    """Pages of other tools' captures that carry a capture-time reference, replayed and compared with it."""
    rows: list[dict[str, Any]] = []
    Refs = dict[str, tuple[bytes | None, str | None]]
    cases: list[tuple[Path, Refs]] = []
    if WEBRECORDER.exists():
        texts: Refs = {p["url"]: (None, p["text"]) for p in _wacz_pages(WEBRECORDER) if p.get("text")}
        cases.append((WEBRECORDER, texts))
    if SCOOP.exists():
        cases.append((SCOOP, {"https://example.com/": (_wacz_record(SCOOP, "file:///screenshot.png"), None)}))
    for path, refs in cases:
        imported = import_file(path, work / path.stem)
        if not imported.ok:
            rows.append({"file": path.name, "error": imported.message})
            continue
        try:
            entries = [p for p in load_manifest(imported.snapshot).pages if p.url in refs]
            pngs = [png for png, _ in refs.values() if png is not None]
            replayed = await replay_views(imported.snapshot, entries, viewport=_size(pngs[0]) if pngs else None)
        except CapreplayError as e:
            rows.append({"file": path.name, "error": e.line()})
            continue
        for entry, got in zip(entries, replayed, strict=True):
            row: dict[str, Any] = {"file": path.name, "url": entry.url, "error": got.error}
            if got.view is not None:
                png, text = refs[entry.url]
                row |= _figures(png, text, got.view)
                if png is not None:
                    row["sizes"] = [list(_size(png)), list(_size(got.view.screenshot))]
            rows.append(row)
    return rows


def _size(png: bytes) -> tuple[int, int]:
    from PIL import Image

    return Image.open(io.BytesIO(png)).size


def _quantiles(values: list[float]) -> str:
    if not values:
        return "-"
    s = sorted(values)
    pick = [s[0], s[len(s) // 2], s[min(len(s) - 1, int(len(s) * 0.95))], s[-1]]
    return " / ".join(f"{v:.4%}" for v in pick)


def _beyond(row: dict[str, Any]) -> bool:
    """Whether verify's threshold fails this row (a measure the row lacks cannot fail it)."""
    return bool(row.get("pixels_changed", 0.0) > MAX_PIXELS_CHANGED) or bool(
        row.get("text_similarity", 1.0) < MIN_TEXT_SIMILARITY
    )


def render(result: dict[str, Any]) -> str:
    """The distribution per group: min / median / p95 / max of changed pixels and of text similarity."""
    spread = "min / median / p95 / max"
    lines = [f"| group | pages | pixels changed ({spread}) | text similarity ({spread}) | beyond the threshold |",
             "| --- | --- | --- | --- | --- |"]  # fmt: skip
    groups: dict[str, list[dict[str, Any]]] = {
        "correct": result["correct"], "other fonts": result.get("fonts", []), "interop": result["interop"]}  # fmt: skip
    for name in BREAKS:
        groups[f"broken: {name}"] = [r for r in result["broken"] if r["break"] == name]
    for name, rows in groups.items():
        px = [r["pixels_changed"] for r in rows if "pixels_changed" in r]
        tx = [r["text_similarity"] for r in rows if "text_similarity" in r]
        beyond = sum(_beyond(r) for r in rows)
        lines.append(f"| {name} | {len(rows)} | {_quantiles(px)} | {_quantiles(tx)} | {beyond} |")
    worst = sorted((r for r in result["correct"] if "pixels_changed" in r), key=lambda r: -r["pixels_changed"])[:5]
    lines += [
        "",
        f"Threshold: more than {MAX_PIXELS_CHANGED:.0%} of pixels changed or less than "
        f"{MIN_TEXT_SIMILARITY:.0%} text similarity. Correct replays farthest from their capture:",
    ]
    lines += [f"- {r['url']}: pixels {r['pixels_changed']:.4%}, text {r['text_similarity']:.2%}" for r in worst]
    return "\n".join(lines)


async def main_async(args: argparse.Namespace) -> int:
    """Measure every group and write the result."""
    roots = [p for p in sorted(SNAPSHOTS.iterdir()) if (p / "manifest.json").exists()]
    roots = [p for p in roots if not args.only or p.name in args.only] + args.extra
    result: dict[str, Any] = {"benchmark": "verify-threshold", "date": args.date, "code": code_version(),
                              "groups": args.group, **{group: [] for group in GROUPS}}  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="bench-threshold-") as work:
        for root in roots:
            if "correct" in args.group:
                logging.info("correct: %s", root.name)
                result["correct"] += await correct_group(root)
            if "fonts" in args.group:
                logging.info("other fonts: %s", root.name)
                result["fonts"] += await fonts_group(root, Path(work))
            for name, refuse in BREAKS.items() if "broken" in args.group else ():
                logging.info("broken %s: %s", name, root.name)
                result["broken"] += await broken_group(root, name, refuse)
        if "fonts" in args.group:
            logging.info("other fonts: interop")
            result["fonts"] += await fonts_interop_group(Path(work))
        if "interop" in args.group:
            logging.info("interop")
            result["interop"] = await interop_group(Path(work))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    print(render(result))
    print(f"\nraw results: {args.out.relative_to(ROOT) if args.out.is_relative_to(ROOT) else args.out}")
    return 0


def parse_args(argv: Iterable[str] | None = None) -> argparse.Namespace:
    """Command-line options."""
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--only", action="append", default=[], metavar="NAME", help="only this committed snapshot")
    p.add_argument(
        "--group",
        action="append",
        choices=GROUPS,
        metavar="GROUP",
        help=f"only this group of pages (repeatable; default: all of {', '.join(GROUPS)})",
    )
    p.add_argument(
        "--extra",
        action="append",
        type=Path,
        default=[],
        metavar="DIR",
        help="another snapshot made by capreplay capture, measured as the committed ones are",
    )
    p.add_argument("--out", type=Path, help="JSON result file (default: results/bench/verify-threshold-<date>.json)")
    p.add_argument("--render", type=Path, metavar="JSON", help="print the tables of an earlier result and stop")
    args = p.parse_args(list(argv) if argv is not None else None)
    args.group = args.group or list(GROUPS)
    args.date = datetime.now(UTC).strftime("%Y-%m-%dT%H%M")
    args.out = args.out or ROOT / "results" / "bench" / f"verify-threshold-{args.date}.json"
    return args


def main(argv: Iterable[str] | None = None) -> int:
    """Run the benchmark, or render an earlier result."""
    args = parse_args(argv)
    if args.render:
        print(render(json.loads(args.render.read_text())))
        return 0
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    return asyncio.run(main_async(args))


if __name__ == "__main__":
    raise SystemExit(main())
