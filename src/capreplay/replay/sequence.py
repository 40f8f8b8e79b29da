"""One page's concurrent responses, completed in the order its capture completed them: the rule, without I/O.

Two replays of a page can differ only where the browser sees something in another order, and the order in
which concurrent responses complete is such a thing: async scripts run in the order they arrive, and with a
clock that advances per read, every script that runs in another place reads other times. The capture
fixed one order: records are written as the recorder saw their exchanges complete, so an index entry's
``seq`` is the capture's completion order (for a foreign WARC, the order its tool wrote them). The replay
server keeps to it, for each browser (:class:`PageSequencer`, one per browser; the server wires it in
:mod:`capreplay.replay.page_order`):

- **What one page is.** A main-frame navigation (``Sec-Fetch-Dest: document``, which Chromium sends on
  every top-level navigation, reloads and history loads included) starts a new page; its record's ``seq``
  is the page's *base*. Requests before any navigation (a load generator, a client that is not a browser)
  are never held. The Referer would not do: a script's requests name the page, but the page's stylesheets'
  fonts name the stylesheet, and a page without a Referer policy sends none across origins. Time windows
  would split one slow page in two or join two quick ones.
- **In flight before it.** A response is held while a response of the same page captured before it is
  still being sent (it arrived, and its last byte is not out yet): a small script no longer overtakes a
  large one requested with it.
- **Not asked for yet.** A response is also held, for a shorter while, when a record of the page captured
  before it (a ``seq`` between the page's base and its own) has not been requested yet: requests the page
  sends together reach the server a few milliseconds apart, on connections that become ready in another
  order every time.
- **Apart.** A response that runs code in the page (a script, a fetch) is followed by later ones only after
  :data:`SPACE_S`: the browser does not read its connections in the order the server wrote them.
- **Bounded.** A page that asks for less than its capture did (a tracker the offline browser blocks, a
  request made in another form today) must not stall: a record not asked for within :data:`GATHER_S` of a
  later one being ready is given up for the rest of the page (no later response waits for it again), and no
  response waits for those in flight for more than :data:`HOLD_S` (a response that held another that long
  is never waited for again: an endless one, such as an event stream, delays the page once).

Waits only ever go to a lower ``seq``, so they cannot form a cycle, and each is bounded.
"""

from __future__ import annotations

from dataclasses import dataclass, field

GATHER_S = 0.15
"""How long a ready response waits for records captured before it that the page has not requested yet.
Requests a page sends at once reach the server within a few milliseconds of each other on an idle machine,
and 50 ms apart or more on one whose two cores run a dozen processes (then 50 ms let one script in four
through first); each record the page never asks for costs the page this much once."""

SPACE_S = 0.02
"""How long after a response that runs code (a script, a fetch) is sent a later one of the same page may
follow it. Sent means handed to the kernel: the browser reads each connection, and hands each body on to the
page, in an order of its own, so two responses written a tenth of a millisecond apart on two connections
reach the page in either order; on a busy machine, 5 ms apart still did one time in a dozen."""

HOLD_S = 0.5
"""How long a ready response waits, at most, for responses captured before it that are still being sent.
A response over loopback takes milliseconds; this bounds the cost of one that never ends."""


@dataclass(eq=False)
class Ticket:
    """One response of a page, from the moment it is ready to be sent until it has been sent."""

    seq: int
    """The capture order of the record it answers with."""
    page: int
    """Which page of its browser it belongs to (see :attr:`PageSequencer.page`)."""
    ready_at: float
    """When it was ready to be sent (the caller's clock, in seconds)."""
    paced: bool = True
    """Its arrival runs code in the page (a script, a fetch): later responses keep :data:`SPACE_S` from it.
    An image or a stylesheet overtaken by a script changes nothing the page computes."""
    waited_past: bool = False
    """Another response was held past :data:`HOLD_S` by this one: nobody waits for it again."""


@dataclass
class PageSequencer:
    """The order of one browser's responses: which may be sent now, and how long another may have to wait.

    The caller reports each response when it is ready (:meth:`arrive`) and when it has been sent
    (:meth:`sent`), and asks :meth:`wait` whether a ready one may go; nothing here reads a clock.
    """

    gather_s: float = GATHER_S
    hold_s: float = HOLD_S
    space_s: float = SPACE_S
    page: int = 0
    """Counts the browser's main-frame navigations; a ticket of an earlier page is never held."""
    base: int | None = None
    """The ``seq`` of the current page's document; None before any page (or for a document not archived)."""
    frontier: int = 0
    """Every record after :attr:`base` and before this one has been requested (or given up)."""
    requested: set[int] = field(default_factory=set)
    """Records of the current page requested beyond :attr:`frontier`."""
    in_flight: list[Ticket] = field(default_factory=list)
    """Tickets of the current page not sent yet."""
    recent: list[tuple[int, float]] = field(default_factory=list)
    """``(seq, sent at)`` of the current page's responses sent less than :attr:`space_s` ago."""
    given_up: int = 0
    """How many times a response stopped waiting for records not requested (:data:`GATHER_S` passed)."""
    held_past: int = 0
    """How many times a response stopped waiting for ones in flight (:data:`HOLD_S` passed)."""

    @property
    def ordering(self) -> bool:
        """Whether a page is being ordered (a navigation to an archived document has been seen)."""
        return self.base is not None

    def arrive(self, seq: int | None, *, document: bool, now: float, paced: bool = True) -> Ticket | None:
        """A response is ready: the record ``seq`` (None: no record, a miss) for a main-frame navigation
        (``document``) or not, ``paced`` when its arrival runs code in the page. Its ticket, or None when it is
        not ordered (no page, or no record)."""
        if document:
            self.page += 1
            self.base = seq
            self.frontier = 0 if seq is None else seq + 1
            self.requested.clear()
            self.in_flight.clear()  # the previous page's responses go as they are: nobody waits for them
            self.recent.clear()
        if self.base is None or seq is None:
            return None
        if seq >= self.frontier:
            self.requested.add(seq)
            self._advance()
        ticket = Ticket(seq, self.page, now, paced)
        self.in_flight.append(ticket)
        return ticket

    def wait(self, ticket: Ticket, now: float) -> float | None:
        """None when ``ticket`` may be sent now; else the longest it should wait before asking again (sooner
        when a response is sent or another arrives)."""
        if ticket.page != self.page:
            return None
        held = now - ticket.ready_at
        gap = self.frontier < ticket.seq
        if gap and held >= self.gather_s:
            self._give_up_before(ticket.seq)
            gap = False
        earlier = [t for t in self.in_flight if t.seq < ticket.seq and not t.waited_past]
        if earlier and held >= self.hold_s:
            self.held_past += 1
            for t in earlier:
                t.waited_past = True
            earlier = []
        self.recent = [(s, at) for s, at in self.recent if at + self.space_s > now]
        spaced = max((at + self.space_s for s, at in self.recent if s < ticket.seq), default=now)
        if not gap and not earlier:
            return spaced - now if spaced > now and held < self.hold_s else None
        return (self.gather_s if gap else self.hold_s) - held

    def sent(self, ticket: Ticket, now: float) -> None:
        """``ticket``'s response has been sent at ``now`` (or its browser has gone)."""
        if ticket in self.in_flight:
            self.in_flight.remove(ticket)
            if ticket.paced:
                self.recent.append((ticket.seq, now))

    def _give_up_before(self, seq: int) -> None:
        # Records before ``seq`` not requested by now are taken as ones this page does not ask for.
        if seq > self.frontier:
            self.given_up += 1
            self.requested = {s for s in self.requested if s >= seq}
            self.frontier = seq
            self._advance()

    def _advance(self) -> None:
        while self.frontier in self.requested:
            self.requested.discard(self.frontier)
            self.frontier += 1
