"""Which archived responses are an imported snapshot's pages, and their titles. Pure functions.

Pages come from the first of these that gives any: the ``--page`` URLs; the pages list of the WACZ inputs;
the ``pages`` of Webrecorder's ``json-metadata`` in warcinfo records; then, among the ``200`` HTML
responses, the top-level navigations by their requests' Sec-Fetch headers; the responses marked
``WARC-Resource-Type: document`` (Browsertrix); else every one, since without a record of the crawl's
navigations any HTML document may have been one. From these three, documents that another page embeds as
a frame are left out (see :mod:`capreplay.archive.importer.navigations`). A listed URL is looked up by its SURT key
(so ``http://example.com`` finds ``http://example.com/``), preferring the exact URL, then the same scheme.
"""

from __future__ import annotations

import codecs
import html
import json
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from urllib.parse import urljoin

from capreplay.archive.importer.navigations import Navigations, navigated, not_framed
from capreplay.archive.index.cdxj import IndexEntry
from capreplay.archive.index.keys import surt
from capreplay.archive.warc.http import MAX_REDIRECTS, decode_body

HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
_HEAD_BYTES = 256 * 1024  # a <title> sits in the head; decoding more of a large page would buy nothing
_TITLE = re.compile(rb"<title\b[^>]*>(.*?)</title\s*>", re.IGNORECASE | re.DOTALL)
_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.IGNORECASE)


@dataclass(frozen=True)
class ListedPage:
    """A page URL some input lists (a WACZ pages list, warcinfo metadata, ``--page``)."""

    url: str
    title: str | None = None


@dataclass(frozen=True)
class Document:
    """What a page's response holds, read by offset (a revisit's payload comes from its original)."""

    status: int | None
    headers: list[tuple[str, str]]
    payload: bytes
    date: str
    """The response's WARC-Date."""


class Lookup:
    """Index entries by SURT key, for finding a listed URL or a redirect's target."""

    def __init__(self, entries: Iterable[IndexEntry]) -> None:
        self._by_key: dict[str, list[IndexEntry]] = defaultdict(list)
        for entry in entries:
            if entry.method in ("GET", "HEAD") and not entry.unresolved_revisit:
                self._by_key[entry.urlkey].append(entry)

    def find(self, url: str) -> IndexEntry | None:
        """The archived GET response for ``url``: the exact URL first, then the same scheme, then any."""
        found = sorted(self._by_key.get(surt(url), []), key=lambda e: e.seq)
        if not found:
            return None
        scheme = url.split(":", 1)[0].lower()
        exact = [e for e in found if e.url == url]
        same_scheme = [e for e in found if e.url.split(":", 1)[0].lower() == scheme]
        return (exact or same_scheme or found)[0]


def is_html_page(entry: IndexEntry) -> bool:
    """A 200 HTML response (or resolved revisit of one): what a top-level navigation ends on."""
    return entry.status == 200 and entry.mime in HTML_TYPES and not entry.unresolved_revisit


def page_candidates(
    entries: Sequence[IndexEntry], documents: set[tuple[str, int]], facts: Navigations, lookup: Lookup
) -> list[tuple[str, IndexEntry]]:
    """(URL, entry) of the pages among the 200 HTML responses, in capture order, each URL once.

    The navigations by Sec-Fetch headers if the input holds any, else those marked as documents
    (``documents``: their (file, offset)), else all of them; framed documents left out of each.
    """
    ordered = sorted(entries, key=lambda e: e.seq)
    html_pages = [e for e in ordered if is_html_page(e)]
    marked = [e for e in html_pages if (e.filename, e.offset) in documents]
    for chosen in (navigated(html_pages, ordered, facts, lookup.find), marked, html_pages):
        pages = not_framed(chosen, facts)
        if pages:
            return _first_per_url(pages)
    return _first_per_url(html_pages)  # every one framed by another: the frames can tell no page apart


def _first_per_url(entries: Sequence[IndexEntry]) -> list[tuple[str, IndexEntry]]:
    first: dict[str, IndexEntry] = {}
    for entry in entries:
        first.setdefault(entry.url, entry)
    return list(first.items())


def listed_pages(lookup: Lookup, listed: Sequence[ListedPage]) -> tuple[list[tuple[str, IndexEntry]], list[str]]:
    """(URL, entry) for each listed page the archive holds, each URL once; and the listed URLs it lacks."""
    found: dict[str, IndexEntry] = {}
    missing: list[str] = []
    for page in listed:
        entry = lookup.find(page.url)
        if entry is None:
            missing.append(page.url)
        elif page.url not in found:
            found[page.url] = entry
    return list(found.items()), missing


def warcinfo_pages(block: bytes) -> tuple[list[ListedPage], str | None]:
    """The pages a warcinfo's ``json-metadata`` field lists (Webrecorder), and a problem with it, if any."""
    for line in block.splitlines():
        name, sep, value = line.partition(b":")
        if not sep or name.strip().lower() != b"json-metadata":
            continue
        try:
            meta = json.loads(value)
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            return [], f"warcinfo json-metadata is not valid JSON ({e}); its pages are not used"
        raw = meta.get("pages") if isinstance(meta, dict) else None
        pages = [
            ListedPage(p["url"], p.get("title") if isinstance(p.get("title"), str) else None)
            for p in (raw if isinstance(raw, list) else [])
            if isinstance(p, dict) and isinstance(p.get("url"), str)
        ]
        return pages, None
    return [], None


def warcinfo_software(block: bytes) -> list[str]:
    """The ``software`` fields of a warcinfo record's ``application/warc-fields`` block."""
    found = []
    for line in block.splitlines():
        name, sep, value = line.partition(b":")
        if sep and name.strip().lower() == b"software":
            found.append(value.strip().decode("utf-8", "replace"))
    return found


def follow_redirects(
    entry: IndexEntry, lookup: Lookup, fetch: Callable[[IndexEntry], Document]
) -> tuple[IndexEntry, Document]:
    """Where a navigation to ``entry`` ends in the archive: through archived 3xx ``Location`` hops."""
    doc = fetch(entry)
    for _ in range(MAX_REDIRECTS):
        location = header(doc.headers, "location")
        if doc.status is None or not 300 <= doc.status < 400 or not location:
            break
        target = lookup.find(urljoin(entry.url, location.strip()))
        if target is None or target.seq == entry.seq:
            break
        entry, doc = target, fetch(target)
    return entry, doc


def html_title(headers: list[tuple[str, str]], payload: bytes) -> str:
    """The text of the document's ``<title>``, its Content-Encoding undone; empty when there is none."""
    body = decode_content(header(headers, "content-encoding"), payload)
    if body is None:
        return ""
    match = _TITLE.search(body)
    if match is None:
        return ""
    text = match.group(1).decode(_charset(header(headers, "content-type"), body), "replace")
    return " ".join(html.unescape(text).split())


def decode_content(encoding: str | None, payload: bytes) -> bytes | None:
    """The start (up to 256 KiB) of ``payload`` with its Content-Encoding undone; None if it cannot be."""
    return decode_body(encoding, payload, _HEAD_BYTES)


def _charset(content_type: str | None, body: bytes) -> str:
    """The charset from Content-Type, else a ``<meta charset>``, else UTF-8; unknown names fall back too."""
    found = None
    for part in (content_type or "").split(";")[1:]:
        name, _, value = part.partition("=")
        if name.strip().lower() == "charset":
            found = value.strip().strip("\"'")
    if not found:
        meta = _META_CHARSET.search(body[:4096])
        found = meta.group(1).decode("ascii") if meta else None
    return found if found and _known(found) else "utf-8"


def _known(charset: str) -> bool:
    try:
        codecs.lookup(charset)
    except LookupError:
        return False
    return True


def header(headers: list[tuple[str, str]], name: str) -> str | None:
    """The first header called ``name`` (case-insensitive), or None."""
    lower = name.lower()
    return next((v for n, v in headers if n.lower() == lower), None)
