"""The pure parts of event-stream replay: the paced gaps and the pieces a stream is sent in."""

from __future__ import annotations

import pytest

from capreplay.models.live_traffic import StreamEvent, StreamTimeline
from capreplay.replay.event_source import pieces
from capreplay.replay.pacing import GAP_CAP_S, gaps

BODY = b"retry: 50\n\nid: 1\ndata: a\n\nid: 2\ndata: b\n\ndata: c"
TIMELINE = StreamTimeline(
    url="https://news.test/events",
    ended="cut",
    events=[
        StreamEvent(ts=0.0, end=11, id=None),
        StreamEvent(ts=0.3, end=26, id="1"),
        StreamEvent(ts=5.3, end=41, id="2"),
    ],
)


def test_gaps_keep_captured_waits_up_to_the_cap() -> None:
    assert GAP_CAP_S == 1.0
    assert gaps([0.2, 0.5, 4.0, 4.0]) == pytest.approx([0.2, 0.3, 1.0, 0.0])
    assert gaps([1.5, 1.7], since=1.0) == pytest.approx([0.5, 0.2])


def test_pieces_cut_the_body_at_event_ends_and_keep_the_unfinished_tail_last() -> None:
    assert pieces(BODY, TIMELINE, 0) == [
        (0.0, b"retry: 50\n\n"),
        (0.3, b"id: 1\ndata: a\n\n"),
        (1.0, b"id: 2\ndata: b\n\ndata: c"),
    ]


def test_a_resumed_stream_starts_after_the_event_and_waits_from_it() -> None:
    assert pieces(BODY, TIMELINE, 2) == [(1.0, b"id: 2\ndata: b\n\ndata: c")]
    assert pieces(BODY, TIMELINE, 3) == [(0.0, b"data: c")]
