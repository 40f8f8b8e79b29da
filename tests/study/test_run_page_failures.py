"""A study run's page session that fails costs its own cells: they stay unrecorded with the failure's
reason on record, the other pages are called, the exit status says so, and a rerun calls only those cells.

The failure is made by the session hook (a ``BrowserError`` once the page session is open, as a broken
browser-use adapter raises it); everything else is real: the registration, the committed study snapshot
served to Chromium, the SDK over HTTP to the fake model API.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from capreplay.errors import BrowserError
from capreplay.models.task import StudyPage
from capreplay.report.study import report_folder, run_report_markdown
from capreplay.study.page.session import PageSession
from capreplay.study.run.execute import RunOptions, run_study
from capreplay.study.run_files import CALLS_FILE, read_page_failures, read_records
from capreplay.testing.fake_llm import Received
from tests.support.study_run import REGISTRATION, fake_llm

pytestmark = pytest.mark.browser

PAGES = ["login", "form"]


def _answer(_: Received) -> str:
    return json.dumps({"answer": "x"})


def test_a_failed_page_session_leaves_its_cells_for_a_rerun(results: Path) -> None:
    broken = {"login"}

    async def break_login(page: StudyPage, session: PageSession) -> None:
        if page.id in broken:
            raise BrowserError("the browser-use adapter exited during 'indexed_dom'", page.url)

    options = RunOptions(registration=REGISTRATION, run_id="flaky", results=results, pages=PAGES, repeats=1)
    with fake_llm(_answer) as fake:
        first = asyncio.run(run_study(options.model_copy(update={"base_url": fake.base_url}), on_session=break_login))
        called_first = len(fake.calls("messages"))
        recorded = {r.cell for r in read_records(first.run_dir / CALLS_FILE).records}
        assert {c.page for c in recorded} == {"form"}, "the other page is called"
        assert called_first == len(recorded) == first.summary.called
        (failure,) = first.page_failures
        assert (failure.page, failure.repeat) == ("login", 0) and "adapter exited" in failure.error
        assert failure.cells and {c.page for c in failure.cells} == {"login"}
        assert read_page_failures(first.run_dir) == [failure]
        report = report_folder(first.run_dir)
        assert [f.page for f in report.unstudied] == ["login"]
        assert "## Pages not studied" in run_report_markdown(report)

        broken.clear()
        second = asyncio.run(run_study(options.model_copy(update={"base_url": fake.base_url}), on_session=break_login))
        again = len(fake.calls("messages")) - called_first
    assert again == len(failure.cells) == second.summary.called, "only the failed page's cells are called"
    assert second.summary.skipped == len(recorded) and second.page_failures == []
    everything = read_records(second.run_dir / CALLS_FILE).records
    assert len({r.cell for r in everything}) == len(everything) == len(recorded) + len(failure.cells)
    assert report_folder(second.run_dir).unstudied == []
