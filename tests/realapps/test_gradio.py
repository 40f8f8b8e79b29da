"""Gradio: a greeting streamed back as server-sent events after a JSON POST, captured and replayed offline.

Gradio is installed from PyPI into its own environment on first use (a minute from the registry, then reused).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from capreplay.archive.warc.live import EVENT_STREAM_RESOURCE, RESOURCE_TYPE_HEADER, read_stream_timeline
from capreplay.archive.warc.stored import StoredRecord
from capreplay.models.live_traffic import StreamTimeline
from capreplay.testing.apps.catalog import GRADIO
from capreplay.verify.sameness import pixel_region
from tests.support.realapps import CapturedApp, Look, archive_records, capture_app, replay

pytestmark = [pytest.mark.browser, pytest.mark.slow]

QUEUE = "/gradio_api/queue/data"
"""The event stream Gradio's client reads its answer from."""


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


def _stream_and_timeline(captured: CapturedApp) -> tuple[StoredRecord, StreamTimeline]:
    """The queue's event-stream response and its timeline record, which must come right after it."""
    records = archive_records(captured.snapshot)
    ((i, response),) = [(i, r) for i, r in enumerate(records) if r.rec_type == "response" and QUEUE in str(r.url)]
    timeline = records[i + 1]
    assert timeline.rec_type == "metadata" and timeline.warc_header(RESOURCE_TYPE_HEADER) == EVENT_STREAM_RESOURCE
    assert timeline.warc_header_values("WARC-Concurrent-To") == [response.record_id]
    return response, read_stream_timeline(str(timeline.url), timeline.payload)


def test_capture_keeps_the_event_stream_with_the_time_of_each_event(captured: CapturedApp) -> None:
    response, timeline = _stream_and_timeline(captured)
    assert response.status == 200 and GRADIO.shows.encode() in response.payload
    assert timeline.ended == "closed"
    assert len(timeline.events) == response.payload.count(b"\n\n") >= 4, "estimation, starts, steps, completed"
    assert timeline.events[-1].ts - timeline.events[0].ts > 0.5, "the steps the app sleeps between"


def test_replay_sends_the_event_stream_paced_as_captured(captured: CapturedApp, replays: list[Look]) -> None:
    _, timeline = _stream_and_timeline(captured)
    span = timeline.events[-1].ts - timeline.events[0].ts  # every gap below the cap: none is shortened
    for run in replays:
        (took,) = [seconds for url, seconds in run.body_seconds.items() if QUEUE in url]
        assert took >= 0.8 * span, (took, span)
        (served,) = [(result, rule) for method, url, result, rule in run.served if QUEUE in url]
        assert served == ("hit", None)


def test_replay_shows_the_streamed_answer(replays: list[Look]) -> None:
    for run in replays:
        assert run.error is None
        assert run.answer == GRADIO.shows


def test_every_post_is_served(replays: list[Look]) -> None:
    for run in replays:
        posts = [(url, result) for method, url, result, _ in run.served if method == "POST"]
        assert any("/queue/join" in url for url, _ in posts) and all(result != "miss" for _, result in posts), posts


def test_two_replays_give_the_same_dom_and_pixels(replays: list[Look]) -> None:
    first, second = replays
    assert first.dom == second.dom
    assert pixel_region(first.screenshot, second.screenshot).fraction == 0.0


def test_replay_looks_like_the_live_page(captured: CapturedApp, replays: list[Look]) -> None:
    assert pixel_region(captured.live.screenshot, replays[0].screenshot).fraction == 0.0
