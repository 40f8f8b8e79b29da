"""The study's page sessions settle on the replay server's quiet signal and see what they saw after Playwright's
network idle: the same screenshot, the same text, the same HTML, for every page of the study snapshot."""

from __future__ import annotations

import asyncio

import pytest

from capreplay.runs.tasks_file import load_tasks_file
from capreplay.study.page.load import open_page_session, served_browser
from tests.support.paths import ROOT

pytestmark = pytest.mark.browser


async def _views(server_quiet: bool) -> dict[str, tuple[bytes, str, str]]:
    tasks_path = ROOT / "tasks.json"
    tasks = load_tasks_file(tasks_path)
    assert tasks.study is not None
    snapshot = tasks.snapshot_path(tasks.study.snapshot, tasks_path)
    views: dict[str, tuple[bytes, str, str]] = {}
    async with served_browser(snapshot, server_quiet=server_quiet) as (context, _):
        for study_page in tasks.study.pages:
            page = await open_page_session(context, study_page.url, study_page.settle_ms)
            try:
                views[study_page.id] = (await page.screenshot(), await page.inner_text("body"), await page.content())
            finally:
                await page.close()
    return views


async def test_every_study_page_looks_the_same_after_the_servers_quiet_signal() -> None:
    # Each browser has a replay server of its own, so the two wait for their own traffic only and can load
    # side by side: most of their time is waiting for the network to go quiet and the page to settle.
    idle, quiet = await asyncio.gather(_views(server_quiet=False), _views(server_quiet=True))
    assert len(idle) >= 10
    differing = [page for page in idle if quiet[page] != idle[page]]
    assert differing == []
