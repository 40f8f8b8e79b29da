"""Study benchmark: how long the representations take, and how raw_html, indexed_dom and Stagehand's snapshot
grow with a page.

    uv run python scripts/bench_study.py [--runs 3] [--rows 100 500 2000 10000] [--snapshot snapshots/study]

Two parts, one browser each (and Stagehand's, launched for each load), browser start and page load excluded
from every figure (for Stagehand, its launch and load are ``stagehand_open``, kept apart):

- per page kind: each bundled page of ``snapshots/study/`` is loaded ``--runs`` times; each time, every view
  is read from the loaded page as a run's page session reads it
  (:func:`capreplay.study.page.extract.capture_views`, without browser-use's agent-default audit copy) and
  every representation is formatted. The figure is the median of the runs' totals. The table page is then
  loaded ``--runs`` times more with and without that audit copy, alternately, side by side;
- page size: the study sites serve ``/table?rows=N``; those pages are captured with ``capreplay capture``
  into a temporary snapshot (as ``scripts/make_study_snapshot.py`` does), replayed, and for each size the
  time to read raw_html, browser-use's indexed DOM and Stagehand's snapshot (medians of ``--runs``) and
  their o200k_base tokens are recorded.

Every raw figure goes into ``results/bench/study-<date>.json``; the medians are printed as Markdown tables.
This is a benchmark, not a test: it asserts nothing and reports whether the goal (all representations
of any bundled page in under 3 s) was met.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from snapshot_tools import capture

from capreplay.study.page.extract import capture_views, extract_stagehand
from capreplay.study.page.frameworks import StudyAdapters
from capreplay.study.page.load import open_page_session
from capreplay.study.page.session import study_browser
from capreplay.study.representations import REPRESENTATIONS
from capreplay.study.run.tasks import load_study_tasks
from capreplay.study.tokens.count import count_o200k
from capreplay.testing.fixtures.study.sites import WWW, StudySites
from capreplay.testing.fixtures.study.tasks import bundled_tasks_path

GOAL_S = 3.0


async def all_views(context: Any, adapter: StudyAdapters, url: str, *, audit: bool = False) -> dict[str, Any]:
    """Load ``url``, then time reading every view and formatting all representations (load excluded); ``audit``
    also reads browser-use's agent-default copy, as ``study views`` does (a page session of a run does not)."""
    # Stagehand's own browser loads the page too; as for the study's, the load is left out of the time.
    stagehand = await extract_stagehand(url, adapter)
    page = await open_page_session(context, url)
    try:
        start = time.perf_counter()
        views = await capture_views(page, adapter, stagehand, audit=audit)
        rendered = {name: r.render(views) for name, r in REPRESENTATIONS.items()}
        total = time.perf_counter() - start + stagehand.snapshot_ms / 1000
    finally:
        await page.close()
        await adapter.stagehand.close_page()
    tokens = {n: count_o200k(out) for n, out in rendered.items() if isinstance(out, str)}
    return {"total_s": total, "views_ms": views.timings_ms, "tokens": tokens}


async def per_page_kind(snapshot: Path, runs: int) -> dict[str, list[dict[str, Any]]]:
    """Every bundled page, ``runs`` times (the pages in order within each run)."""
    pages = load_study_tasks(bundled_tasks_path()).tasks.pages
    figures: dict[str, list[dict[str, Any]]] = {p.id: [] for p in pages}
    async with study_browser(snapshot) as (context, adapter):
        for _ in range(runs):
            for p in pages:
                figures[p.id].append(await all_views(context, adapter, p.url))
    return figures


async def audit_side_by_side(snapshot: Path, runs: int) -> dict[str, list[dict[str, Any]]]:
    """The table page with and without browser-use's agent-default copy, alternately, ``runs`` times each."""
    figures: dict[str, list[dict[str, Any]]] = {"without": [], "with": []}
    async with study_browser(snapshot) as (context, adapter):
        for _ in range(runs):
            for key in figures:
                figures[key].append(await all_views(context, adapter, f"{WWW}/table", audit=key == "with"))
    return figures


async def capture_tables(rows: list[int], out: Path) -> None:
    """Capture ``/table?rows=N`` for every N into the snapshot ``out`` with the real command line."""
    pages = [{"url": f"{WWW}/table?rows={n}", "actions": [{"type": "wait_for_network_idle"}]} for n in rows]
    code = await capture(StudySites(), {"pages": pages}, out)
    if code != 0:
        raise SystemExit(f"capture of the table pages failed with exit status {code}")


async def table_growth(rows: list[int], runs: int) -> dict[str, list[dict[str, Any]]]:
    """Per row count, ``runs`` page loads: the views' timings and the token counts."""
    figures: dict[str, list[dict[str, Any]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        snapshot = Path(tmp, "tables")
        await capture_tables(rows, snapshot)
        async with study_browser(snapshot) as (context, adapter):
            for n in rows:
                figures[str(n)] = [await all_views(context, adapter, f"{WWW}/table?rows={n}") for _ in range(runs)]
    return figures


def _median(values: list[float]) -> float:
    return statistics.median(values)


def markdown(kinds: dict[str, list[dict[str, Any]]], growth: dict[str, list[dict[str, Any]]], runs: int) -> str:
    """The two tables of medians."""
    lines = [f"All representations per page kind (median of {runs} runs, browser start and page load "
             "excluded):", "", "| page | all (s) | raw_html (ms) | indexed_dom (ms) | stagehand (ms) | "
             "stagehand launch and load (ms) | under 3 s |", "|---|---|---|---|---|---|---|"]  # fmt: skip
    for page, runs_ in kinds.items():
        total = _median([r["total_s"] for r in runs_])
        raw, dom, hand, launch = (_median([r["views_ms"][k] for r in runs_])
                                  for k in ("raw_html", "indexed_dom", "stagehand_snapshot", "stagehand_open"))
        lines.append(f"| {page} | {total:.2f} | {raw:,.0f} | {dom:,.0f} | {hand:,.0f} | {launch:,.0f} | "
                     f"{'yes' if total < GOAL_S else 'no'} |")  # fmt: skip
    lines += ["", f"The table page by row count (median of {runs} runs; tokens are o200k_base):", "",
              "| rows | raw_html (ms) | raw_html tokens | indexed_dom (ms) | indexed_dom tokens | stagehand (ms) | "
              "stagehand tokens | all (s) |", "|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for n, runs_ in growth.items():
        raw, dom, hand = (_median([r["views_ms"][k] for r in runs_])
                          for k in ("raw_html", "indexed_dom", "stagehand_snapshot"))
        total = _median([r["total_s"] for r in runs_])
        tokens = runs_[0]["tokens"]
        lines.append(f"| {int(n):,} | {raw:,.0f} | {tokens['raw_html']:,} | {dom:,.0f} | {tokens['indexed_dom']:,} | "
                     f"{hand:,.0f} | {tokens['stagehand_snapshot']:,} | {total:.2f} |")  # fmt: skip
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--rows", type=int, nargs="+", default=[100, 500, 2000, 10_000])
    parser.add_argument("--snapshot", type=Path, default=Path("snapshots/study"))
    parser.add_argument("--out", type=Path, default=Path("results/bench"))
    args = parser.parse_args()
    kinds = asyncio.run(per_page_kind(args.snapshot, args.runs))
    audit = asyncio.run(audit_side_by_side(args.snapshot, args.runs))
    growth = asyncio.run(table_growth(args.rows, args.runs))
    now = datetime.now(UTC)
    doc = {"created_at": now.isoformat(), "runs": args.runs, "goal_s": GOAL_S, "python": platform.python_version(),
           "machine": platform.machine(), "per_page_kind": kinds, "audit_side_by_side": audit,
           "table_rows": growth}  # fmt: skip
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / f"study-{now:%Y-%m-%dT%H%M}.json"
    path.write_text(json.dumps(doc, indent=1) + "\n")
    print(markdown(kinds, growth, args.runs))
    lean, full = (_median([r["views_ms"]["indexed_dom"] for r in audit[k]]) for k in ("without", "with"))
    print(f"The table page's indexed DOM, alternately without and with the agent-default audit copy (median of "
          f"{args.runs} each): {lean:,.0f} ms and {full:,.0f} ms, ratio {full / lean:.2f}\n")
    slowest = max(_median([r["total_s"] for r in runs]) for runs in kinds.values())
    print(
        f"goal (all representations under {GOAL_S:.0f} s on every bundled page): "
        f"{'met' if slowest < GOAL_S else 'not met'}; "
        f"slowest {slowest:.2f} s. Raw figures: {path}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
