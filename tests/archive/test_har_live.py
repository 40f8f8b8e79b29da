"""WebSocket messages and event streams in HARs: imported as capreplay's live-traffic records, exported back.

``websocket.har`` and ``event_stream.har`` are mitmproxy's own test files (read from ``../shared/interop/``);
the event stream with times is written here by hand. Expected values are counted by hand from the HAR files
(each count says how), never computed by the converter.
"""

from __future__ import annotations

import json
from itertools import pairwise
from pathlib import Path
from typing import Any

from warcio.archiveiterator import ArchiveIterator

from capreplay.archive.importer.snapshot import ImportOptions, ImportResult, import_archives
from capreplay.archive.warc.live import read_stream_timeline, read_websocket_messages
from capreplay.browser.determinism import DEFAULT_SEED
from capreplay.cli import main
from capreplay.models.live_traffic import StreamTimeline, WebSocketLog
from tests.integration.test_import_interop import interop_file

FLOWS = "mitmproxy+mitmproxy/test/mitmproxy/data/flows/"
SOCKET = "https://demo.piesocket.com/v3/channel_123"
KEYED = SOCKET + "?api_key=VCXCEuvhGcBDP7XhiJJUDvR1e1D3eiVjgZ9VRiaV&notify_self"


def import_har(path: Path, out: Path) -> ImportResult:
    return import_archives(ImportOptions(inputs=[path], out=out, random_seed=DEFAULT_SEED))


def records(snapshot: Path) -> list[tuple[str, str, str | None, str | None, bytes]]:
    """(type, id, target URI, WARC-Concurrent-To, content) of every record of the snapshot's one WARC."""
    (warc,) = sorted((snapshot / "archive").glob("*.warc.gz"))
    out = []
    with warc.open("rb") as stream:
        for rec in ArchiveIterator(stream):
            h = rec.rec_headers
            out.append((rec.rec_type, h.get_header("WARC-Record-ID"), h.get_header("WARC-Target-URI"),
                        h.get_header("WARC-Concurrent-To"), rec.content_stream().read()))  # fmt: skip
    return out


def sockets(snapshot: Path) -> list[WebSocketLog]:
    """Every messages record, each checked to come right after the 101 response it names."""
    found = []
    recs = records(snapshot)
    for before, rec in pairwise(recs):
        if rec[0] == "resource" and rec[2] and rec[2].startswith("wss://"):
            assert before[0] == "response" and rec[3] == before[1] and before[4] == b""
            found.append(read_websocket_messages(rec[2], rec[4]))
    return found


def timelines(snapshot: Path) -> list[tuple[bytes, StreamTimeline]]:
    """(body, timeline) of every event stream, the timeline record right after its response."""
    found = []
    recs = records(snapshot)
    for before, rec in pairwise(recs):
        if rec[0] == "metadata" and rec[3] == before[1]:
            assert before[0] == "response" and rec[2] == before[2]
            found.append((before[4], read_stream_timeline(str(rec[2]), rec[4])))
    return found


def test_mitmproxys_websocket_har_imports_its_handshakes_and_every_message(tmp_path: Path) -> None:
    result = import_har(interop_file(FLOWS + "websocket.har"), tmp_path / "snap")
    assert result.warnings == []
    logs = sockets(tmp_path / "snap")
    # websocket.har, read by eye: 3 entries with status 101, holding 1, 1 and 3 `_webSocketMessages`
    assert [log.url for log in logs] == ["wss" + KEYED[5:], "wss" + SOCKET[5:], "wss" + KEYED[5:]]
    assert [[(m.type, m.opcode, m.payload) for m in log.messages] for log in logs] == [
        [("receive", 1, b'{"error":"Unknown api key"}')],
        [("receive", 1, b'{"error":"Missing apiKey"}')],
        [("receive", 1, b'{"error":"Unknown api key"}'), ("send", 1, b"foo"), ("send", 1, b"bar")],
    ]
    # the third entry's times, 1693314232.444319, 1693314240.7948081 and 1693314244.039395, counted from
    # the first (its timings, 195.8 + 3.1 + 162.2 ms after 13:03:52.266590, end later than that message)
    assert [m.ts for m in logs[2].messages] == [0.0, 8.350489, 11.595076]


def test_websocket_messages_survive_import_export_import(tmp_path: Path) -> None:
    import_har(interop_file(FLOWS + "websocket.har"), tmp_path / "a")
    assert main(["export", str(tmp_path / "a"), "-o", str(tmp_path / "a.har")]) == 0
    exported = json.loads((tmp_path / "a.har").read_text())["log"]["entries"]
    assert [len(e["_webSocketMessages"]) for e in exported] == [1, 1, 3]
    assert [m["data"] for m in exported[2]["_webSocketMessages"]] == ['{"error":"Unknown api key"}', "foo", "bar"]
    second = import_har(tmp_path / "a.har", tmp_path / "b")
    assert second.warnings == []
    assert sockets(tmp_path / "b") == sockets(tmp_path / "a")


def test_mitmproxys_event_streams_are_kept_empty_as_mitmproxy_streamed_them(tmp_path: Path) -> None:
    # event_stream.har: two 200 text/event-stream responses whose content.text is "" (size 0)
    result = import_har(interop_file(FLOWS + "event_stream.har"), tmp_path / "snap")
    assert result.warnings == [] and result.indexed == 2
    assert [(body, timeline.events) for body, timeline in timelines(tmp_path / "snap")] == [(b"", []), (b"", [])]


STREAM_BODY = ": hello\n\nid: 1\nevent: price\ndata: 10\n\ndata: a\ndata: b\n\n"
"""Three blocks: a comment, an event with id 1 and name price, and a two-line event (ids stay 1)."""


def stream_har(path: Path, *, messages: list[dict[str, Any]] | None, body: str = STREAM_BODY) -> Path:
    entry: dict[str, Any] = {
        "startedDateTime": "2024-03-01T12:00:00.000Z",
        "time": 5000,
        "request": {"method": "GET", "url": "https://feed.example/prices", "headers": []},
        "response": {"status": 200, "headers": [{"name": "Content-Type", "value": "text/event-stream"}],
                     "content": {"size": len(body), "mimeType": "text/event-stream", "text": body}},
        "timings": {"blocked": -1, "dns": 10, "connect": 30, "send": 0, "wait": 60, "receive": 4900},
    }  # fmt: skip
    if messages is not None:
        entry["_eventSourceMessages"] = messages
    path.write_text(json.dumps({"log": {"version": "1.2", "creator": {"name": "test"}, "entries": [entry]}}))
    return path


# 2024-03-01T12:00:00Z is 1709294400; the headers came 10 + 30 + 60 ms later, at 1709294400.1
MESSAGES = [
    {"time": 1709294401.1, "eventName": "price", "eventId": "1", "data": "10"},
    {"time": 1709294402.6, "eventName": "message", "eventId": "1", "data": "a\nb"},
]


def test_an_event_streams_times_are_read_from_its_event_source_messages(tmp_path: Path) -> None:
    result = import_har(stream_har(tmp_path / "s.har", messages=MESSAGES), tmp_path / "snap")
    assert result.warnings == []
    ((body, timeline),) = timelines(tmp_path / "snap")
    assert body == STREAM_BODY.encode()
    # block ends counted in STREAM_BODY: 9 (": hello\n\n"), 9 + 29, 38 + 17; the comment arrived with event 1
    assert [(e.ts, e.end, e.id) for e in timeline.events] == [(1.0, 9, None), (1.0, 38, "1"), (2.5, 55, "1")]

    assert main(["export", str(tmp_path / "snap"), "-o", str(tmp_path / "s2.har")]) == 0
    (entry,) = json.loads((tmp_path / "s2.har").read_text())["log"]["entries"]
    assert [(m["eventName"], m["eventId"], m["data"]) for m in entry["_eventSourceMessages"]] == [
        ("price", "1", "10"),
        ("message", "1", "a\nb"),
    ]
    import_har(tmp_path / "s2.har", tmp_path / "again")
    assert timelines(tmp_path / "again") == timelines(tmp_path / "snap")


def test_an_event_stream_without_times_has_its_events_at_0_and_says_so(tmp_path: Path) -> None:
    path = stream_har(tmp_path / "s.har", messages=None)
    result = import_har(path, tmp_path / "snap")
    assert result.warnings == [f"{path}: the HAR gives no times for the events of 1 event stream(s) (#0); "
                               "archived at ts 0, replay sends them at once"]  # fmt: skip
    ((_, timeline),) = timelines(tmp_path / "snap")
    assert [(e.ts, e.end) for e in timeline.events] == [(0.0, 9), (0.0, 38), (0.0, 55)]


def test_an_event_stream_kept_empty_is_rebuilt_from_its_event_source_messages(tmp_path: Path) -> None:
    import_har(stream_har(tmp_path / "s.har", messages=MESSAGES, body=""), tmp_path / "snap")
    ((body, timeline),) = timelines(tmp_path / "snap")
    assert body == b"id: 1\nevent: price\ndata: 10\n\nid: 1\ndata: a\ndata: b\n\n"
    assert [(e.ts, e.id) for e in timeline.events] == [(1.0, "1"), (2.5, "1")]
