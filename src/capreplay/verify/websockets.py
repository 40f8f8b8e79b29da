"""WebSocket accounting for ``verify``: each connection a page opened, its messages served and missed. Pure.

A handshake is a request like any other, but answering it is not what the page needs: the page needs the
messages after it. So a handshake whose archive holds no messages is logged as a miss by replay
(:data:`capreplay.replay.websocket.NO_MESSAGES`), and one whose captured server messages the page got none of
is turned into a miss here (:data:`NOT_PLAYED`): a page that shows an empty skeleton does not pass with
0 misses. A connection that got only part of its messages, or whose client sent something the capture never
saw, is a *deviation*: listed under ``websockets`` in ``--json``, and a failure with ``--strict``.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from capreplay.replay.websocket import Connection

if TYPE_CHECKING:  # pages imports this module
    from capreplay.verify.page_loads import RequestReport

NOT_PLAYED = "websocket-messages-not-played"
"""The ``rule`` of a handshake turned into a miss because none of its captured server messages was sent."""


def connection_json(connection: Connection) -> dict[str, Any]:
    """One connection in a page's ``websockets`` list of ``verify --json``."""
    return {
        "url": connection.url,
        "handshake": connection.result,
        "messages": connection.captured,
        "served": connection.served,
        "missed": connection.missed,
        "client_messages": connection.client_messages,
        "client_misses": len(connection.client_misses),
        "closed_by": connection.closed_by,
    }


def deviates(connection: Connection) -> bool:
    """Whether the page's conversation differed from the capture's: messages not served, client messages that
    matched nothing, or no messages archived at all."""
    return connection.result == "miss" or connection.missed > 0 or bool(connection.client_misses)


def unplayed_handshakes(requests: list[RequestReport], connections: list[Connection]) -> list[RequestReport]:
    """``requests`` with the handshake of every connection that served none of its captured server messages
    turned into a miss (of something archived). Connections and their handshakes pair up in order by URL."""
    out = list(requests)
    taken: set[int] = set()
    for connection in connections:
        place = next(
            (
                i
                for i, r in enumerate(out)
                if i not in taken
                and r.url == connection.url
                and r.method == "GET"
                and r.result in ("hit", "fuzzy", "miss")
            ),
            None,
        )
        if place is None:
            continue
        taken.add(place)
        if connection.captured > 0 and connection.served == 0 and out[place].result != "miss":
            out[place] = dataclasses.replace(out[place], result="miss", rule=NOT_PLAYED, archived=True)
    return out
