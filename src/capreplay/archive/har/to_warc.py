"""HAR entries -> one WARC: pure, and deterministic, so one HAR always gives the same bytes.

Every entry with a response body (or a response that has none by nature: a redirect, a 204, a 304, an
answer to HEAD) becomes a request record and a response record, one gzip member each, in the HAR's order,
which is then the capture order replay serves repeats in. The WARC starts with a ``warcinfo`` record that
says it was converted from a HAR (the HAR's file name, sha256 and writer); every record names it in
``WARC-Warcinfo-ID``, and every response record also carries ``WARC-Capreplay-Converted-From: har`` and
``WARC-Capreplay-Har-Entry`` (the entry's position in ``log.entries``). Record ids are derived from the
HAR's sha256 and the entry's position, dates from ``startedDateTime``.

What changes on the way, since a HAR keeps the decoded body and the headers as the server sent them:

- ``Content-Encoding`` is dropped (the body is decoded); the dropped header goes in
  ``WARC-Capreplay-Har-Removed`` as JSON; ``Content-Length`` becomes the body's length and
  ``Transfer-Encoding`` goes, as for any record capreplay writes;
- a header value holding line breaks (DevTools joins repeated ``Set-Cookie`` headers so) is one header
  per line;
- a redirect without a ``Location`` header gets one from ``redirectURL``;
- ``request.postData`` is the request record's body, so that replay's POST rules match on it;
- a body Playwright keeps in a file of its own (``_file``, its ``attach`` mode) is read from that file;
- a WebSocket handshake (status 101, ``ws://`` or ``https://`` URL alike) is written as an ``http(s)``
  request/response pair followed by the record of its ``_webSocketMessages``, and an event stream's response
  by the record of its events' times (see :mod:`capreplay.archive.har.live` for how times are read).

Entries left out, each listed with its reason: no response (status 0 or -1, ``_error``, ``_failureText``),
no body kept (no ``content.text`` and a size other than 0), a URL that is not ``http(s)`` with a host
(``data:``, ``blob:``, ``chrome-extension:``), a 1xx exchange other than a WebSocket handshake, a method
that is no HTTP token.
"""

from __future__ import annotations

import ipaddress
import json
import re
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from http import HTTPStatus
from pathlib import PurePosixPath
from urllib.parse import urljoin, urlsplit

from capreplay.archive.har.content import UTF8_WRITERS, BadContent, decode_text, header, post_bytes
from capreplay.archive.har.live import Live, is_websocket, live_of, live_record
from capreplay.archive.har.model import Entry, Har, NameValue
from capreplay.archive.importer.page_choice import ListedPage
from capreplay.archive.warc.build import exchange_records, format_warc_date, warcinfo_record
from capreplay.archive.warc.exchange import Exchange
from capreplay.archive.warc.live import http_url
from capreplay.errors import ArchiveError

CONVERSION_RULES = "2"
"""Version of the rules above, written in the warcinfo record; changed whenever a rule changes."""
CONVERTED_HEADER = "WARC-Capreplay-Converted-From"
ENTRY_HEADER = "WARC-Capreplay-Har-Entry"
REMOVED_HEADER = "WARC-Capreplay-Har-Removed"
_IDS = uuid.UUID("6c0b1c5e-7d1e-4b8e-9a55-2f3c9d1e8a70")
"""Namespace of the record ids (uuid5 of the HAR's sha256, the entry's position and the record's kind)."""
_URL_SHOWN = 120
_TOKEN = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
_BODILESS = frozenset({204, 205, 304})
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_VERSIONS = {"http/1.0": "HTTP/1.0", "h2": "HTTP/2.0", "http/2": "HTTP/2.0", "http/2.0": "HTTP/2.0",
             "h3": "HTTP/3.0", "http/3": "HTTP/3.0", "http/3.0": "HTTP/3.0"}  # fmt: skip


@dataclass(frozen=True)
class Skipped:
    """An entry left out of the WARC, and why."""

    position: int
    method: str
    url: str
    reason: str


@dataclass(frozen=True)
class Converted:
    """A HAR as one WARC, with the pages it lists and the entries left out."""

    warc: bytes
    """The whole ``.warc.gz``: the warcinfo record, then a request and a response record per entry."""
    responses: int
    pages: list[ListedPage]
    """The HAR's pages that could be placed: each one's URL and title."""
    skipped: list[Skipped]
    unplaced: list[str]
    """Ids of pages that name no URL (no entry of theirs was converted, and no URL in their title)."""
    websockets: int = 0
    """WebSocket connections converted, each with its messages record."""
    messages: int = 0
    """Their messages (close frames too)."""
    streams: int = 0
    """Event streams converted, each with its timeline record."""
    untimed: tuple[int, ...] = ()
    """Positions of event-stream entries whose events the HAR gives no times for (all at ts 0)."""
    messages_left_out: int = 0
    """WebSocket messages of other opcodes (ping, pong), left out."""


def har_to_warc(har: Har, *, name: str, sha256: str, attachments: Mapping[str, bytes] | None = None) -> Converted:
    """The WARC of ``har``, read from the file called ``name`` whose sha256 is ``sha256``; ``attachments``
    are the bodies its entries keep in files of their own, by ``_file`` name.

    Raises :class:`ArchiveError` (naming ``name``) for a body that cannot be decoded, or when no entry
    is left to replay.
    """
    utf8_text = har.log.creator.name.strip().lower() in UTF8_WRITERS
    files = attachments or {}
    kept: list[tuple[int, Exchange, Live | None]] = []
    skipped: list[Skipped] = []
    for position, entry in enumerate(har.log.entries):
        reason = _left_out(entry)
        body = None if reason else _body(entry, position, name, files, utf8_text=utf8_text)
        if reason or body is None:
            skipped.append(Skipped(position, entry.request.method, entry.request.url, reason or "no body kept"))
            continue
        try:
            live = live_of(entry, body)
        except BadContent as e:
            raise ArchiveError(f"log.entries[{position}] ({entry.request.url}) {e}", where=name) from e
        body = live.body if live is not None and live.body is not None else body
        kept.append((position, _exchange(entry, position, body, name, files), live))
    if not kept:
        raise ArchiveError(f"no entry of the HAR holds a response to replay ({_count(skipped)} left out: "
                           f"{_reasons(skipped)})", where=name)  # fmt: skip
    info_id = _record_id(sha256, 0, "warcinfo")
    started = min(ex.started for _, ex, _ in kept)
    out = [warcinfo_record(_info_fields(har, name, sha256), record_id=info_id, date=format_warc_date(started),
                           filename=warc_name(name))]  # fmt: skip
    for position, ex, live in kept:
        ids = (_record_id(sha256, position, "request"), _record_id(sha256, position, "response"))
        out.extend(exchange_records(ex, warcinfo_id=info_id, record_ids=ids))
        if live is not None:  # right after its response, where replay reads on to find it
            out.append(live_record(live, concurrent_to=ids[1], date=ex.started, warcinfo_id=info_id,
                                   record_id=_record_id(sha256, position, "live")))  # fmt: skip
    pages, unplaced = _pages(har, {position: ex.url for position, ex, _ in kept})
    sockets = [live.websocket for _, _, live in kept if live is not None and live.websocket is not None]
    streams = [(position, live) for position, _, live in kept if live is not None and live.timeline is not None]
    return Converted(
        b"".join(out), len(kept), pages, skipped, unplaced,
        websockets=len(sockets), messages=sum(len(log.messages) for log in sockets), streams=len(streams),
        untimed=tuple(position for position, live in streams if not live.timed),
        messages_left_out=sum(live.left_out for _, _, live in kept if live is not None),
    )  # fmt: skip


def warc_name(har_name: str) -> str:
    """The converted WARC's file name: the HAR's, ``.har`` replaced by ``.warc.gz``."""
    stem = PurePosixPath(har_name.replace("\\", "/")).name
    return (stem[:-4] if stem.lower().endswith(".har") else stem) + ".warc.gz"


def skipped_line(name: str, skipped: list[Skipped]) -> str:
    """The one warning line that lists every entry left out."""
    listed = "; ".join(f"#{s.position} {s.method} {_short(s.url)} ({s.reason})" for s in skipped)
    return f"{name}: {_count(skipped)} left out: {listed}"


def _short(url: str) -> str:
    """A URL cut to 120 characters: a ``data:`` URL can be a whole image."""
    return url if len(url) <= _URL_SHOWN else url[: _URL_SHOWN - 3] + "..."


def _count(skipped: list[Skipped]) -> str:
    return f"{len(skipped)} entr{'y' if len(skipped) == 1 else 'ies'}"


def _reasons(skipped: list[Skipped]) -> str:
    counts: dict[str, int] = {}
    for s in skipped:
        counts[s.reason] = counts.get(s.reason, 0) + 1
    return ", ".join(f"{reason}: {n}" for reason, n in counts.items()) or "the HAR has no entries"


def _left_out(entry: Entry) -> str | None:
    """Why ``entry`` cannot be replayed, or None."""
    response = entry.response
    error = response.extra("_error") or entry.extra("_error") or response.extra("_failureText")
    if response.status <= 0 or error:
        return f"no response: {error}" if isinstance(error, str) and error else "no response"
    if response.status < 200 and not is_websocket(entry):
        return f"status {response.status}"
    if response.status > 999:
        return f"status {response.status} is no HTTP status"
    if not _TOKEN.match(entry.request.method):
        return "not an HTTP method"
    try:
        parts = urlsplit(entry.request.url)
        parts.port  # noqa: B018  # raises for a port that is no number
    except ValueError:
        return "not a usable URL"
    schemes = ("http", "https", "ws", "wss") if is_websocket(entry) else ("http", "https")
    if parts.scheme.lower() not in schemes or not parts.hostname:
        return "not an http(s) URL"
    return None


def _body(entry: Entry, position: int, name: str, files: Mapping[str, bytes], *, utf8_text: bool) -> bytes | None:
    """The response body the entry stands for, None when the HAR kept none."""
    content = entry.response.content
    attached = content.extra("_file")
    if isinstance(attached, str) and attached in files:
        return files[attached]  # Playwright reads a _file before any text, and so does this
    headers = entry.response.headers
    if content.text is None or (content.text == "" and content.size > 0):
        status = entry.response.status
        bodiless = status in _BODILESS or status < 200 or entry.request.method.upper() == "HEAD"
        redirect = entry.response.status in _REDIRECTS
        return b"" if content.size == 0 or bodiless or redirect else None
    try:
        return decode_text(content.text, content.encoding, content_type=header(headers, "content-type"),
                           utf8_text=utf8_text)  # fmt: skip
    except BadContent as e:
        raise ArchiveError(f"log.entries[{position}].response.content.text ({entry.request.url}) {e}",
                           where=name) from e


def _exchange(entry: Entry, position: int, body: bytes, name: str, files: Mapping[str, bytes]) -> Exchange:
    request, response = entry.request, entry.response
    attached = request.postData.extra("_file") if request.postData else None
    try:
        if isinstance(attached, str) and attached in files:
            request_body = files[attached]
        else:
            request_body = post_bytes(request.postData) if request.postData else b""
    except BadContent as e:
        raise ArchiveError(f"log.entries[{position}].request.postData.text ({request.url}) {e}", where=name) from e
    headers = _lines(response.headers)
    removed = [(n, v) for n, v in headers if n.lower() == "content-encoding"]
    headers = [(n, v) for n, v in headers if n.lower() != "content-encoding"]
    if response.status in _REDIRECTS and response.redirectURL and header(headers, "location") is None:
        headers.append(("Location", urljoin(request.url, response.redirectURL)))
    version = _VERSIONS.get((response.httpVersion or request.httpVersion).strip().lower(), "HTTP/1.1")
    extra = {CONVERTED_HEADER: "har", ENTRY_HEADER: str(position)}
    if removed:
        extra[REMOVED_HEADER] = json.dumps([list(pair) for pair in removed], separators=(",", ":"))
    return Exchange(
        url=http_url(request.url.split("#", 1)[0]),
        method=request.method,
        request_headers=_lines(request.headers),
        request_body=request_body,
        http_version=version,
        status=response.status,
        reason=_reason(response.statusText, response.status, version),
        response_headers=headers,
        response_body=body,
        started=_utc(entry.startedDateTime),
        server_ip=_ip(entry.serverIPAddress),
        extra=extra,
    )


def _lines(headers: list[NameValue]) -> list[tuple[str, str]]:
    """Headers as (name, value), a value with line breaks split into one header per line."""
    out: list[tuple[str, str]] = []
    for h in headers:
        name = h.name.strip()
        if not name or "\n" in name or "\r" in name:
            continue  # no HTTP message can carry it; nothing a server sent
        lines = h.value.replace("\r", "\n").split("\n")
        # an empty value is a value (``X-Frame-Options:``); only the pieces of a joined one can be dropped
        out.extend((name, line.strip()) for line in lines if line.strip() or len(lines) == 1)
    return out


def _reason(text: str, status: int, version: str) -> str:
    text = " ".join(text.split())
    if text or version != "HTTP/1.1":
        return text  # HTTP/2 and /3 have none; the WARC writer puts the standard phrase on the line
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return ""


def _ip(value: str | None) -> str | None:
    """A bare IP address (DevTools writes ``[::1]``), None for anything else."""
    if not value:
        return None
    try:
        return str(ipaddress.ip_address(value.strip().strip("[]")))
    except ValueError:
        return None


def _utc(when: datetime) -> datetime:
    return when.replace(tzinfo=UTC) if when.tzinfo is None else when.astimezone(UTC)


def _record_id(sha256: str, position: int, kind: str) -> str:
    return f"<urn:uuid:{uuid.uuid5(_IDS, f'{sha256}/{position}/{kind}')}>"


def _info_fields(har: Har, name: str, sha256: str) -> dict[str, str]:
    creator = _one_line(f"{har.log.creator.name} {har.log.creator.version}") or "an unnamed tool"
    fields = {
        "software": f"{creator} (HAR {_one_line(har.log.version)})",
        "format": "WARC File Format 1.1",
        "converted-from": "har",
        "har-file": _one_line(PurePosixPath(name.replace("\\", "/")).name),
        "har-sha256": sha256,
        "conversion": f"capreplay har-to-warc rules {CONVERSION_RULES}",
    }
    if har.log.browser is not None:
        fields["har-browser"] = _one_line(f"{har.log.browser.name} {har.log.browser.version}")
    return fields


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _pages(har: Har, urls: dict[int, str]) -> tuple[list[ListedPage], list[str]]:
    """Each HAR page as a listed page: its ``_url`` (capreplay's own HAR), else its first converted entry
    (a document first, where entries say their ``_resourceType``), else its title if that is a URL
    (Chrome DevTools titles pages so)."""
    first: dict[str, str] = {}
    first_document: dict[str, str] = {}
    for position, url in urls.items():
        entry = har.log.entries[position]
        if entry.pageref is None:
            continue
        first.setdefault(entry.pageref, url)
        kind = entry.extra("_resourceType")
        if isinstance(kind, str) and kind.lower() == "document":
            first_document.setdefault(entry.pageref, url)
    pages: list[ListedPage] = []
    unplaced: list[str] = []
    for page in har.log.pages:
        own = page.extra("_url")
        where = own if isinstance(own, str) and _is_web_url(own) else first_document.get(page.id) or first.get(page.id)
        if where is None and _is_web_url(page.title.strip()):
            where = page.title.strip()
        if where is None:
            unplaced.append(page.id)
        else:
            pages.append(ListedPage(where, page.title or None))
    return pages, unplaced


def _is_web_url(value: str) -> bool:
    return value.lower().startswith(("http://", "https://")) and " " not in value
