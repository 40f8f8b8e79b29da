"""Views and ACT resolution on live page sessions of the committed study snapshot: real replay server, real
Chromium through capreplay.browser, the real browser-use adapter; iframes (in and out of process) and a
closed shadow root included."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack

import markdownify
import pytest
import pytest_asyncio

from capreplay.study.answers.resolve import png_size, resolve_answer, resolve_selector
from capreplay.study.page.session import PageSession, page_session, study_browser
from capreplay.study.representations import REPRESENTATIONS
from capreplay.testing.fixtures.study.tasks import bundled_tasks_path, load_tasks
from tests.support.paths import ROOT

pytestmark = pytest.mark.browser  # every test resolves answers on a page replayed in Chromium

# The browser and its page sessions are shared by the module's tests, so they share the module's loop.
module_loop = pytest.mark.asyncio(loop_scope="module")

SNAPSHOT = ROOT / "snapshots" / "study"
TASKS = load_tasks(bundled_tasks_path())
PAGES = ("login", "listing", "embed")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def sessions() -> AsyncIterator[dict[str, PageSession]]:
    """One page session per page used here, all in one offline browser with the browser-use adapter."""
    async with study_browser(SNAPSHOT) as (context, adapter), AsyncExitStack() as stack:
        opened = {}
        for page_id in PAGES:
            url = next(p.url for p in TASKS.pages if p.id == page_id)
            opened[page_id] = await stack.enter_async_context(
                page_session(context, adapter, url, TASKS.page_tasks(page_id)))
        yield opened


async def _score(session: PageSession, task: str, representation: str, answer: object) -> tuple[bool, str, str]:
    verdict = await session.score_act(task, REPRESENTATIONS[representation], answer)
    return verdict.correct, verdict.reason, verdict.detail or ""


@module_loop
async def test_views_come_from_one_load_in_order(sessions: dict[str, PageSession]) -> None:
    views = sessions["embed"].views
    assert views.url == "https://www.study.test/embed"
    # Stagehand's browser reads its snapshot before the study's own views, which follow in the protocol's order.
    assert list(views.timings_ms) == ["stagehand_open", "stagehand_snapshot", "raw_html", "markdown",
                                      "accessibility_tree", "aria_ai", "screenshot", "viewport_text", "indexed_dom"]
    assert views.markdown == markdownify.markdownify(views.raw_html)
    assert png_size(views.screenshot_png) == (1280, 800)
    # The top document holds neither the cross-site frame's content nor the closed shadow root's.
    for hidden in ("Subscribe to alerts", "Apply code"):
        assert hidden not in views.raw_html and hidden not in views.accessibility_tree
    assert "- iframe" in views.accessibility_tree
    # browser-use reaches both, with the out-of-process frame's elements under that frame's own target.
    assert "Subscribe to alerts" in views.indexed_dom.text and "Apply code" in views.indexed_dom.text
    assert len({entry.target_id for entry in views.indexed_dom.selector_map.values()}) == 2
    assert not views.browser_use_changed_html
    assert views.html_before_browser_use == views.raw_html  # no earlier view changed the page either
    # The screenshot's text: frames and the closed shadow root above the fold, nothing below it.
    for shown in ("Apply code", "Subscribe to alerts", "Report a hazard", "Kestle Pass"):
        assert shown in views.viewport_text
    assert "Group shelter for four" in views.accessibility_tree
    assert "Group shelter for four" not in views.viewport_text
    assert "screenshot_png" not in json.loads(views.model_dump_json())


@module_loop
async def test_ground_truth_names_the_element_and_its_target(sessions: dict[str, PageSession]) -> None:
    embed = sessions["embed"]
    framed, closed = embed.act["embed.act.2"].target, embed.act["embed.act.3"].target
    assert framed.boundaries == ("iframe_cross_site",) and framed.ref.target_id != embed.page_target
    assert closed.boundaries == ("shadow_closed",) and closed.ref.target_id == embed.page_target
    assert (framed.ax_role, framed.ax_name) == ("button", "Subscribe to alerts")
    login = sessions["login"].act
    assert login["login.act.1"].aria_node == '- textbox "Email address":'
    assert login["login.act.2"].target.names == ("Show password",)  # an icon button: its aria-label only


@module_loop
async def test_css_selectors(sessions: dict[str, PageSession]) -> None:
    login, embed = sessions["login"], sessions["embed"]
    assert await _score(login, "login.act.1", "raw_html", {"selector": "input[type=email]"}) == (True, "correct", "")
    wrong = await _score(login, "login.act.1", "raw_html", {"selector": "#sign-in"})
    assert wrong[:2] == (False, "wrong_element")
    assert (await _score(login, "login.act.1", "raw_html", {"selector": "button"}))[:2] == (False, "ambiguous")
    assert (await _score(login, "login.act.1", "raw_html", {"selector": "div["}))[:2] == (False, "invalid_selector")
    assert (await _score(login, "login.act.1", "raw_html", {"selector": "#nope"}))[:2] == (False, "not_found")
    # The frame's own selector names nothing in the top document: the target is not representable there.
    correct, reason, detail = await _score(embed, "embed.act.2", "raw_html", {"selector": "#subscribe"})
    assert (correct, reason) == (False, "not_representable")
    assert detail.startswith("not_found: '#subscribe' matched 0 elements") and "iframe_cross_site" in detail


@module_loop
async def test_concurrent_selector_resolutions_do_not_share_node_ids(sessions: dict[str, PageSession]) -> None:
    # Each resolution has its own CDP session: DOM.getDocument in one cannot invalidate another's node ids.
    login = sessions["login"]
    expected = login.act["login.act.1"].target.ref
    found = await asyncio.gather(*(resolve_selector(login.page, "#email", login.page_target) for _ in range(12)))
    assert found == [expected] * 12


@module_loop
async def test_text_answers_take_the_first_strategy_that_matches(sessions: dict[str, PageSession]) -> None:
    login, listing = sessions["login"], sessions["listing"]
    # A label, through the textbox's name; a placeholder only when nothing earlier matches.
    assert await _score(login, "login.act.1", "markdown", {"text": "Email address"}) == (True, "correct", "")
    assert (await _score(login, "login.act.1", "markdown", {"text": "name@example.org"}))[0]
    assert (await _score(login, "login.act.1", "markdown", {"text": "Email"}))[1] == "not_found"
    # Two links are named "Tarn 22": the occurrence picks one; without it the answer is ambiguous.
    page = listing.page
    ambiguous = await resolve_answer(page, REPRESENTATIONS["markdown"], {"text": "Tarn 22"}, listing.views,
                                     listing.page_target)
    assert ambiguous.reason == "ambiguous"  # type: ignore[union-attr]
    first, second = [await resolve_answer(page, REPRESENTATIONS["markdown"], {"text": "Tarn 22", "occurrence": n},
                                          listing.views, listing.page_target) for n in (1, 2)]
    assert first != second and first.target_id == second.target_id == listing.page_target  # type: ignore[union-attr]
    third = await resolve_answer(page, REPRESENTATIONS["markdown"], {"text": "Tarn 22", "occurrence": 3},
                                 listing.views, listing.page_target)
    assert third.reason == "not_found"  # type: ignore[union-attr]
    # Text inside the cross-site frame is out of the page's locators' reach.
    embed = sessions["embed"]
    assert (await _score(embed, "embed.act.2", "markdown", {"text": "Subscribe to alerts"}))[1] == "not_representable"


@module_loop
async def test_role_and_name_answers(sessions: dict[str, PageSession]) -> None:
    login, embed = sessions["login"], sessions["embed"]
    answer = {"role": "button", "name": "Show password"}
    assert await _score(login, "login.act.2", "accessibility_tree", answer) == (True, "correct", "")
    assert (await _score(login, "login.act.2", "accessibility_tree", {"role": "button", "name": "Sign in"}))[1] == (
        "wrong_element")
    assert (await _score(login, "login.act.2", "accessibility_tree", {"role": "button", "name": "Show"}))[1] == (
        "not_found")
    assert (await _score(login, "login.act.2", "accessibility_tree", {"role": "button"}))[1] == "unparseable"
    # Playwright cannot see into a closed shadow root.
    closed = await _score(embed, "embed.act.3", "accessibility_tree", {"role": "button", "name": "Apply code"})
    assert closed[1] == "not_representable" and closed[2].startswith("not_found")


@module_loop
async def test_indexes_and_points(sessions: dict[str, PageSession]) -> None:
    embed = sessions["embed"]
    dom = embed.views.indexed_dom
    framed, closed = embed.act["embed.act.2"].target, embed.act["embed.act.3"].target
    index = next(i for i, e in dom.selector_map.items()
                 if (e.target_id, e.backend_node_id) == (framed.ref.target_id, framed.ref.backend_node_id))
    assert await _score(embed, "embed.act.2", "indexed_dom", {"index": index}) == (True, "correct", "")
    assert (await _score(embed, "embed.act.3", "indexed_dom", {"index": index}))[1] == "wrong_element"
    assert (await _score(embed, "embed.act.2", "indexed_dom", {"index": max(dom.selector_map) + 1}))[1] == "not_found"

    for target, task in ((framed, "embed.act.2"), (closed, "embed.act.3")):
        assert target.box is not None
        centre = {"x": target.box.x + target.box.width / 2, "y": target.box.y + target.box.height / 2}
        assert await _score(embed, task, "screenshot", centre) == (True, "correct", "")
    assert closed.box is not None
    assert (await _score(embed, "embed.act.2", "screenshot", {"x": closed.box.x + 1, "y": closed.box.y + 1}))[1] == (
        "wrong_element")
    assert (await _score(embed, "embed.act.2", "screenshot", {"x": 1280, "y": 5}))[1] == "outside_image"


@module_loop
async def test_resolving_answers_leaves_the_page_as_it_was(sessions: dict[str, PageSession]) -> None:
    for session in sessions.values():
        assert await session.page.content() == session.views.raw_html, session.views.url
