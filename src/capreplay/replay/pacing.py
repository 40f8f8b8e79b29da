"""How replay paces what a connection received over time after its headers: event-stream events and WebSocket
messages are sent with the gaps the capture saw between them, each gap cut to :data:`GAP_CAP_S`. Pure.

Keeping the gaps keeps what a page does between two arrivals (a ticker's steps, a reconnect's timing) as it
was; the cap keeps a stream that was idle for minutes during capture from holding a replay (and an agent's
episode) just as long.
"""

from __future__ import annotations

from collections.abc import Sequence

GAP_CAP_S = 1.0
"""The longest replay waits between two things a live connection received (and before the first one), in
seconds. Long enough for a page's own timers and animations between pushes to run as captured (most live pages
push within a second); short enough that a connection idle for minutes in the capture replays in seconds."""


def gaps(times: Sequence[float], *, since: float = 0.0, cap: float = GAP_CAP_S) -> list[float]:
    """The wait before each of ``times`` (seconds, in order, as captured), starting from ``since``: the captured
    gap to the one before, never less than zero nor more than ``cap``."""
    waits = []
    previous = since
    for at in times:
        waits.append(min(max(at - previous, 0.0), cap))
        previous = max(previous, at)
    return waits
