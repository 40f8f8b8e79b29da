"""The rule that tells a page's connections to one URL apart by what the client says first
(:func:`capreplay.replay.websocket.retell`), without a server: the reload of a page on a server that already gave
its recordings out, connections that arrive out of order, and what is never retold."""

from __future__ import annotations

from capreplay.models.live_traffic import OPCODE_TEXT, WebSocketLog, WebSocketMessage
from capreplay.replay.conversation import Conversation
from capreplay.replay.websocket import retell

URL = "wss://live.socket.test/ws/echo"


def _echo(round_: int) -> WebSocketLog:
    """One recorded connection of the reopening page: it says ``round N``, the server echoes it."""
    return WebSocketLog(url=URL, messages=[
        WebSocketMessage.make_text(0.01, "send", f"round {round_}"),
        WebSocketMessage.make_text(0.02, "receive", f"echo: round {round_}"),
    ])  # fmt: skip


def _say(conversation: Conversation, others: list[WebSocketLog], text: str, now: float) -> Conversation:
    conversation.receive(OPCODE_TEXT, text.encode(), now)
    return retell(conversation, others, OPCODE_TEXT, text.encode())


def test_a_reloaded_page_given_the_later_recording_plays_the_one_its_first_message_names() -> None:
    # the server's repeat count gave the second recording to the first connection of the page's second load
    given = Conversation(_echo(2), start=100.0)
    played = _say(given, [_echo(1)], "round 1", 100.05)
    assert played is not given and played.log == _echo(1)
    assert played.client_misses == []
    message, wait = played.next_release(100.05 + 0.01)
    assert message is not None and message.text == "echo: round 1" and wait is None


def test_a_first_message_its_own_recording_expects_changes_nothing() -> None:
    given = Conversation(_echo(1), start=0.0)
    assert _say(given, [_echo(2)], "round 1", 0.05) is given


def test_only_the_first_client_message_retells() -> None:
    given = Conversation(_echo(1), start=0.0)
    given = _say(given, [_echo(2)], "round 1", 0.05)
    later = _say(given, [_echo(2)], "round 2", 0.5)  # a second message: the connection is already told apart
    assert later is given and [m.text for m in later.client_misses] == ["round 2"]


def test_a_first_message_no_recording_expects_stays_a_client_miss() -> None:
    given = Conversation(_echo(1), start=0.0)
    played = _say(given, [_echo(2), _echo(3)], "round 9", 0.05)
    assert played is given and [m.text for m in played.client_misses] == ["round 9"]


def test_of_several_recordings_it_matches_the_earliest_captured_is_played() -> None:
    first, second = _echo(1), _echo(1).model_copy(update={"ended": "cut"})
    played = _say(Conversation(_echo(2), start=0.0), [first, second], "round 1", 0.05)
    assert played.log is first
