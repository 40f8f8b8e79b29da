"""The WebSocket messages record: written and read back, refused when malformed, and valid for ``warcio check``."""

from __future__ import annotations

import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from capreplay.archive.warc.build import exchange_records, warcinfo_record
from capreplay.archive.warc.exchange import Exchange
from capreplay.archive.warc.live import http_url, read_websocket_messages, websocket_record, websocket_url
from capreplay.archive.warc.read import iter_records
from capreplay.errors import ArchiveError
from capreplay.models.live_traffic import WebSocketLog, WebSocketMessage

WHEN = datetime(2026, 12, 1, 12, 0, 0, tzinfo=UTC)
LOG = WebSocketLog(
    url="wss://chat.test/ws?room=1",
    messages=[
        WebSocketMessage.make_text(0.01, "send", 'héllo\n{"json": true}'),
        WebSocketMessage(ts=0.02, type="receive", opcode=2, payload=bytes([0, 128, 255, 10])),
        WebSocketMessage.make_close(0.5, "send", 4001, "bye"),
    ],
    ended="closed",
)


def _member(log: WebSocketLog) -> bytes:
    return websocket_record(
        log, concurrent_to="<urn:uuid:r>", date=WHEN, warcinfo_id="<urn:uuid:w>", record_id="<urn:uuid:m>"
    )


def test_messages_round_trip_through_the_record(tmp_path: Path) -> None:
    path = tmp_path / "ws.warc.gz"
    path.write_bytes(_member(LOG) + _member(LOG.model_copy(update={"ended": "cut"})))
    with path.open("rb") as f:
        closed, cut = list(iter_records(f, str(path), check_digests=True))
    assert closed.rec_type == "resource" and closed.url == "wss://chat.test/ws?room=1"
    assert closed.warc_header("WARC-Resource-Type") == "websocket"
    assert closed.warc_header("WARC-Concurrent-To") == "<urn:uuid:r>"
    assert closed.warc_header("Content-Type") == "application/jsonl"
    assert closed.warc_header("WARC-Truncated") is None and cut.warc_header("WARC-Truncated") == "time"
    assert closed.payload.count(b"\n") == 3
    assert b'"payloadData":"AID/Cg=="' in closed.payload  # binary as base64
    back = read_websocket_messages(str(closed.url), closed.payload, truncated=closed.warc_header("WARC-Truncated"))
    assert back == LOG
    assert read_websocket_messages(str(cut.url), cut.payload, truncated="time").ended == "cut"


@pytest.mark.parametrize(
    "line",
    [
        b"not json",
        b"[1, 2]",
        b'{"ts": 0.1, "type": "send"}',
        b'{"ts": -1, "type": "send", "opcode": 1, "payloadData": "x"}',
        b'{"ts": 0.1, "type": "sideways", "opcode": 1, "payloadData": "x"}',
        b'{"ts": 0.1, "type": "send", "opcode": 2, "payloadData": "not base64!"}',
        b'{"ts": 0.1, "type": "send", "opcode": 9, "payloadData": ""}',
        b'{"ts": 0.1, "type": "send", "opcode": 1, "payloadData": 5}',
    ],
)
def test_a_malformed_line_is_an_archive_error(line: bytes) -> None:
    good = b'{"ts":0,"type":"receive","opcode":1,"payloadData":"ok"}\n'
    with pytest.raises(ArchiveError):
        read_websocket_messages("wss://chat.test/ws", good + line + b"\n")


def test_a_warc_with_a_connection_passes_warcio_check(tmp_path: Path) -> None:
    handshake = Exchange(
        url="https://chat.test/ws?room=1", method="GET",
        request_headers=[("Host", "chat.test"), ("Upgrade", "websocket"), ("Connection", "Upgrade"),
                         ("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="), ("Sec-WebSocket-Version", "13")],
        request_body=b"", http_version="HTTP/1.1", status=101, reason="Switching Protocols",
        response_headers=[("Upgrade", "websocket"), ("Connection", "Upgrade"),
                          ("Sec-WebSocket-Accept", "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")],
        response_body=b"", started=WHEN,
    )  # fmt: skip
    request, response = exchange_records(
        handshake, warcinfo_id="<urn:uuid:w>", record_ids=("<urn:uuid:q>", "<urn:uuid:r>")
    )
    path = tmp_path / "ws.warc.gz"
    path.write_bytes(
        warcinfo_record({"software": "test"}, record_id="<urn:uuid:w>") + request + response + _member(LOG)
    )
    check = subprocess.run(
        [sys.executable, "-m", "warcio.cli", "check", "-v", str(path)], capture_output=True, text=True
    )
    assert check.returncode == 0, check.stdout + check.stderr
    assert check.stdout.count("digest pass") >= 4  # block and payload digests of every record were checked


def test_ws_and_http_forms_of_a_url() -> None:
    assert websocket_url("https://a.test/x?y=1") == "wss://a.test/x?y=1"
    assert websocket_url("http://a.test:8080/") == "ws://a.test:8080/"
    assert http_url("wss://a.test/x") == "https://a.test/x"
    assert http_url("WS://a.test/x") == "http://a.test/x"
