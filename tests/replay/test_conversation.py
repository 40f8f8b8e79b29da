"""The replay rule for one WebSocket connection, without a server: captured order, after the client messages that
preceded each server message (by position, then by content, then alike but for made-up ids, which the server's
messages then echo), captured gaps capped."""

from __future__ import annotations

import json

from capreplay.models.live_traffic import WebSocketLog, WebSocketMessage
from capreplay.replay.conversation import Conversation
from capreplay.replay.pacing import GAP_CAP_S


def _text(ts: float, kind: str, text: str) -> WebSocketMessage:
    return WebSocketMessage.make_text(ts, kind, text)  # type: ignore[arg-type]


CHAT = WebSocketLog(
    url="wss://chat.test/ws",
    messages=[
        _text(0.05, "receive", "welcome"),
        _text(0.10, "send", "hi"),
        _text(0.15, "receive", "echo: hi"),
        _text(0.40, "receive", "news"),
        _text(0.50, "send", "bye"),
        _text(0.52, "receive", "echo: bye"),
        WebSocketMessage.make_close(0.60, "receive", 4000, "done"),
    ],
)


def _drain(conv: Conversation, now: float) -> list[str]:
    """Release every server message due at ``now``."""
    out = []
    while True:
        message, _ = conv.next_release(now)
        if message is None:
            return out
        out.append(message.text if message.opcode == 1 else f"close {message.close_code}")
        conv.released(now)


def test_server_messages_wait_for_the_client_messages_before_them_and_keep_their_gaps() -> None:
    conv = Conversation(CHAT, start=100.0)
    message, wait = conv.next_release(100.0)
    assert message is None and wait is not None and abs(wait - 0.05) < 1e-9  # the first gap counts from the handshake
    assert _drain(conv, 100.05) == ["welcome"]
    assert conv.next_release(200.0) == (None, None)  # "echo: hi" waits for "hi", however long
    assert conv.waiting_for_client
    assert conv.receive(1, b"hi", now=101.0)
    message, wait = conv.next_release(101.0)
    assert message is None and wait is not None and abs(wait - 0.05) < 1e-9  # 0.15 - 0.10 after "hi" arrived
    assert _drain(conv, 101.05) == ["echo: hi"]
    assert _drain(conv, 101.29) == []
    assert _drain(conv, 101.30) == ["news"]  # 0.25 after the previous server message
    assert conv.receive(1, b"bye", now=105.0)
    assert _drain(conv, 105.02) == ["echo: bye"]
    assert _drain(conv, 105.10) == ["close 4000"]
    assert conv.done and conv.captured == 4 and conv.served == 4 and conv.client_misses == []


def test_a_client_message_that_matches_nothing_is_a_miss_and_releases_nothing() -> None:
    conv = Conversation(CHAT, start=0.0)
    _drain(conv, 1.0)
    assert not conv.receive(1, b"something else", now=1.0)
    assert not conv.receive(2, b"hi", now=1.0)  # same bytes, but binary: not the captured text message
    assert conv.next_release(10.0) == (None, None)
    assert [m.payload for m in conv.client_misses] == [b"something else", b"hi"]
    assert conv.served == 1


def test_client_messages_out_of_order_match_by_content() -> None:
    conv = Conversation(CHAT, start=0.0)
    _drain(conv, 1.0)
    assert conv.receive(1, b"bye", now=2.0)  # the captured second message, matched by content
    assert _drain(conv, 10.0) == []  # "echo: hi" still waits for "hi"
    assert conv.receive(1, b"hi", now=11.0)
    assert _drain(conv, 20.0) == ["echo: hi"]  # each next one its captured gap after the one before
    assert _drain(conv, 20.25) == ["news"]
    assert _drain(conv, 20.28) == ["echo: bye"]  # "bye" came long before: its captured 0.02 after the news
    assert _drain(conv, 20.36) == ["close 4000"]


def test_gaps_are_capped() -> None:
    ticker = WebSocketLog(url="wss://t.test/ws", messages=[_text(60.0, "receive", "a"), _text(180.0, "receive", "b")])
    conv = Conversation(ticker, start=0.0)
    assert conv.next_release(0.0) == (None, GAP_CAP_S)
    assert _drain(conv, GAP_CAP_S) == ["a"]
    assert _drain(conv, 2 * GAP_CAP_S) == ["b"]


def test_the_same_client_gets_the_same_messages_in_the_same_order() -> None:
    def run() -> list[tuple[float, str]]:
        conv = Conversation(CHAT, start=0.0)
        sent: list[tuple[float, str]] = []
        arrivals = {0.2: b"hi", 0.9: b"nope", 1.0: b"bye"}
        now = 0.0
        while now < 3.0:
            if now in arrivals:
                conv.receive(1, arrivals[now], now)
            sent += [(now, t) for t in _drain(conv, now)]
            now = round(now + 0.01, 2)
        return sent

    first = run()
    assert [t for _, t in first] == ["welcome", "echo: hi", "news", "echo: bye", "close 4000"]
    assert first == run()


def _kernel_request(msg_type: str, msg_id: str, seq: int) -> bytes:
    """A JupyterLab client message in the kernel protocol's v1 layout (count of offsets, offsets, channel, parts)."""
    header = {"date": f"2026-12-07T04:16:{30 + seq}.000Z", "msg_id": msg_id, "msg_type": msg_type, "session": ""}
    parts = [json.dumps(p, separators=(",", ":")).encode() for p in (header, {}, {}, {"seq": seq})]
    offsets = [8 * (len(parts) + 3), 8 * (len(parts) + 3) + len(b"shell")]
    for part in parts:
        offsets.append(offsets[-1] + len(part))
    return b"".join([len(offsets).to_bytes(8, "little"), *(o.to_bytes(8, "little") for o in offsets), b"shell", *parts])


def _id(n: int) -> str:
    return f"{n:08x}-0000-4000-8000-000000000000"


KERNEL = WebSocketLog(
    url="ws://lab.test/api/kernels/k/channels",
    messages=[
        WebSocketMessage(ts=0.1, type="send", opcode=2, payload=_kernel_request("debug_request", _id(1), 0)),
        WebSocketMessage(ts=0.2, type="send", opcode=2, payload=_kernel_request("debug_request", _id(2), 0)),
        _text(0.3, "receive", json.dumps({"parent": _id(1)})),
        _text(0.4, "receive", json.dumps({"parent": _id(2)})),
        WebSocketMessage(ts=0.5, type="send", opcode=2, payload=_kernel_request("execute_request", _id(3), 1)),
        _text(0.6, "receive", json.dumps({"parent": _id(3), "text": "285"})),
    ],
)


def test_requests_with_new_ids_match_alike_by_position_and_replies_carry_the_new_ids() -> None:
    conv = Conversation(KERNEL, start=0.0)
    assert conv.receive(2, _kernel_request("debug_request", _id(8), 0), now=1.0)  # the page made up other ids
    assert conv.receive(2, _kernel_request("debug_request", _id(9), 0), now=1.0)
    assert _drain(conv, 2.0) + _drain(conv, 2.2) == [json.dumps({"parent": _id(8)}), json.dumps({"parent": _id(9)})]
    assert _drain(conv, 3.0) == []  # the result still waits for its request
    assert conv.receive(2, _kernel_request("execute_request", _id(7), 1), now=3.0)
    assert _drain(conv, 4.0) == [json.dumps({"parent": _id(7), "text": "285"})]
    assert conv.done and conv.client_misses == [] and conv.client_alike == 3


def test_an_exact_message_beats_an_alike_one_at_the_position_and_another_request_is_a_miss() -> None:
    conv = Conversation(KERNEL, start=0.0)
    assert conv.receive(2, _kernel_request("debug_request", _id(2), 0), now=1.0)  # alike the first, exact the second
    assert conv.client_alike == 0
    assert conv.receive(2, _kernel_request("debug_request", _id(5), 0), now=1.0)
    assert conv.client_alike == 1
    assert not conv.receive(2, _kernel_request("execute_request", _id(8), 2), now=2.0)  # another cell
    assert conv.next_release(5.0)[0] is not None and len(conv.client_misses) == 1
