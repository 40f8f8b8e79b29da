"""The offline part of the study in one pass: the self-test and every representation's token count, from
one page session per page (:mod:`.study_pass`; no model is called). What ``capreplay demo`` runs on the
committed snapshot, and the summary it prints.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from capreplay.study.offline.selftest import SelftestReport
from capreplay.study.offline.study_pass import offline_pass
from capreplay.study.run.tasks import StudyTasks
from capreplay.study.tokens.view_tokens import ViewTokens
from capreplay.util.tables import format_table


async def offline_study(snapshot: Path, tasks: StudyTasks, tasks_path: Path | str) -> tuple[SelftestReport,
                                                                                           list[ViewTokens]]:
    """Serve ``snapshot`` and, per page of ``tasks``, run the self-test's checks and count every representation."""
    done = await offline_pass(snapshot, tasks, tasks_path)
    assert done.report is not None  # asked for
    return done.report, done.counts


def offline_summary(report: SelftestReport, counts: Sequence[ViewTokens]) -> str:
    """The self-test's result in one line, then tokens per page and ACT coverage per representation."""
    pairs = sum(1 for c in report.checks if c.check in ("perfect", "gold"))
    failed = len({(c.task, c.representation) for c in report.failures})
    coverage = {s.representation: s for s in report.summary()}
    rows = [("representation", "tokens/page (mean)", "min", "max", "ACT targets representable")]
    for name in dict.fromkeys(c.representation for c in counts):
        tokens = [c.tokens for c in counts if c.representation == name]
        s = coverage.get(name)
        representable = f"{s.act_representable} of {s.act_pairs}" if s else "-"
        rows.append((name, f"{sum(tokens) / len(tokens):,.0f}", f"{min(tokens):,}", f"{max(tokens):,}",
                     representable))  # fmt: skip
    head = f"study self-test: {pairs - failed} of {pairs} task x representation pairs pass"
    lost = "".join(f"\nnot studied: {f.line()}" for f in report.page_failures)
    return head + lost + "\n" + format_table(rows)
