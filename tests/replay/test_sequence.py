"""The page order rule (:mod:`capreplay.replay.sequence`), without a server: times are given, never read."""

from __future__ import annotations

from capreplay.replay.sequence import PageSequencer, Ticket

GATHER = 0.05
HOLD = 0.5
SPACE = 0.005


def page(base: int = 10) -> tuple[PageSequencer, Ticket]:
    """A sequencer whose browser has navigated to the document recorded at ``base``, its document sent."""
    seq = PageSequencer(GATHER, HOLD, SPACE)
    doc = seq.arrive(base, document=True, now=0.0)
    assert doc is not None and seq.wait(doc, 0.0) is None
    seq.sent(doc, 0.0)
    return seq, doc


def test_no_page_no_order() -> None:
    """Before any navigation (a load generator, a script) nothing is held or even tracked."""
    seq = PageSequencer(GATHER, HOLD, SPACE)
    assert seq.arrive(5, document=False, now=0.0) is None
    assert not seq.ordering


def test_later_record_waits_for_earlier_in_flight() -> None:
    """B (captured after A) is ready while A is still being sent: B waits until A is sent."""
    seq, _ = page()
    a = seq.arrive(11, document=False, now=1.0)
    b = seq.arrive(12, document=False, now=1.001)
    assert a is not None and b is not None
    assert seq.wait(a, 1.002) is None
    assert seq.wait(b, 1.002) is not None
    seq.sent(a, 1.003)
    wait = seq.wait(b, 1.003)
    assert wait is not None and wait <= SPACE  # sent is not yet read: a later one keeps its distance
    assert seq.wait(b, 1.003 + SPACE) is None


def test_earlier_record_never_waits_for_later() -> None:
    """A response captured earlier goes even while a later one is in flight."""
    seq, _ = page()
    b = seq.arrive(12, document=False, now=1.0)
    a = seq.arrive(11, document=False, now=1.001)
    assert a is not None and b is not None
    assert seq.wait(a, 1.001) is None


def test_waits_for_earlier_record_not_requested_yet() -> None:
    """B is ready before A's request has arrived: B waits for it, and goes once A is sent."""
    seq, _ = page()
    b = seq.arrive(12, document=False, now=1.0)
    assert b is not None
    wait = seq.wait(b, 1.0)
    assert wait is not None and 0 < wait <= GATHER
    a = seq.arrive(11, document=False, now=1.01)
    assert a is not None
    assert seq.wait(b, 1.01) is not None  # A is now in flight
    seq.sent(a, 1.011)
    assert seq.wait(b, 1.011 + SPACE) is None


def test_page_that_asks_for_less_is_held_once_at_most() -> None:
    """A record the page never asks for holds a later one for the gather bound, then never again."""
    seq, _ = page()
    b = seq.arrive(12, document=False, now=1.0)
    assert b is not None
    assert seq.wait(b, 1.0 + GATHER / 2) is not None
    assert seq.wait(b, 1.0 + GATHER) is None
    seq.sent(b, 1.1)
    c = seq.arrive(13, document=False, now=2.0)
    assert c is not None and seq.wait(c, 2.0) is None  # record 11 was given up for this page


def test_hold_is_bounded_and_an_endless_response_holds_once() -> None:
    """A response still in flight past the hold bound (an endless one) stops holding others."""
    seq, _ = page()
    endless = seq.arrive(11, document=False, now=1.0)
    b = seq.arrive(12, document=False, now=1.0)
    assert endless is not None and b is not None
    wait = seq.wait(b, 1.0)
    assert wait is not None and wait <= HOLD
    assert seq.wait(b, 1.0 + HOLD) is None
    seq.sent(b, 1.1)
    c = seq.arrive(13, document=False, now=3.0)
    assert c is not None and seq.wait(c, 3.0) is None


def test_navigation_starts_a_new_page() -> None:
    """A new main-frame document ends the old page: its responses go at once, and the new page's records
    before the new document are not waited for."""
    seq, _ = page(base=10)
    old = seq.arrive(15, document=False, now=1.0)
    doc = seq.arrive(40, document=True, now=1.5)
    assert old is not None and doc is not None
    assert seq.wait(old, 1.5) is None
    assert seq.wait(doc, 1.5) is None
    seq.sent(doc, 1.5)
    own = seq.arrive(41, document=False, now=1.6)
    assert own is not None and seq.wait(own, 1.6) is None
    seq.sent(own, 1.6)
    shared = seq.arrive(3, document=False, now=1.6)  # captured with an earlier page: no gap to wait for
    assert shared is not None and seq.wait(shared, 1.6) is None


def test_document_not_archived_orders_nothing() -> None:
    """A navigation to a URL the snapshot misses leaves its page unordered."""
    seq, _ = page()
    assert seq.arrive(None, document=True, now=1.0) is None
    assert seq.arrive(12, document=False, now=1.0) is None


def test_same_record_twice_does_not_wait_for_itself() -> None:
    """Two requests answered by one record go in any order."""
    seq, _ = page()
    first = seq.arrive(11, document=False, now=1.0)
    second = seq.arrive(11, document=False, now=1.0)
    assert first is not None and second is not None
    assert seq.wait(second, 1.0) is None


def test_chain_goes_in_capture_order() -> None:
    """Records ready in reverse order are released one by one in capture order."""
    seq, _ = page()
    tickets = [seq.arrive(s, document=False, now=1.0) for s in (14, 13, 12, 11)]
    order = []
    pending = [t for t in tickets if t is not None]
    now = 1.0
    while pending:
        free = [t for t in pending if seq.wait(t, now) is None]
        assert len(free) == 1
        order.append(free[0].seq)
        seq.sent(free[0], now)
        pending.remove(free[0])
        assert all(seq.wait(t, now) is not None for t in pending)  # each keeps its distance from the last
        now += SPACE
    assert order == [11, 12, 13, 14]
