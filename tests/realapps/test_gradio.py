"""Gradio: a greeting streamed back as server-sent events after a JSON POST, captured and replayed offline.

Gradio is installed from PyPI into its own environment on first use (a minute from the registry, then reused).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from capreplay.testing.apps.catalog import GRADIO
from capreplay.verify.sameness import pixel_region
from tests.support.realapps import CapturedApp, Look, capture_app, replay

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture(scope="module")
def captured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CapturedApp]:
    """The app started from its package, loaded live, captured with its plan, and stopped."""
    yield asyncio.run(capture_app(GRADIO, tmp_path_factory.mktemp("gradio")))


@pytest.fixture(scope="module")
def replays(captured: CapturedApp) -> list[Look]:
    """Two offline replays of the snapshot, each running the plan's actions."""
    return [asyncio.run(replay(captured)) for _ in range(2)]


def test_the_live_app_streams_its_answer(captured: CapturedApp) -> None:
    assert captured.live.error is None
    assert captured.live.answer == GRADIO.shows


def test_capture_records_the_page_its_post_and_its_event_stream(captured: CapturedApp) -> None:
    assert not captured.result.failed, captured.result.failed
    assert [p.url for p in captured.result.manifest.pages] == [GRADIO.url]
    index = (captured.snapshot / "index.cdxj").read_text()
    assert "gradio_api/queue/join" in index and "gradio_api/queue/data" in index


def test_replay_shows_the_streamed_answer(replays: list[Look]) -> None:
    for run in replays:
        assert run.error is None
        assert run.answer == GRADIO.shows


def test_every_post_is_served(replays: list[Look]) -> None:
    for run in replays:
        posts = [(url, result) for method, url, result in run.served if method == "POST"]
        assert posts and all(result != "miss" for _, result in posts), posts


def test_two_replays_give_the_same_dom_and_pixels(replays: list[Look]) -> None:
    first, second = replays
    assert first.dom == second.dom
    assert pixel_region(first.screenshot, second.screenshot).fraction == 0.0


def test_replay_looks_like_the_live_page(captured: CapturedApp, replays: list[Look]) -> None:
    assert pixel_region(captured.live.screenshot, replays[0].screenshot).fraction == 0.0
