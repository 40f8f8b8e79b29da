"""WebSocket client messages compared but for the ids and times a client makes up, and those ids echoed back in
the server's messages; without a server. The Jupyter frames are written here by the layout jupyter_server's
``serialize_msg_to_ws_v1`` writes, not by the code under test."""

from __future__ import annotations

import json

import pytest

from capreplay.models.live_traffic import WebSocketMessage
from capreplay.replay.client_messages import alike, echo, jupyter_parts, message_fields

SESSION = "2e9b8c08-33f7-4677-bd37-fea148ba0f76"
OTHER_SESSION = "9f1c0d2e-1111-4a2b-8c3d-0123456789ab"


def _frame(channel: str, parts: list[bytes]) -> bytes:
    """jupyter_server's v1 layout: the number of offsets, the offsets, the channel, the parts."""
    offsets = [8 * (1 + 1 + len(parts) + 1)]
    offsets.append(len(channel) + offsets[-1])
    for part in parts:
        offsets.append(len(part) + offsets[-1])
    return b"".join(
        [len(offsets).to_bytes(8, "little"), *(o.to_bytes(8, "little") for o in offsets), channel.encode(), *parts]
    )


def _unframe(payload: bytes) -> tuple[str, list[bytes]]:
    """jupyter_server's ``deserialize_msg_from_ws_v1``."""
    count = int.from_bytes(payload[:8], "little")
    offsets = [int.from_bytes(payload[8 * (i + 1) : 8 * (i + 2)], "little") for i in range(count)]
    channel = payload[offsets[0] : offsets[1]].decode()
    return channel, [payload[offsets[i] : offsets[i + 1]] for i in range(1, count - 1)]


def _request(msg_type: str, msg_id: str, date: str, content: dict[str, object], session: str = SESSION) -> bytes:
    """A client message as JupyterLab sends it (JSON.stringify: no spaces)."""
    header = {"date": date, "msg_id": msg_id, "msg_type": msg_type, "session": session, "username": "",
              "subshell_id": None, "version": "5.2"}  # fmt: skip
    parts = [header, {}, {}, content]
    channel = "control" if msg_type == "debug_request" else "shell"
    return _frame(channel, [json.dumps(p, separators=(",", ":")).encode() for p in parts])


def _reply(msg_type: str, parent_id: str, content: dict[str, object], session: str = SESSION) -> bytes:
    """A kernel message as jupyter_server sends it (json.dumps: with spaces), its parent the request."""
    header = {"msg_id": "9e056f99-076f3825c85a36d583398d7a_12639_44", "msg_type": msg_type, "session": "9e056f99"}
    parent = {"date": "2026-12-07T04:16:30.324000Z", "msg_id": parent_id, "msg_type": "execute_request",
              "session": session}  # fmt: skip
    return _frame("iopub", [json.dumps(p).encode() for p in (header, parent, {}, content)])


CODE = {"code": "squares", "silent": False, "store_history": True}
RECORDED = _request("execute_request", "ec09e25c-f2b5-4ba5-9eec-ce98b637ab10", "2026-12-07T04:16:30.324Z", CODE)
SENT = _request(
    "execute_request", "6aa86d2f-abae-496c-ac54-5889f8397f6c", "2026-12-07T04:16:28.638Z", CODE, OTHER_SESSION
)


def _binary(payload: bytes) -> WebSocketMessage:
    return WebSocketMessage(ts=0.0, type="send", opcode=2, payload=payload)


def _text(text: str) -> WebSocketMessage:
    return WebSocketMessage.make_text(0.0, "send", text)


def test_a_jupyter_request_with_other_ids_and_date_is_alike_and_names_its_echoes() -> None:
    echoes = alike(_binary(RECORDED), 2, SENT)
    assert echoes == {
        "ec09e25c-f2b5-4ba5-9eec-ce98b637ab10": "6aa86d2f-abae-496c-ac54-5889f8397f6c",
        "2026-12-07T04:16:30.324Z": "2026-12-07T04:16:28.638Z",
        SESSION: OTHER_SESSION,
    }


NEW_ID, NEW_DATE = "6aa86d2f-abae-496c-ac54-5889f8397f6c", "2026-12-07T04:16:28Z"


@pytest.mark.parametrize(
    "sent",
    [
        pytest.param(_request("kernel_info_request", NEW_ID, NEW_DATE, CODE), id="another message type"),
        pytest.param(_request("execute_request", NEW_ID, NEW_DATE, {**CODE, "code": "cubes"}), id="other code"),
        pytest.param(_request("execute_request", NEW_ID, NEW_DATE, {**CODE, "allow_stdin": True}), id="one more field"),
        pytest.param(_request("execute_request", "not-an-id", NEW_DATE, CODE), id="a name as msg_id"),
        pytest.param(SENT[:-1] + b" ", id="content not JSON"),
    ],
)
def test_a_message_that_asks_something_else_is_not_alike(sent: bytes) -> None:
    assert alike(_binary(RECORDED), 2, sent) is None


def test_a_debug_request_with_another_sequence_number_is_not_alike() -> None:
    def debug(seq: int, msg_id: str) -> bytes:
        return _request("debug_request", msg_id, "2026-12-07T04:16:29Z", {"type": "request", "seq": seq})

    recorded = _binary(debug(0, "56784603-adce-4a85-809a-abd7f3e6b598"))
    assert alike(recorded, 2, debug(0, "3e804051-0c3f-4fbb-a0de-4e50248c58af")) is not None
    assert alike(recorded, 2, debug(1, "3e804051-0c3f-4fbb-a0de-4e50248c58af")) is None


def test_json_text_messages_are_alike_but_for_their_ids_in_any_key_order() -> None:
    recorded = _text('{"id": "0f8e4c3a-6b1d-4e2f-9a7b-5c6d7e8f9a0b", "type": "subscribe", "payload": {"q": "{a}"}}')
    sent = '{"type":"subscribe","payload":{"q":"{a}"},"id":"1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d"}'
    assert alike(recorded, 1, sent.encode()) == {
        "0f8e4c3a-6b1d-4e2f-9a7b-5c6d7e8f9a0b": "1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d"
    }
    assert alike(recorded, 1, sent.replace("subscribe", "complete").encode()) is None
    assert alike(recorded, 2, sent.encode()) is None  # the same bytes as a binary message
    counter = _text('{"id": "1", "type": "subscribe"}')
    assert alike(counter, 1, b'{"id": "2", "type": "subscribe"}') is None  # a short counter is not made up
    assert alike(_text("ping 1"), 1, b"ping 2") is None  # not JSON: bytes only


def test_times_are_volatile_only_under_a_time_name() -> None:
    recorded = _text('{"sent_at": 1796616985210, "count": 1796616985210}')
    assert alike(recorded, 1, b'{"sent_at": 1796616999999, "count": 1796616985210}') == {}
    assert alike(recorded, 1, b'{"sent_at": 1796616985210, "count": 1796616999999}') is None


def test_fields_of_a_binary_message_that_is_not_a_jupyter_frame() -> None:
    assert message_fields(2, b"\x00\x01\x02 not a frame at all") is None
    broken = bytearray(SENT)
    broken[8:16] = (7).to_bytes(8, "little")  # the first offset no longer after the offsets
    assert jupyter_parts(bytes(broken)) is None
    assert jupyter_parts((10**6).to_bytes(8, "little") + b"\x00" * 16) is None
    assert jupyter_parts(SENT) == _unframe(SENT)


def test_echo_puts_the_sent_ids_in_a_jupyter_reply_and_rewrites_its_offsets() -> None:
    reply = WebSocketMessage(
        ts=0.4, type="receive", opcode=2,
        payload=_reply("stream", "ec09e25c-f2b5-4ba5-9eec-ce98b637ab10", {"text": "sum of squares: 285\n"}),
    )  # fmt: skip
    echoes = {"ec09e25c-f2b5-4ba5-9eec-ce98b637ab10": "0123456789abcdef0123", SESSION: OTHER_SESSION}
    out = echo(reply, echoes)
    channel, parts = _unframe(out.payload)
    assert channel == "iopub"
    header, parent, metadata, content = (json.loads(p) for p in parts)
    assert parent["msg_id"] == "0123456789abcdef0123" and parent["session"] == OTHER_SESSION
    assert header["msg_id"] == "9e056f99-076f3825c85a36d583398d7a_12639_44"  # the kernel's own id, untouched
    assert content == {"text": "sum of squares: 285\n"} and metadata == {}
    assert (out.ts, out.type, out.opcode) == (0.4, "receive", 2)
    assert echo(reply, {"ffffffff-0000-4000-8000-000000000000": "x"}) == reply


def test_echo_swaps_at_once_and_only_whole_strings() -> None:
    a, b = "aaaaaaaa-0000-4000-8000-000000000001", "bbbbbbbb-0000-4000-8000-000000000002"
    message = WebSocketMessage.make_text(0.1, "receive", json.dumps({"x": a, "y": b, "z": a + "_1"}))
    out = json.loads(echo(message, {a: b, b: a}).text)
    assert out == {"x": b, "y": a, "z": a + "_1"}  # swapped, not chained; a longer string keeps its part
    assert echo(message, {}) is message
