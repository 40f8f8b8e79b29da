"""Each browser's page order, and a response's wait for its turn: :mod:`capreplay.replay.sequence` with a clock.

Whatever answers a browser (the replay server's middleware, :mod:`capreplay.replay.page_order`; the proxy's
responder, :mod:`capreplay.replay.proxy.responder`) holds each ready response in :meth:`Ordering.turn` and sends it
inside the block: the block's end is when the response counts as sent. A browser is named by a key the caller
chooses: the server's port it came in on (one browser's HTTP and HTTPS port are :meth:`Ordering.pair`\\ ed), or
the proxy's port. Nothing here knows of HTTP servers; the rule itself stays in ``sequence``.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from dataclasses import dataclass, field

from capreplay.replay.sequence import GATHER_S, HOLD_S, SPACE_S, PageSequencer, Ticket
from capreplay.replay.store import SnapshotStore

__all__ = ["PACED_DESTS", "Ordering", "fetch_dest"]

PACED_DESTS = frozenset({"script", "empty", "document", "iframe", "frame", "worker", "sharedworker"})
"""``Sec-Fetch-Dest`` values of requests whose response runs code in the page (``empty``: fetch and XHR)."""


def fetch_dest(headers: Mapping[str, str]) -> str | None:
    """What a request is for: its ``Sec-Fetch-Dest``, or for a request that carries none, what its headers show.

    Chromium sends the ``Sec-Fetch-*`` headers only to potentially trustworthy origins (https, loopback), so a
    plain-http page (JupyterLab on ``http://``, most intranet applications) would never start a page nor be
    ordered. Its navigations still carry ``Upgrade-Insecure-Requests: 1`` with an ``Accept`` that starts with
    ``text/html`` (an iframe's too: on plain http one starts the page over, which loosens the order and never
    stalls it); a stylesheet asks for ``text/css``, an image for ``image/...``; scripts, fetches and fonts ask
    for ``*/*`` and count as code (``empty``), which only spaces them. A request with neither header set (a
    script's client, wrk) gives None and is never held.
    """
    dest = headers.get("Sec-Fetch-Dest")
    if dest is not None:
        return dest
    accept = headers.get("Accept")
    if accept is None:
        return None
    if headers.get("Upgrade-Insecure-Requests") == "1" and accept.startswith("text/html"):
        return "document"
    if accept.startswith("text/css"):
        return "style"
    if accept.startswith("image/"):
        return "image"
    return "empty"


_SEQ_CACHE = 4096
"""URLs whose capture order is remembered for ready responses."""


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

    def pair(self, keys: Iterable[int]) -> None:
        """The keys (ports) of one browser, such as its HTTP and HTTPS port: their requests make one page order."""
        keys = list(keys)
        for key in keys:
            self._group[key] = keys[0]

    def browser_of(self, key: int) -> int:
        """The browser that ``key`` (a port) belongs to: the first key it was paired with, else itself."""
        return self._group.get(key, key)

    def forget(self, keys: Iterable[int]) -> None:
        """Drop what is known of the browser on ``keys`` (it has gone)."""
        for key in keys:
            self._browsers.pop(self._group.pop(key, key), None)

    def browser(self, key: int) -> _Browser:
        """The page order of the browser named ``key`` (a key never paired is a browser of its own)."""
        group = self._group.get(key, key)
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

    @contextlib.asynccontextmanager
    async def turn(self, key: int, dest: str | None, seq: Callable[[], int | None]) -> AsyncIterator[None]:
        """Enter once the response may be sent; send it inside the block; leaving counts it sent.

        ``key`` names the browser, ``dest`` is the request's ``Sec-Fetch-Dest`` (``document`` starts a page),
        ``seq`` gives the capture order of the record answered with (None: a miss); it is called only when the
        browser's page is being ordered, so a lookup it makes is paid for only then.
        """
        document = dest == "document"
        browser = self.browser(key) if self.enabled else None
        if browser is None or (not document and not browser.sequencer.ordering):
            yield  # order off, or no page on this browser: a client that is not a browser is never held
            return
        loop = asyncio.get_running_loop()
        paced = (dest or "empty") in PACED_DESTS
        ticket = browser.sequencer.arrive(seq(), document=document, now=loop.time(), paced=paced)
        if ticket is None:
            yield
            return
        browser.touch()  # a page's first record, or one that fills a gap, lets others go
        try:
            held = await _wait_turn(browser, ticket, loop)
            if held:
                self.held += 1
                self.held_s += held
            yield
        finally:
            browser.sequencer.sent(ticket, loop.time())
            browser.touch()


async def _wait_turn(browser: _Browser, ticket: Ticket, loop: asyncio.AbstractEventLoop) -> float:
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
