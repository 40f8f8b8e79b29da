"""The offline study's results as a folder the viewer shows: ``selftest.json`` and Markdown tables beside it.

- ``selftest.json``: every self-test check with its verdict, the summary per representation and the number of
  unexpected verdicts (what ``capreplay study selftest --json`` prints);
- ``tokens.md``: o200k_base tokens per page and representation;
- ``coverage.md``: the share of READ answers present and of ACT targets addressable, overall and per page;
- ``timings.md`` (when timings were taken): milliseconds to produce every representation of each page.

``capreplay demo`` writes one into its results folder and ``scripts/study_offline.py`` the committed one;
:mod:`capreplay.view.offline_contents` reads it. The tables are pure functions of the report and the counts.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from capreplay.errors import OutputError, os_reason
from capreplay.study.offline.selftest import SelftestReport
from capreplay.study.tokens.view_tokens import ViewTokens
from capreplay.util.files import write_atomic
from capreplay.util.tables import markdown_table


def selftest_document(report: SelftestReport) -> dict[str, Any]:
    """The report as ``selftest.json`` holds it: its checks, the summary per representation, the failures."""
    doc = report.model_dump(mode="json")
    doc["summary"] = [s.model_dump() for s in report.summary()]
    doc["failures"] = len(report.failures)
    return doc


def _table(rows: Sequence[Sequence[str]]) -> str:
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
            + _table(rows))  # fmt: skip


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
            + _table(rows) + "\n## Per page (READ · ACT)\n\n" + _table(per_page))  # fmt: skip


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
            f"{max(totals):,.0f} ms.\n\n" + _table(rows))  # fmt: skip


def write_offline_results(out: Path, report: SelftestReport, counts: Sequence[ViewTokens],
                          timings: dict[str, dict[str, float]] | None = None) -> None:  # fmt: skip
    """Write the results folder ``out`` (made if missing; each file replaced whole, never half-written)."""
    files = {
        "selftest.json": json.dumps(selftest_document(report), indent=1) + "\n",
        "tokens.md": tokens_md(counts),
        "coverage.md": coverage_md(report),
    }
    if timings is not None:
        files["timings.md"] = timings_md(timings)
    try:
        out.mkdir(parents=True, exist_ok=True)
        for name, text in files.items():
            write_atomic(out / name, text.encode("utf-8"))
    except OSError as e:
        raise OutputError(f"cannot write the offline study's results: {os_reason(e)}", e.filename or out) from e
