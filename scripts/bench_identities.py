"""Are element identities stable across two loads of the same page? browser-use's indices, Playwright's refs.

    uv run python scripts/bench_identities.py [--snapshot snapshots/study] [--loads 2]

The study uses an index of browser-use's indexed DOM, or a ``[ref=eN]`` of Playwright's AI-mode ARIA
snapshot, only within the page session it was read in. This measures whether that is a choice or a need:
each bundled page of the snapshot is loaded ``--loads`` times in fresh tabs of one offline browser, and for
each load the indexed DOM and the AI-mode snapshot are read. For every identity (an index, a ref) of the
first load, it counts as stable when a later load gives the same identity to the same line (the element's
tag, role, name and text as the view prints them). Whole texts are compared too.

Raw figures go into ``results/bench/identities-<date>.json``; a Markdown table is printed. A benchmark,
not a test: it asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import re
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from capreplay.study.page.extract import extract_indexed_dom
from capreplay.study.page.load import open_page_session
from capreplay.study.page.session import study_browser
from capreplay.study.run.tasks import load_study_tasks
from capreplay.testing.fixtures.study.tasks import bundled_tasks_path

INDEX = re.compile(r"\[(\d+)\]")
REF = re.compile(r"\[ref=([a-z0-9]+)\]")


def identities(text: str, pattern: re.Pattern[str]) -> dict[str, str]:
    """Each identity the text shows, with its line (the identity itself blanked, indentation dropped)."""
    found = {}
    for line in text.splitlines():
        for match in pattern.finditer(line):
            found[match.group(1)] = pattern.sub("#", line).strip()
    return found


def stable_share(first: dict[str, str], later: dict[str, str]) -> float | None:
    """The share of the first load's identities that a later load gives to the same line."""
    if not first:
        return None
    return sum(1 for key, line in first.items() if later.get(key) == line) / len(first)


async def read_once(context: Any, adapter: Any, url: str) -> dict[str, str]:
    """One fresh load of ``url``: its indexed DOM text and its AI-mode ARIA snapshot."""
    page = await open_page_session(context, url)
    try:
        ai = await page.aria_snapshot(mode="ai")
        dom = await extract_indexed_dom(page, adapter)
        return {"indexed_dom": dom.text, "aria_ai": ai}
    finally:
        await page.close()


async def measure(snapshot: Path, loads: int) -> list[dict[str, Any]]:
    """Per page and view: identities, share stable in every later load, whole text equal."""
    tasks = load_study_tasks(bundled_tasks_path()).tasks
    rows = []
    async with study_browser(snapshot) as (context, adapter):
        for page in tasks.pages:
            reads = [await read_once(context, adapter, page.url) for _ in range(loads)]
            for view, pattern in (("indexed_dom", INDEX), ("aria_ai", REF)):
                first = identities(reads[0][view], pattern)
                shares = [stable_share(first, identities(r[view], pattern)) for r in reads[1:]]
                rows.append({"page": page.id, "view": view, "identities": len(first),
                             "stable_share": min(s for s in shares if s is not None) if first else None,
                             "same_text": all(r[view] == reads[0][view] for r in reads[1:])})  # fmt: skip
    return rows


def table(rows: list[dict[str, Any]]) -> str:
    """The rows as Markdown: identities, share stable, whole text the same, per page and view."""
    lines = ["| page | view | identities | stable | same text |", "|---|---|---|---|---|"]
    for r in rows:
        share = "-" if r["stable_share"] is None else f"{r['stable_share']:.0%}"
        lines.append(f"| {r['page']} | {r['view']} | {r['identities']} | {share} | {r['same_text']} |")
    return "\n".join(lines)


def main() -> int:
    """Measure, write the JSON, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--snapshot", type=Path, default=Path("snapshots/study"), help="the study snapshot")
    parser.add_argument("--loads", type=int, default=2, help="loads per page (at least 2)")
    args = parser.parse_args()
    rows = asyncio.run(measure(args.snapshot, max(2, args.loads)))
    stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H%M")
    out = Path("results/bench") / f"identities-{stamp}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"created": stamp, "python": sys.version.split()[0], "machine": platform.machine(),
                               "snapshot": str(args.snapshot), "loads": args.loads, "rows": rows}, indent=1) + "\n")
    print(table(rows))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
