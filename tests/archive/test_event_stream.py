"""The event-stream parser against the HTML standard's event-stream interpretation, and its timeline record."""

from __future__ import annotations

import io
from datetime import UTC, datetime

import pytest

from capreplay.archive.warc.event_stream import event_ends, is_event_stream, resume_index, timeline_from_chunks
from capreplay.archive.warc.live import read_stream_timeline, stream_timeline_record
from capreplay.archive.warc.read import iter_records
from capreplay.models.live_traffic import StreamEvent, StreamTimeline

URL = "https://news.test/events"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("text/event-stream", True),
        ("Text/Event-Stream; charset=utf-8", True),
        (" text/event-stream ", True),
        ("text/plain", False),
        ("text/event-streams", False),
        (None, False),
    ],
)
def test_is_event_stream(value: str | None, expected: bool) -> None:
    assert is_event_stream(value) is expected


@pytest.mark.parametrize("eol", [b"\n", b"\r", b"\r\n"])
def test_every_line_end_dispatches_alike(eol: bytes) -> None:
    body = b"id: 1" + eol + b"data: a" + eol + eol + b"data: b" + eol + eol
    first = len(b"id: 1data: a") + 3 * len(eol)
    assert event_ends(body) == [(first, "1"), (len(body), "1")]


def test_line_ends_may_be_mixed() -> None:
    body = b"data: a\r\n\rdata: b\n\r\n"
    assert event_ends(body) == [(10, None), (len(body), None)]


def test_an_id_with_null_is_ignored_and_the_previous_id_stays() -> None:
    body = b"id: 7\ndata: a\n\nid: 8\x009\ndata: b\n\n"
    assert [last for _, last in event_ends(body)] == ["7", "7"]


def test_id_values_lose_one_leading_space_and_empty_id_resets() -> None:
    body = b"id:  two\n\nid\n\nid:x\n\n"
    assert [last for _, last in event_ends(body)] == [" two", "", "x"]


def test_comments_are_blocks_that_arrive_too_but_blank_lines_alone_are_not() -> None:
    body = b": keep-alive\n\n\n\ndata: a\n\n"
    assert event_ends(body) == [(14, None), (len(body), None)]


def test_one_leading_byte_order_mark_is_ignored() -> None:
    body = b"\xef\xbb\xbfid: 1\ndata: a\n\n"
    assert event_ends(body) == [(len(body), "1")]


def test_an_event_cut_off_at_the_end_is_not_an_event() -> None:
    body = b"id: 1\ndata: a\n\nid: 2\ndata: b\n"
    assert event_ends(body) == [(15, "1")]


def test_a_lone_cr_at_the_end_ends_the_line() -> None:
    assert event_ends(b"data: a\r\r") == [(9, None)]


def test_timeline_times_each_event_by_the_chunk_that_completed_it() -> None:
    chunks = [(0.0, b"retry: 50\n"), (0.1, b"\nid: 1\ndata: a"), (0.4, b"\n\nid: 2\ndata: b\n\n"), (0.9, b"data: c\n")]
    body, timeline = timeline_from_chunks(URL, chunks, ended="cut")
    assert body == b"retry: 50\n\nid: 1\ndata: a\n\nid: 2\ndata: b\n\ndata: c\n"
    assert timeline == StreamTimeline(
        url=URL,
        ended="cut",
        events=[
            StreamEvent(ts=0.1, end=11, id=None),
            StreamEvent(ts=0.4, end=26, id="1"),
            StreamEvent(ts=0.4, end=41, id="2"),
        ],
    )


def test_a_crlf_split_between_chunks_is_timed_by_its_cr() -> None:
    _, timeline = timeline_from_chunks(URL, [(0.2, b"data: a\r\n\r"), (0.7, b"\n")], ended="closed")
    assert [(e.ts, e.end) for e in timeline.events] == [(0.2, 11)]


def test_resume_index_starts_after_the_last_event_with_that_id() -> None:
    events = [StreamEvent(ts=0, end=1, id="1"), StreamEvent(ts=0, end=2, id="1"), StreamEvent(ts=0, end=3, id="2")]
    timeline = StreamTimeline(url=URL, events=events)
    assert resume_index(timeline, None) == 0
    assert resume_index(timeline, "1") == 2
    assert resume_index(timeline, "2") == 3
    assert resume_index(timeline, "unknown") == 0


def test_timeline_record_round_trips_and_marks_a_cut_stream() -> None:
    timeline = StreamTimeline(url=URL, ended="cut", events=[StreamEvent(ts=0.25, end=9, id="é")])
    member = stream_timeline_record(
        timeline, concurrent_to="<urn:uuid:1>", date=datetime(2026, 1, 2, tzinfo=UTC), record_id="<urn:uuid:2>"
    )
    (record,) = list(iter_records(io.BytesIO(member), name="timeline.warc.gz"))
    assert record.rec_type == "metadata"
    assert record.warc_header("WARC-Concurrent-To") == "<urn:uuid:1>"
    assert record.warc_header("WARC-Resource-Type") == "event-stream"
    assert record.warc_header("WARC-Truncated") == "time"
    read = read_stream_timeline(URL, record.payload, truncated=record.warc_header("WARC-Truncated"))
    assert read == timeline
