"""The replay server's side of :mod:`capreplay.replay.sequence`: a middleware that holds a ready response until
the page's responses captured before it are sent.

Both ways of answering go through it: the handler says which record it answers with
(:data:`CAPTURED`: the general path's match gives the ``seq``; for a ready response, sent without reading the
index, the ``seq`` is looked up only when a page is being ordered). Each browser has its own ports (see
:meth:`capreplay.replay.server.ReplayServer.listen`), and the HTTP and HTTPS port of one browser share one
:class:`~capreplay.replay.sequence.PageSequencer` (:meth:`Ordering.pair`): a page loads from both schemes.

A response is sent here, not by the traffic middleware around this one, so that "sent" means its last byte
is out; a response the handler already sent itself (a WebSocket, an event stream) is not ordered.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass, field

from aiohttp import web

from capreplay.replay.fast import ReadyResponse
from capreplay.replay.quiet import Handler, request_port
from capreplay.replay.sequence import GATHER_S, HOLD_S, SPACE_S, PageSequencer, Ticket
from capreplay.replay.store import SnapshotStore

__all__ = ["CAPTURED", "ORDER", "Captured", "Ordering", "order_responses"]

PACED_DESTS = frozenset({"script", "empty", "document", "iframe", "frame", "worker", "sharedworker"})
"""``Sec-Fetch-Dest`` values of requests whose response runs code in the page (``empty``: fetch and XHR)."""

_SEQ_CACHE = 4096
"""URLs whose capture order is remembered for ready responses."""


@dataclass(frozen=True, slots=True)
class Captured:
    """The record a response answers with, as the handler knows it."""

    url: str
    """The absolute URL requested."""
    seq: int | None
    """The record's capture order; None for a miss, or for a ready response (looked up when needed)."""


@dataclass
class _Browser:
    """One browser's page order and the signal its waiting responses watch."""

    sequencer: PageSequencer
    changed: asyncio.Event = field(default_factory=asyncio.Event)

    def touch(self) -> None:
        """Wake every waiting response of this browser to ask again."""
        self.changed.set()
        self.changed = asyncio.Event()


class Ordering:
    """Every browser's page order on one server; ``enabled=False`` sends every response as soon as it is ready."""

    def __init__(
        self,
        store: SnapshotStore,
        *,
        enabled: bool = True,
        gather_s: float = GATHER_S,
        hold_s: float = HOLD_S,
        space_s: float = SPACE_S,
    ) -> None:
        self.store = store
        self.enabled = enabled
        self.gather_s = gather_s
        self.hold_s = hold_s
        self.space_s = space_s
        self.held = 0
        """Responses that waited for others (for benchmarks: what the order costs)."""
        self.held_s = 0.0
        """The time they waited, added up, in seconds."""
        self._group: dict[int, int] = {}
        self._browsers: dict[int, _Browser] = {}
        self._seqs: OrderedDict[str, int | None] = OrderedDict()

    def pair(self, ports: Iterable[int]) -> None:
        """The ports of one browser (its HTTP and HTTPS port): their requests make one page order."""
        ports = list(ports)
        for port in ports:
            self._group[port] = ports[0]

    def forget(self, ports: Iterable[int]) -> None:
        """Drop what is known of the browser on ``ports`` (it has gone)."""
        for port in ports:
            self._browsers.pop(self._group.pop(port, port), None)

    def browser(self, port: int) -> _Browser:
        """The page order of the browser that uses ``port`` (a port never paired is a browser of its own)."""
        group = self._group.get(port, port)
        found = self._browsers.get(group)
        if found is None:
            found = self._browsers[group] = _Browser(PageSequencer(self.gather_s, self.hold_s, self.space_s))
        return found

    def seq_of(self, url: str) -> int | None:
        """The capture order of the record a plain ``GET url`` is answered with (remembered for recent URLs)."""
        if url in self._seqs:
            self._seqs.move_to_end(url)
            return self._seqs[url]
        match = self.store.matcher.match("GET", url, None)
        seq = self._seqs[url] = None if match is None else match.candidate.seq
        if len(self._seqs) > _SEQ_CACHE:
            self._seqs.popitem(last=False)
        return seq


async def _turn(browser: _Browser, ticket: Ticket, loop: asyncio.AbstractEventLoop) -> float:
    """Wait until ``ticket`` may be sent; how long it waited (0.0: not at all)."""
    ready_at = loop.time()
    waited = False
    while True:
        given_up = browser.sequencer.given_up
        delay = browser.sequencer.wait(ticket, loop.time())
        if browser.sequencer.given_up != given_up:
            browser.touch()  # records this page does not ask for: the others waiting for them may go
        if delay is None:
            return loop.time() - ready_at if waited else 0.0
        waited = True
        changed = browser.changed
        try:
            async with asyncio.timeout(delay):
                await changed.wait()
        except TimeoutError:
            pass


ORDER = web.AppKey("order", Ordering)
CAPTURED = web.RequestKey("captured", Captured)


@web.middleware
async def order_responses(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Send the handler's response once the page's responses captured before it are sent (bounded)."""
    response = await handler(request)
    ordering = request.app[ORDER]
    captured = request.get(CAPTURED)
    if not ordering.enabled or captured is None or response.prepared:
        return response
    document = request.headers.get("Sec-Fetch-Dest") == "document"
    browser = ordering.browser(request_port(request))
    if not document and not browser.sequencer.ordering:
        return response  # no page on this browser: a client that is not a browser is never held
    seq = captured.seq
    if seq is None and isinstance(response, ReadyResponse):
        seq = ordering.seq_of(captured.url)
    loop = asyncio.get_running_loop()
    dest = request.headers.get("Sec-Fetch-Dest", "empty")
    ticket = browser.sequencer.arrive(seq, document=document, now=loop.time(), paced=dest in PACED_DESTS)
    if ticket is None:
        return response
    browser.touch()  # a page's first record, or one that fills a gap, lets others go
    try:
        held = await _turn(browser, ticket, loop)
        if held:
            ordering.held += 1
            ordering.held_s += held
        try:
            await response.prepare(request)
            await response.write_eof()
        except ConnectionError:
            pass  # the browser hung up; the traffic middleware sees the response finished and lets it go
    finally:
        browser.sequencer.sent(ticket, loop.time())
        browser.touch()
    return response
