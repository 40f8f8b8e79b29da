"""Screenshots of each kind of ``capreplay view`` page, 1280 px wide, for the docs and for looking at them.

    uv run python scripts/viewer_screenshots.py RESULTS_DIR OUT_DIR [--snapshot DIR ...] [--sheet FILE ...]

Exports the viewer's site for RESULTS_DIR into a temporary folder, then opens the first page of each kind
(front page, agent run, episode — one with a failing leaf when there is one —, snapshot, study run, study
call, offline study, review sheet) from ``file://`` in Chromium and writes ``OUT_DIR/<kind>.png`` (the top
1,600 pixels of the page). Prints each file with the page it shows.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

from playwright.sync_api import Page, sync_playwright

from capreplay.browser.launch import find_chromium

WIDTH, HEIGHT = 1280, 1600


def kind_of(path: str) -> str:
    """A page's kind from its site path."""
    parts = path.split("/")
    if len(parts) == 1:
        return "front"
    if parts[0] == "runs":
        return "run" if parts[-1] == "index.html" else "episode"
    if parts[0] == "studies":
        return "study" if parts[-1] == "index.html" else "study-call"
    return {"snapshots": "snapshot", "offline": "offline", "sheets": "sheet"}.get(parts[0], parts[0])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--snapshot", action="append", default=[])
    parser.add_argument("--sheet", action="append", default=[])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        export = Path(tmp) / "site"
        extra = [a for s in args.snapshot for a in ("--snapshot", s)] + [a for s in args.sheet for a in ("--sheet", s)]
        subprocess.run([sys.executable, "-m", "capreplay", "view", str(args.results), "--export", str(export), *extra],
                       check=True)  # fmt: skip
        pages = sorted(p.relative_to(export).as_posix() for p in export.rglob("*.html"))
        chosen: dict[str, str] = {}
        # An ACT call on the screenshot shows the most: the target's box and the click drawn on what the model saw.
        for path in sorted(pages, key=lambda p: not (".act." in p and p.endswith("/screenshot.html"))):
            chosen.setdefault(kind_of(path), path)
        args.out.mkdir(parents=True, exist_ok=True)
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=find_chromium())
            page = browser.new_page(viewport={"width": WIDTH, "height": 900})
            failing = next((p for p in pages if kind_of(p) == "episode"
                            and _has_failed_leaf(page, (export / p).as_uri())), None)  # fmt: skip
            if failing:
                chosen["episode"] = failing
            for kind, path in sorted(chosen.items()):
                page.goto((export / path).as_uri(), wait_until="load")
                page.evaluate("() => Promise.all([...document.images].map(i => { i.loading = 'eager'; "
                              "return i.decode().catch(() => null); }))")  # fmt: skip
                height = min(HEIGHT, page.evaluate("() => document.documentElement.scrollHeight"))
                target = args.out / f"{kind}.png"
                page.screenshot(path=target, clip={"x": 0, "y": 0, "width": WIDTH, "height": height}, full_page=True)
                print(f"{target}  {path}")
            browser.close()
    return 0


def _has_failed_leaf(page: Page, url: str) -> bool:
    page.goto(url)
    return bool(page.locator("li.leaf.failed").count())


if __name__ == "__main__":
    raise SystemExit(main())
