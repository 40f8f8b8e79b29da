"""The study's offline part on the bundled pages, written to results/study-offline/ to be committed.

    uv run python scripts/study_offline.py [--snapshot snapshots/study] [--out results/study-offline]

One page session per page of the bundled study tasks, on the snapshot served offline (no model is called):
- ``selftest.json``: every self-test check (answers built from ground truth) with its verdict;
- ``tokens.md``: o200k_base tokens (the image rule for the screenshot) per page and representation;
- ``coverage.md``: representability coverage without any model call: the share of READ answers present and
  of ACT targets addressable in each representation, overall and per page;
- ``timings.md``: milliseconds to produce all five representations of each page, page load excluded (the
  views read from the loaded page, plus formatting each representation).
Exit status 1 if any self-test check scored unexpectedly (the files are written all the same).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

from capreplay.study.offline.results_folder import write_offline_results
from capreplay.study.offline.selftest import SelftestCheck, SelftestReport, selftest_page
from capreplay.study.page.session import page_session, study_browser
from capreplay.study.representations import REPRESENTATIONS
from capreplay.study.run.tasks import load_study_tasks
from capreplay.study.tokens.view_tokens import ViewTokens, view_tokens
from capreplay.testing.fixtures.study.tasks import bundled_tasks_path


async def offline(snapshot: Path) -> tuple[SelftestReport, list[ViewTokens], dict[str, dict[str, float]]]:
    """The self-test checks, token counts and timings of every bundled page."""
    loaded = load_study_tasks(bundled_tasks_path())
    chosen = list(REPRESENTATIONS.values())
    checks: list[SelftestCheck] = []
    counts: list[ViewTokens] = []
    timings: dict[str, dict[str, float]] = {}
    async with study_browser(snapshot) as (context, adapter):
        for page in loaded.tasks.pages:
            async with page_session(context, adapter, page.url, loaded.tasks.page_tasks(page.id)) as session:
                start = time.perf_counter()
                rendered = [(r, r.render(session.views)) for r in chosen]
                render_ms = (time.perf_counter() - start) * 1000
                steps = dict(session.views.timings_ms, render=render_ms)
                timings[page.id] = dict(steps, total=sum(steps.values()))
                counts += [view_tokens(page.id, r, out) for r, out in rendered]
                checks += await selftest_page(session, page.id, chosen)
    return SelftestReport(snapshot=str(snapshot), tasks="bundled study tasks", checks=checks), counts, timings


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--snapshot", type=Path, default=Path("snapshots/study"))
    parser.add_argument("--out", type=Path, default=Path("results/study-offline"))
    args = parser.parse_args()
    report, counts, timings = asyncio.run(offline(args.snapshot))
    write_offline_results(args.out, report, counts, timings)
    print(f"self-test: {len(report.failures)} unexpected verdicts of {len(report.checks)} checks; wrote {args.out}")
    return 1 if report.failures else 0


if __name__ == "__main__":
    sys.exit(main())
