"""verify's WebSocket accounting (:mod:`capreplay.verify.websockets`) without a browser: which handshakes become
misses, which connections deviate, and what ``--json`` lists."""

from __future__ import annotations

from capreplay.replay.websocket import NO_MESSAGES, Connection
from capreplay.verify.page_loads import RequestReport
from capreplay.verify.websockets import NOT_PLAYED, connection_json, deviates, unplayed_handshakes

URL = "https://chat.test/ws"


def test_a_handshake_whose_captured_messages_were_never_sent_is_an_archived_miss() -> None:
    requests = [RequestReport("https://chat.test/", "GET", "hit"), RequestReport(URL, "GET", "hit")]
    out = unplayed_handshakes(requests, [Connection(URL, 1, "hit", captured=3, served=0)])
    assert out[0] == requests[0]
    assert (out[1].result, out[1].rule, out[1].archived) == ("miss", NOT_PLAYED, True)


def test_a_connection_that_got_some_of_its_messages_keeps_its_hit_and_deviates() -> None:
    requests = [RequestReport(URL, "GET", "hit")]
    partly = Connection(URL, 1, "hit", captured=3, served=1)
    assert unplayed_handshakes(requests, [partly]) == requests
    assert deviates(partly) and partly.missed == 2


def test_a_connection_whose_server_said_nothing_in_the_capture_is_no_miss() -> None:
    requests = [RequestReport(URL, "GET", "hit")]
    quiet = Connection(URL, 1, "hit", captured=0, served=0)
    assert unplayed_handshakes(requests, [quiet]) == requests
    assert not deviates(quiet)


def test_handshakes_and_connections_pair_up_in_order_by_url() -> None:
    # the second connection to the URL got its messages, the first did not: only the first handshake is a miss
    requests = [RequestReport(URL, "GET", "hit"), RequestReport("https://chat.test/a.js", "GET", "hit"),
                RequestReport(URL, "GET", "fuzzy", "ignore-scheme")]  # fmt: skip
    first = Connection(URL, 1, "hit", captured=2, served=0)
    second = Connection(URL, 1, "fuzzy", captured=2, served=2)
    out = unplayed_handshakes(requests, [first, second])
    assert [(r.result, r.rule) for r in out] == [("miss", NOT_PLAYED), ("hit", None), ("fuzzy", "ignore-scheme")]


def test_a_handshake_replay_already_logged_as_a_miss_is_left_as_it_is() -> None:
    requests = [RequestReport(URL, "GET", "miss", NO_MESSAGES)]
    none_archived = Connection(URL, 1, "miss")
    assert unplayed_handshakes(requests, [none_archived]) == requests
    assert deviates(none_archived)


def test_client_messages_that_matched_nothing_deviate_and_are_counted() -> None:
    chatty = Connection(URL, 1, "hit", captured=1, served=1, client_messages=2, client_misses=["hullo"],
                        closed_by="client")  # fmt: skip
    assert deviates(chatty)
    assert connection_json(chatty) == {
        "url": URL, "handshake": "hit", "messages": 1, "served": 1, "missed": 0, "client_messages": 2,
        "client_misses": 1, "closed_by": "client",
    }  # fmt: skip
