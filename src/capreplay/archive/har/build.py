"""Archived exchanges -> a HAR 1.2 that Playwright's ``route_from_har`` replays. Pure functions.

``route_from_har`` answers a request with the first entry of the same URL (compared as exact strings, the
URL as Chromium writes it) and method, and for a POST with a body, the same body; among several, the one
whose request headers match most of the browser's, ties to the first. It sends the entry's status,
headers and body as they are. So each entry holds:

- the URL in the form Chromium asks for it: scheme and host lower-case, the default port left out, ``/``
  for an empty path, no fragment (the archive's own URLs are almost always so already);
- the request headers and body of the archived request (base64 with ``encoding: "base64"``, which
  Playwright reads, for a body that is not UTF-8), so POSTs match on their body;
- the response body decoded: an archived body with a Content-Encoding capreplay can undo (gzip,
  deflate, br) is stored decoded and the header left out, since HAR content is decoded by definition and
  ``route_from_har`` sends the body as it is (Chromium 156 happens to ignore a Content-Encoding header on
  a fulfilled response, so the encoded bytes would reach the page undecoded); a coding capreplay cannot
  undo is kept with its header, as replay sends it;
- the headers replay sends, with ``Content-Length`` the stored body's length and no hop-by-hop headers;
- ``text`` for a textual body that reads back to the same bytes, else base64 (see
  :func:`capreplay.archive.har.content.content_of`).

Entries come in capture order, which is the order replay serves repeats of one URL in; each page's own
entry carries its ``pageref``, and each page its URL in the capreplay field ``_url`` (HAR pages have no
URL of their own), which ``capreplay import`` reads back. A WebSocket handshake's entry carries its messages
in Chrome's ``_webSocketMessages``, and an event stream's entry its events' times in
``_eventSourceMessages`` (see :mod:`capreplay.archive.har.live`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from capreplay.archive.har.content import content_of, header, post_data_of
from capreplay.archive.har.model import Creator, Entry, Har, Log, NameValue, Page, Request, Response
from capreplay.archive.warc.exchange import Exchange
from capreplay.archive.warc.http import decode_body
from capreplay.models.manifest import PageEntry

HOP_BY_HOP = frozenset({
    "connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "proxy-connection", "te",
    "trailer", "trailers", "transfer-encoding", "upgrade", "content-length",
})  # fmt: skip
"""Response headers left out: they describe one connection, and Content-Length is written anew."""
_DEFAULT_PORTS = {"http": ":80", "https": ":443"}
_HTTP_VERSIONS = {"HTTP/2.0": "HTTP/2.0", "HTTP/3.0": "HTTP/3.0", "HTTP/1.0": "HTTP/1.0"}


@dataclass(frozen=True)
class BuiltHar:
    """A HAR and what it could not hold as HAR content should be held."""

    har: Har
    still_encoded: list[str]
    """URLs of bodies kept with a Content-Encoding that could not be undone (unknown or broken)."""


def build_har(
    exchanges: list[Exchange],
    pages: list[tuple[PageEntry, int | None]],
    *,
    creator: Creator,
    comment: str | None = None,
    fields: Mapping[int, dict[str, Any]] | None = None,
) -> BuiltHar:
    """The HAR of ``exchanges`` (in capture order); ``pages`` are the snapshot's pages, each with the
    position in ``exchanges`` of its own response (None if it has none); ``fields`` are further entry
    fields (``_webSocketMessages``, ...) by position."""
    entries: list[Entry] = []
    still_encoded: list[str] = []
    for at, ex in enumerate(exchanges):
        entry, decoded = har_entry(ex)
        if fields and at in fields:
            entry = Entry.model_validate({**entry.model_dump(exclude_none=True), **fields[at]})
        entries.append(entry)
        if not decoded:
            still_encoded.append(ex.url)
    har_pages = []
    for number, (page, position) in enumerate(pages):
        page_id = f"page_{number}"
        har_pages.append(Page.model_validate({
            "startedDateTime": page.captured_at, "id": page_id, "title": page.title,
            "pageTimings": {"onContentLoad": -1, "onLoad": -1}, "_url": page.url,
        }))  # fmt: skip
        if position is not None and entries[position].pageref is None:
            entries[position].pageref = page_id
    log = Log(creator=creator, pages=har_pages, entries=entries, comment=comment)
    return BuiltHar(Har(log=log), still_encoded)


def har_entry(ex: Exchange) -> tuple[Entry, bool]:
    """One exchange as a HAR entry, and False if its body had to stay content-encoded."""
    body, headers, decoded = _decoded(ex.response_headers, ex.response_body)
    if body:
        headers.append(("Content-Length", str(len(body))))
    url = browser_url(ex.url)
    version = _HTTP_VERSIONS.get(ex.http_version, "HTTP/1.1")
    request = Request(
        method=ex.method,
        url=url,
        httpVersion=version,
        headers=[NameValue(name=n, value=v) for n, v in ex.request_headers],
        queryString=[NameValue(name=n, value=v) for n, v in parse_qsl(urlsplit(url).query, keep_blank_values=True)],
        postData=post_data_of(ex.request_body, header(ex.request_headers, "content-type"))
        if ex.request_body else None,
        bodySize=len(ex.request_body),
    )  # fmt: skip
    response = Response(
        status=ex.status,
        statusText=ex.reason,
        httpVersion=version,
        headers=[NameValue(name=n, value=v) for n, v in headers],
        content=content_of(body, header(headers, "content-type")),
        redirectURL=header(headers, "location") or "",
        bodySize=len(ex.response_body),
    )
    started = ex.started.replace(tzinfo=UTC) if ex.started.tzinfo is None else ex.started.astimezone(UTC)
    return Entry(startedDateTime=started, request=request, response=response), decoded


def _decoded(headers: list[tuple[str, str]], payload: bytes) -> tuple[bytes, list[tuple[str, str]], bool]:
    """The body with its Content-Encoding undone, the headers to send with it, and whether that worked."""
    kept = [(n, v) for n, v in headers if n.lower() not in HOP_BY_HOP]
    coding = header(kept, "content-encoding")
    if coding is None or not coding.strip() or coding.strip().lower() == "identity":
        return payload, [(n, v) for n, v in kept if n.lower() != "content-encoding"], True
    plain = decode_body(coding, payload)
    if plain is None:
        return payload, kept, False
    return plain, [(n, v) for n, v in kept if n.lower() != "content-encoding"], True


def browser_url(url: str) -> str:
    """``url`` as Chromium writes a request's URL: scheme and host lower-case, no default port, ``/`` for an
    empty path, no fragment. Path and query are left as they are."""
    url = url.split("#", 1)[0]
    scheme, sep, rest = url.partition("://")
    if not sep:
        return url
    scheme = scheme.lower()
    cut = min((i for i in (rest.find("/"), rest.find("?")) if i >= 0), default=len(rest))
    authority, tail = rest[:cut].lower(), rest[cut:]
    default = _DEFAULT_PORTS.get(scheme)
    if default and authority.endswith(default):
        authority = authority[: -len(default)]
    return f"{scheme}://{authority}{tail if tail.startswith('/') else '/' + tail}"


def har_json(har: Har) -> bytes:
    """The HAR file's bytes: UTF-8 JSON, one space of indent, keys in the model's order, a final newline."""
    data = har.model_dump(mode="json", exclude_none=True)
    return (json.dumps(data, indent=1, ensure_ascii=False) + "\n").encode("utf-8")
