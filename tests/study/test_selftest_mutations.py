"""The self-test fails when the scorer is broken in the ways that matter.

A page built for it: two "Add" buttons (the target is the first), two "Remove" buttons (the target is the
second), a cookie bar fixed to the bottom of the viewport, and a "Subscribe" button inside a same-origin
iframe with a namesake in the top document. The tasks are measured on it by the measuring step, then the
self-test runs on the scorer as it is (every check passes) and with one part broken at a time, in this
process: a resolver that takes the first of several matches, one that ignores ``occurrence``, boxes measured
in the layout browser-use leaves behind, and a chain that stays in the top document instead of entering the
iframe. Each must fail the checks named here, which follow from the page's construction.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Locator, Page

from capreplay.archive.importer.snapshot import ImportOptions, import_archives
from capreplay.capture.session import DEFAULT_SEED
from capreplay.models.task import ActTask, PagesAndTasks, StudyPage
from capreplay.study.answers import resolve
from capreplay.study.offline.measure import measure_snapshot
from capreplay.study.offline.selftest import SelftestReport
from capreplay.study.offline.study_pass import run_selftest
from capreplay.study.page import extract, ground_truth, session
from capreplay.study.page.elements import Resolution, Unresolved
from capreplay.study.representations import REPRESENTATIONS, Representation
from tests.support.foreign_warc import gz, page, request

pytestmark = pytest.mark.browser

URL = "https://mutations.example/"
FRAME_URL = "https://mutations.example/news"
HTML = b"""<!doctype html><html><head><meta charset="utf-8"><title>Mutations</title><style>
body { margin: 0; font: 16px sans-serif; }
.bar { position: fixed; left: 0; right: 0; bottom: 0; height: 72px; background: #333; }
#accept { position: absolute; left: 560px; top: 16px; width: 160px; height: 40px; }
iframe { width: 400px; height: 120px; border: 0; }
</style></head><body>
<h1>Basket</h1>
<p>Tent <button id="add-1">Add</button> <button id="remove-1">Remove</button></p>
<p>Stove <button id="add-2">Add</button> <button id="remove-2">Remove</button></p>
<p><button class="subscribe">Subscribe</button></p>
<iframe id="news" src="/news" title="News"></iframe>
<div class="bar"><button id="accept">Accept cookies</button></div>
</body></html>"""
FRAME_HTML = b"""<!doctype html><html><head><meta charset="utf-8"><title>News</title></head><body>
<p>Weekly news</p><button class="subscribe">Subscribe</button></body></html>"""

TASKS = {
    "add": ["#add-1"],
    "remove": ["#remove-2"],
    "accept": ["#accept"],
    "subscribe": ["iframe#news", "button.subscribe"],
}


@pytest.fixture(scope="module")
def snapshot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("mutations")
    (folder / "site.warc.gz").write_bytes(gz(page(1, URL, HTML), request(2, URL, 1), page(3, FRAME_URL, FRAME_HTML),
                                             request(4, FRAME_URL, 3)))  # fmt: skip
    import_archives(ImportOptions(inputs=[folder / "site.warc.gz"], out=folder / "snap", random_seed=DEFAULT_SEED,
                                  pages=[URL]))  # fmt: skip
    return folder / "snap"


@pytest.fixture(scope="module")
def tasks(snapshot: Path) -> PagesAndTasks:
    """The tasks as the measuring step leaves them: each ACT target with its record."""
    bare = PagesAndTasks(
        pages=[StudyPage(id="basket", kind="form", url=URL)],
        tasks=[ActTask(id=tid, page="basket", kind="ACT", instruction=f"Click {tid}", target=chain)
               for tid, chain in TASKS.items()],
    )  # fmt: skip
    measured = asyncio.run(measure_snapshot(snapshot, bare))
    return bare.model_copy(update={"tasks": [
        t.model_copy(update={"location": measured.locations[t.id], "measured": measured.records[t.id]})
        for t in bare.tasks
    ]})  # fmt: skip


def _selftest(snapshot: Path, tasks: PagesAndTasks,
              representations: list[Representation] | None = None) -> SelftestReport:  # fmt: skip
    return asyncio.run(run_selftest(snapshot, tasks, "mutations", representations))


def _failed(report: SelftestReport) -> set[tuple[str, str, str]]:
    return {(c.task, c.representation, c.check) for c in report.failures}


def test_the_records_say_what_the_page_was_built_to_show(tasks: PagesAndTasks) -> None:
    records = {t.id: t.measured for t in tasks.tasks if isinstance(t, ActTask)}
    add, remove, accept, subscribe = (records[k] for k in ("add", "remove", "accept", "subscribe"))
    assert add and remove and accept and subscribe
    assert [(n.name, n.matches, n.occurrence) for n in add.names] == [("Add", 2, 1)]
    assert remove.role is not None and (remove.role.line, remove.role.matches, remove.role.occurrence) == (
        '- button "Remove"', 2, 2)
    # The bar is 72 px tall at the bottom of the 800 px viewport; the button sits 16 px into it, 40 px tall.
    assert accept.click == (640.0, 800 - 72 + 16 + 20)
    assert subscribe.boundaries == ["iframe_same_origin"] and subscribe.frame_depth == 1
    assert subscribe.xpath == "html/body/button" and subscribe.aria_ref is not None
    assert subscribe.aria_ref.startswith("f")  # a ref inside the iframe, not the top document's namesake


def test_the_scorer_as_it_is_passes_every_check(snapshot: Path, tasks: PagesAndTasks) -> None:
    report = _selftest(snapshot, tasks)
    assert not report.page_failures and not report.failures, [c.verdict for c in report.failures]
    perfect = {(c.task, c.representation): c for c in report.checks if c.check == "perfect"}
    assert perfect["remove", "markdown"].answer == {"text": "Remove", "occurrence": 2}
    assert perfect["add", "accessibility_tree"].answer == {"role": "button", "name": "Add", "occurrence": 1}
    assert perfect["accept", "screenshot"].answer == {"x": 640.0, "y": 764.0}
    assert perfect["subscribe", "aria_ai"].verdict.correct and not perfect["subscribe", "markdown"].verdict.correct
    unqualified = {(c.task, c.representation) for c in report.checks if c.check == "no_occurrence"}
    assert unqualified == {(t, r) for t in ("add", "remove") for r in ("markdown", "accessibility_tree")}


async def _first_of_several(page: Page, matches: Locator, count: int, occurrence: int | None, page_target: str,
                            what: str) -> Resolution:  # fmt: skip
    return await resolve.element_ref(page, matches.nth((occurrence or 1) - 1), page_target)


async def _ignores_occurrence(page: Page, matches: Locator, count: int, occurrence: int | None, page_target: str,
                              what: str) -> Resolution:  # fmt: skip
    if occurrence is None and count > 1:
        return Unresolved(reason="ambiguous", detail=what)
    return await resolve.element_ref(page, matches.first, page_target)


async def _stays_in_the_top_document(page: Page, scope: Any, node: Any, opened: Any) -> tuple[Any, str]:
    return scope, "iframe_same_origin"


async def _keeps_browser_uses_layout(*_: Any) -> None:
    return None


def _shifted_layout(patch: pytest.MonkeyPatch) -> None:
    patch.setattr(extract, "restore_layout", _keeps_browser_uses_layout)
    # The layout checks would stop the session; without them the defect is as silent as it once was.
    patch.setattr(extract, "check_layout", lambda *_: None)
    patch.setattr(session, "check_layout", lambda *_: None)


MUTATIONS: dict[str, tuple[Callable[[pytest.MonkeyPatch], None], set[tuple[str, str, str]]]] = {
    "a resolver that takes the first of several matches": (
        lambda patch: patch.setattr(resolve, "_pick", _first_of_several),
        {("add", "markdown", "no_occurrence"), ("add", "accessibility_tree", "no_occurrence")},
    ),
    "a resolver that ignores occurrence": (
        lambda patch: patch.setattr(resolve, "_pick", _ignores_occurrence),
        {("remove", "markdown", "perfect"), ("remove", "accessibility_tree", "perfect")},
    ),
    "boxes measured in a shifted layout": (_shifted_layout, {("accept", "screenshot", "perfect")}),
    "a chain that reads the wrong frame": (
        lambda patch: patch.setattr(ground_truth, "_enter", _stays_in_the_top_document),
        {("subscribe", "screenshot", "perfect"), ("subscribe", "aria_ai", "perfect"),
         ("subscribe", "indexed_dom", "perfect")},
    ),
}  # fmt: skip


@pytest.mark.parametrize("mutation", list(MUTATIONS))
def test_a_broken_scorer_fails_the_selftest(snapshot: Path, tasks: PagesAndTasks, mutation: str,
                                            monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    apply, must_fail = MUTATIONS[mutation]
    apply(monkeypatch)
    # Stagehand resolves in its own browser, which none of these mutations touches: its browser is left out.
    report = _selftest(snapshot, tasks, [r for r in REPRESENTATIONS.values() if r.name != "stagehand_snapshot"])
    assert not report.page_failures
    assert must_fail <= _failed(report), sorted(_failed(report))
