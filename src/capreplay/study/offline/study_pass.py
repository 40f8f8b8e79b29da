"""The offline study in one pass over the pages: one page session per page, read for any of the self-test's
checks, the token counts and the views written to a folder. A command that wants several of them loads
each page once: ``study selftest -o DIR`` checks and writes what ``study views -o DIR`` writes from the same
loads, and ``capreplay demo`` checks and counts.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path

from playwright.async_api import BrowserContext

from capreplay.errors import InputError
from capreplay.models.task import ActTask, StudyPage
from capreplay.study.offline.selftest import SelftestCheck, SelftestReport, measured_layout, selftest_page
from capreplay.study.offline.viewdump import ViewsFolder, write_page
from capreplay.study.page.failures import PageFailure, PageFailures
from capreplay.study.page.frameworks import StudyAdapters
from capreplay.study.page.session import page_session, study_browser
from capreplay.study.representations import REPRESENTATIONS, Representation, uses_stagehand
from capreplay.study.run.tasks import StudyTasks
from capreplay.study.tokens.view_tokens import ViewTokens, view_tokens


@dataclass(frozen=True)
class OfflinePass:
    """What one pass found: the self-test's report (None: not asked for), every page's token counts, and the
    pages that could not be studied."""

    report: SelftestReport | None
    counts: list[ViewTokens]
    failures: list[PageFailure]


def refuse_unmeasured(tasks: StudyTasks, tasks_path: Path | str) -> None:
    """An ``InputError`` if an ACT task has no measured record, which the self-test's expectations come from."""
    unmeasured = [t.id for t in tasks.tasks if isinstance(t, ActTask) and t.measured is None]
    if unmeasured:
        raise InputError(f"task {unmeasured[0]} has no measured record ({len(unmeasured)} ACT tasks have none): "
                         "run `capreplay study measure` on it first", tasks_path)


async def offline_pass(snapshot: Path, tasks: StudyTasks, tasks_path: Path | str,
                       representations: Sequence[Representation] | None = None, *, selftest: bool = True,
                       out: Path | None = None) -> OfflinePass:  # fmt: skip
    """Serve ``snapshot`` and open one page session per page of ``tasks``: run the self-test's checks there if
    ``selftest``, count every representation, and write the views into ``out`` if given (browser-use's audit
    copy included). A page that cannot be studied costs that page alone."""
    chosen = list(representations or REPRESENTATIONS.values())
    if selftest:
        refuse_unmeasured(tasks, tasks_path)
    folder = ViewsFolder(out, tasks.pages) if out is not None else None
    checks: list[SelftestCheck] = []
    counts: list[ViewTokens] = []
    failed = PageFailures()
    async with study_browser(snapshot, stagehand=uses_stagehand(chosen)) as (context, adapters):
        if folder is not None:
            folder.create()
        for page in tasks.pages:
            async with failed.guard(page.id, page.url):
                page_checks, page_counts = await _study_page(context, adapters, page, tasks, chosen,
                                                             selftest=selftest, folder=folder)  # fmt: skip
                checks += page_checks
                counts += page_counts
    if folder is not None:
        folder.finish(counts, failed.failures)
    report = SelftestReport(snapshot=str(snapshot), tasks=str(tasks_path), checks=checks,
                            page_failures=failed.failures) if selftest else None  # fmt: skip
    return OfflinePass(report, counts, failed.failures)


async def _study_page(context: BrowserContext, adapters: StudyAdapters, page: StudyPage, tasks: StudyTasks,
                      chosen: Sequence[Representation], *, selftest: bool,
                      folder: ViewsFolder | None) -> tuple[list[SelftestCheck], list[ViewTokens]]:  # fmt: skip
    """One page session: its checks and its token counts (its views written into ``folder``, if any)."""
    checks: list[SelftestCheck] = []
    # Ground truth is resolved only for the self-test; browser-use's audit copy is read only to be written.
    page_tasks = tasks.page_tasks(page.id) if selftest else []
    with folder.staged(page.id) if folder is not None else nullcontext(None) as staging:
        async with page_session(context, adapters, page.url, page_tasks, audit=folder is not None,
                                settle_ms=page.settle_ms) as session:  # fmt: skip
            if selftest:
                measured_layout(session, page.url)
                checks = await selftest_page(session, page.id, chosen)
            if staging is not None:
                counts = write_page(staging, page.id, session.views, chosen)
            else:
                counts = [view_tokens(page.id, r, r.render(session.views)) for r in chosen]
    return checks, counts


async def run_selftest(snapshot: Path, tasks: StudyTasks, tasks_path: Path | str,
                       representations: Sequence[Representation] | None = None) -> SelftestReport:
    """Serve ``snapshot``, open one page session per page of ``tasks``, and run every check."""
    done = await offline_pass(snapshot, tasks, tasks_path, representations)
    assert done.report is not None  # asked for
    return done.report


async def dump_views(snapshot: Path, tasks: StudyTasks, out: Path,
                     representations: Sequence[Representation] | None = None) -> OfflinePass:
    """One page session per page of ``tasks`` on the served ``snapshot``; every representation written to ``out``
    (see :class:`~capreplay.study.offline.viewdump.ViewsFolder`); no self-test (the report is None)."""
    return await offline_pass(snapshot, tasks, "", representations, selftest=False, out=out)
