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
import json
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from capreplay.fixtures.study.tasks import bundled_tasks_path
from capreplay.study.offline.selftest import SelftestCheck, SelftestReport, selftest_page
from capreplay.study.page.session import page_session, study_browser
from capreplay.study.representations import REPRESENTATIONS
from capreplay.study.run.tasks import load_study_tasks
from capreplay.study.tokens.view_tokens import ViewTokens, view_tokens
from capreplay.util.tables import markdown_table


def table(rows: Sequence[Sequence[str]]) -> str:
    """The first row as the header."""
    return "\n".join(markdown_table(rows[0], rows[1:])) + "\n"


def tokens_md(counts: Sequence[ViewTokens]) -> str:
    """Pages down, representations across, with a total row."""
    pages = list(dict.fromkeys(c.page for c in counts))
    names = list(dict.fromkeys(c.representation for c in counts))
    cell = {(c.page, c.representation): c.tokens for c in counts}
    rows = [["page", *names]]
    rows += [[p, *(f"{cell[p, n]:,}" for n in names)] for p in pages]
    rows.append(["total", *(f"{sum(cell[p, n] for p in pages):,}" for n in names)])
    return ("# Tokens per page and representation\n\no200k_base tokens of each rendered representation (the "
            "screenshot: Anthropic's image rule, 1280x800). The prompt's own wrapping is not included.\n\n"
            + table(rows))  # fmt: skip


def _share(part: int, whole: int) -> str:
    return f"{part}/{whole} ({part / whole:.0%})" if whole else "-"


def coverage_md(report: SelftestReport) -> str:
    """Share of READ answers present and ACT targets addressable, per representation and per page."""
    rows = [["representation", "READ answers present", "ACT targets addressable"]]
    rows += [[s.representation, _share(s.read_present, s.read_pairs), _share(s.act_representable, s.act_pairs)]
             for s in report.summary()]  # fmt: skip
    names = list(dict.fromkeys(c.representation for c in report.checks))
    pages = list(dict.fromkeys(c.page for c in report.checks))

    def present(page: str, name: str, kind: str) -> str:
        mine = [c for c in report.checks if c.page == page and c.representation == name and c.kind == kind
                and c.check in ("perfect", "gold")]  # fmt: skip
        return _share(sum(bool(c.verdict.representable) for c in mine), len(mine))

    per_page = [["page", *names]]
    per_page += [[p, *(f"{present(p, n, 'READ')} · {present(p, n, 'ACT')}" for n in names)] for p in pages]
    return ("# Representability coverage\n\nWithout any model call: a READ answer is present when the "
            "representation shows it (the screenshot: rendered inside the viewport); an ACT target is "
            "addressable when a model could name it in the representation's answer format.\n\n"
            + table(rows) + "\n## Per page (READ · ACT)\n\n" + table(per_page))  # fmt: skip


def timings_md(timings: dict[str, dict[str, float]]) -> str:
    """Per page: the total and each view's milliseconds."""
    steps = list(dict.fromkeys(step for t in timings.values() for step in t if step != "total"))
    rows = [["page", "all five (ms)", *steps]]
    rows += [[p, f"{t['total']:,.0f}", *(f"{t.get(s, 0):,.1f}" for s in steps)] for p, t in timings.items()]
    totals = [t["total"] for t in timings.values()]
    return ("# Time to produce all five representations\n\nMilliseconds per page, one load each, page load "
            "and browser start excluded: reading every view from the loaded page (HTML, Markdown, "
            "accessibility tree, screenshot, viewport text, browser-use's indexed DOM) plus formatting the "
            f"five representations. Median over pages {statistics.median(totals):,.0f} ms, slowest "
            f"{max(totals):,.0f} ms.\n\n" + table(rows))  # fmt: skip


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
    args.out.mkdir(parents=True, exist_ok=True)
    doc = report.model_dump(mode="json")
    doc["summary"] = [s.model_dump() for s in report.summary()]
    doc["failures"] = len(report.failures)
    (args.out / "selftest.json").write_text(json.dumps(doc, indent=1) + "\n")
    (args.out / "tokens.md").write_text(tokens_md(counts))
    (args.out / "coverage.md").write_text(coverage_md(report))
    (args.out / "timings.md").write_text(timings_md(timings))
    print(f"self-test: {len(report.failures)} unexpected verdicts of {len(report.checks)} checks; wrote {args.out}")
    return 1 if report.failures else 0


if __name__ == "__main__":
    sys.exit(main())
