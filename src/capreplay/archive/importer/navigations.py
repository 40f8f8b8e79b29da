"""Which archived HTML documents a browser navigated to, and which it only loaded inside a page's frame.

An ad, a tracker or a social widget is often a whole HTML document in an ``<iframe>``: archived as a 200
HTML response like the page around it, but not a page anyone visited. What tells them apart, strongest
first:

- the request's ``Sec-Fetch-Dest`` (``document`` for a top-level navigation, ``iframe`` or ``frame``
  for a framed one), or ``Sec-Fetch-Mode: navigate`` where a browser sent no ``Sec-Fetch-Dest``
  (Chrome 76 to 79). Browsers send these since 2019, so a WARC that holds any of them holds them for
  every request its browser made, and in such a WARC only navigations are pages (a WARC without them,
  imported with it, keeps its pages); a navigation that was redirected counts for the response it ended
  on, whose request a recorder may have stored without the headers;
- ``<iframe src>`` and ``<frame src>`` in another page's HTML;
- in a WARC without Sec-Fetch headers (older browsers, crawlers): a document from another host that was
  requested with a page's URL as its ``Referer`` is taken as embedded in that page, as script-inserted
  widgets are (Facebook's ``referer_frame.php`` in facebook.com, its ``xd_arbiter`` in instagram.com).
  A crawl that followed links across hosts without sending Sec-Fetch headers looks the same; ``--page``
  names its pages.

Pure functions; :mod:`capreplay.archive.importer.inputs` collects the facts while it reads the records.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from urllib.parse import urldefrag, urljoin, urlsplit

from capreplay.archive.index.cdxj import IndexEntry
from capreplay.archive.warc.http import MAX_REDIRECTS, decode_body

FRAME_DESTINATIONS = frozenset({"iframe", "frame", "embed", "object", "fencedframe"})
_FRAME_SRC = re.compile(
    rb"""<(?:i?frame)\b[^>]*?\ssrc\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))""", re.IGNORECASE | re.DOTALL
)

type Place = tuple[str, int]
"""(file in the snapshot, offset) of a record."""


@dataclass(frozen=True)
class RequestHints:
    """What a request record says about how its document was fetched."""

    dest: str | None
    """``Sec-Fetch-Dest``, lowercase."""
    mode: str | None
    """``Sec-Fetch-Mode``, lowercase."""
    referer: str | None

    @property
    def fetch_metadata(self) -> bool:
        """Did the browser send Sec-Fetch headers with it?"""
        return self.dest is not None or self.mode is not None

    @property
    def navigation(self) -> bool:
        """A top-level navigation: to a document, or in navigate mode with no destination named."""
        return self.dest == "document" or (self.dest is None and self.mode == "navigate")


@dataclass
class Navigations:
    """The facts the scan collects for telling pages from frames."""

    requests: dict[Place, RequestHints] = field(default_factory=dict)
    locations: dict[Place, str] = field(default_factory=dict)
    """The Location header of each 3xx response."""
    frames: set[tuple[str, str]] = field(default_factory=set)
    """(page URL, URL it names in an ``<iframe src>`` or ``<frame src>``)."""

    def fetch_metadata_files(self) -> set[str]:
        """The files whose requests carry Sec-Fetch headers: their browser sent them with every request."""
        return {file for (file, _), hints in self.requests.items() if hints.fetch_metadata}

    def hints(self, entry: IndexEntry) -> RequestHints | None:
        """The hints of ``entry``'s paired request, if it has one."""
        if entry.req_offset is None:
            return None
        return self.requests.get((entry.req_filename or entry.filename, entry.req_offset))


def request_hints(headers: list[tuple[str, str]]) -> RequestHints | None:
    """The hints in a request's HTTP headers; None when it carries none of them."""
    found = {n.lower(): v.strip() for n, v in reversed(headers)}  # the first of a repeated header wins
    dest, mode, referer = found.get("sec-fetch-dest"), found.get("sec-fetch-mode"), found.get("referer")
    if dest is None and mode is None and referer is None:
        return None
    return RequestHints(dest.lower() if dest else None, mode.lower() if mode else None, referer or None)


def frame_sources(url: str, headers: list[tuple[str, str]], payload: bytes) -> set[str]:
    """Absolute URLs (without fragment) that an HTML document names in ``<iframe src>`` or ``<frame src>``."""
    encoding = next((v for n, v in headers if n.lower() == "content-encoding"), None)
    body = decode_body(encoding, payload)
    found = set()
    for match in _FRAME_SRC.finditer(body or b""):
        src = html.unescape(next(g for g in match.groups() if g is not None).decode("latin-1")).strip()
        if src and not src.lower().startswith(("about:", "javascript:", "data:")):
            found.add(urldefrag(urljoin(url, src)).url)
    return found


def navigated(
    candidates: Sequence[IndexEntry],
    entries: Sequence[IndexEntry],
    facts: Navigations,
    find: Callable[[str], IndexEntry | None],
) -> list[IndexEntry]:
    """The candidates a browser navigated to, by their Sec-Fetch headers; empty if no file has any.

    A response whose request was a navigation counts, and so does the response its redirects end on; so
    does every candidate in a file without Sec-Fetch headers, which cannot tell.
    """
    sent = facts.fetch_metadata_files()
    if not sent:
        return []
    reached: set[int] = set()
    for entry in entries:
        hints = facts.hints(entry)
        if hints is not None and hints.navigation:
            reached.add(_redirected(entry, facts, find).seq)
    return [c for c in candidates if c.seq in reached or c.filename not in sent]


def not_framed(candidates: Sequence[IndexEntry], facts: Navigations) -> list[IndexEntry]:
    """The candidates no other candidate embeds as a frame: by Sec-Fetch-Dest, by ``<iframe src>``, and
    (in a file without Sec-Fetch headers) by a cross-host Referer naming a candidate."""
    sent = facts.fetch_metadata_files()
    urls = {c.url for c in candidates}
    framed = {inner for outer, inner in facts.frames if outer != inner and outer in urls}
    kept = []
    for c in candidates:
        hints = facts.hints(c)
        if c.url in framed or (hints is not None and hints.dest in FRAME_DESTINATIONS):
            continue
        by_referer = c.filename not in sent
        if by_referer and hints is not None and _embedded_by_referer(c.url, hints.referer, urls):
            continue
        kept.append(c)
    return kept


def _embedded_by_referer(url: str, referer: str | None, pages: set[str]) -> bool:
    if not referer or referer == url or referer not in pages:
        return False
    return (urlsplit(referer).hostname or "") != (urlsplit(url).hostname or "")


def _redirected(entry: IndexEntry, facts: Navigations, find: Callable[[str], IndexEntry | None]) -> IndexEntry:
    """Where archived 3xx ``Location`` hops from ``entry`` end (never in a loop)."""
    seen = {entry.seq}
    for _ in range(MAX_REDIRECTS):
        location = facts.locations.get((entry.filename, entry.offset))
        if entry.status is None or not 300 <= entry.status < 400 or not location:
            break
        target = find(urljoin(entry.url, location.strip()))
        if target is None or target.seq in seen:
            break
        seen.add(target.seq)
        entry = target
    return entry
