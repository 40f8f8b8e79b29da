"""Strawberry's GraphiQL page: the introspection query and a books query POSTed as JSON to one URL, replayed offline.

Both POSTs go to ``/graphql``; only their bodies differ, so a replay that answered by URL alone would show the
schema where the books belong, or the reverse. Strawberry comes from PyPI and the page's scripts from the npm
registry (as unpkg.com serves them), each fetched on first use and reused.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from capreplay.testing.apps.catalog import GRAPHIQL
from capreplay.verify.sameness import pixel_region
from tests.support.realapps import CapturedApp, Look, capture_app, replay

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture(scope="module")
def captured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CapturedApp]:
    """Strawberry started from its package, the page loaded live, captured with its plan, and stopped."""
    yield asyncio.run(capture_app(GRAPHIQL, tmp_path_factory.mktemp("graphiql")))


@pytest.fixture(scope="module")
def replays(captured: CapturedApp) -> list[Look]:
    """Two offline replays of the snapshot, each running the plan's actions."""
    return [asyncio.run(replay(captured)) for _ in range(2)]


def test_the_live_page_shows_the_query_result(captured: CapturedApp) -> None:
    assert captured.live.error is None
    assert GRAPHIQL.shows in captured.live.answer


def test_capture_records_the_page_both_posts_and_the_cdn_files(captured: CapturedApp) -> None:
    assert not captured.result.failed, captured.result.failed
    assert [p.url for p in captured.result.manifest.pages] == [GRAPHIQL.url]
    assert sorted(captured.result.manifest.hosts) == ["graphql.app.test", "unpkg.com"]
    index = (captured.snapshot / "index.cdxj").read_text()
    assert index.count('"method":"POST"') == 2, "the introspection query and the books query"


def test_replay_shows_the_query_result_and_the_schema(replays: list[Look]) -> None:
    for run in replays:
        assert run.error is None
        assert GRAPHIQL.shows in run.answer
        assert "IntrospectionQuery" not in run.answer and "__schema" not in run.answer


def test_each_post_is_answered_by_its_own_body(replays: list[Look]) -> None:
    for run in replays:
        posts = [(url, result, rule) for method, url, result, rule in run.served if method == "POST"]
        assert [url for url, _, _ in posts] == ["http://graphql.app.test/graphql"] * 2, posts
        # exact (the body is part of the key) or post-body (the same JSON); never a rule that answers by order
        assert all((result, rule) in (("hit", None), ("fuzzy", "post-body")) for _, result, rule in posts), posts


def test_two_replays_give_the_same_dom_and_pixels(replays: list[Look]) -> None:
    first, second = replays
    assert first.dom == second.dom
    assert pixel_region(first.screenshot, second.screenshot).fraction == 0.0


def test_replay_looks_like_the_live_page(captured: CapturedApp, replays: list[Look]) -> None:
    assert pixel_region(captured.live.screenshot, replays[0].screenshot).fraction == 0.0
