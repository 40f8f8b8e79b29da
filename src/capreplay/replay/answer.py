"""What replay answers to one request, whichever server received it: the response and the log entry.

The aiohttp replay server and the HTTP(S) proxy both call :func:`answer`, so a request gets the same
bytes and the same :class:`Served` record from either: exact match, then the fuzzy rules, the JSONP
callback renamed, a ``Range`` cut, else the miss page naming the nearest archived URL.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Literal

from capreplay.errors import ArchiveError
from capreplay.replay.matching import rewrite_jsonp
from capreplay.replay.response import Outgoing, header, miss_page, serve_range
from capreplay.replay.store import SnapshotStore

log = logging.getLogger("capreplay.replay")

Result = Literal["hit", "fuzzy", "miss"]


@dataclass(frozen=True)
class Served:
    """One request the server answered, for ``verify`` and the miss log."""

    method: str
    url: str
    result: Result
    rule: str | None
    nearest: str | None
    """For a miss, the archived URL most like the request; for a fuzzy match, the archived URL served."""
    status: int
    archived: bool = True
    """Whether the archive holds the URL in some form (see :meth:`Matcher.holds`); False only for a miss."""
    port: int = 0
    """The server port the request came in on: tells apart browsers that share one server (see ``listen``)."""
    seq: int | None = field(default=None, compare=False)
    """The capture order of the record answered with (None for a miss, or where not looked up): the order
    the server completes one page's responses in (:mod:`capreplay.replay.page_order`)."""


def answer(
    store: SnapshotStore,
    method: str,
    url: str,
    body: bytes | None,
    range_value: str | None = None,
    *,
    beacon: bool = False,
    browser: int = 0,
) -> tuple[Outgoing, Served]:
    """The response to ``method url`` (with request ``body`` and ``Range`` header value) and its log entry;
    ``beacon``: no script reads the response (:func:`capreplay.replay.nearest.is_beacon` of its headers);
    ``browser``: who asked, for the repeat rule (:meth:`Matcher.match`).

    Misses, unreadable records and fuzzy answers (with the archived request that gave them) are logged
    through ``logging`` here, so every server reports them alike.
    """
    match = store.matcher.match(method, url, body, beacon=beacon, browser=browser)
    if match is None:
        nearest = store.matcher.nearest(method, url)
        out = miss_page(url, nearest, store.snapshot_id)
        log.warning("miss %s %s (nearest: %s)", method, url, nearest)
        archived = store.matcher.holds(method, url)
        return out, Served(method, url, "miss", None, nearest, out.status, archived)
    try:
        out = store.response(match.candidate.ref)  # type: ignore[arg-type]
    except ArchiveError as e:
        # A record that cannot be read is as good as missing; verify must count it, not lose it.
        log.error("unreadable record for %s %s: %s", method, url, e.line())
        out = Outgoing(502, "Bad Gateway", [("Content-Type", "text/plain")], e.line().encode())
        return out, Served(method, url, "miss", "unreadable-record", None, 502)
    if match.jsonp is not None:
        out = _rewrite_jsonp(out, *match.jsonp)
    if range_value:
        ranged = serve_range(out, range_value)
        if ranged is not None:
            out = ranged
    result: Result = "hit" if match.rule is None else "fuzzy"
    # A fuzzy answer names the archived URL that gave it, so a log shows what stood in for what.
    answered_by = None if match.rule is None else match.candidate.url
    if match.rule is not None:
        log.info("fuzzy %s %s (%s): answered by the archived %s %s", method, url, match.rule,
                 match.candidate.method, match.candidate.url)  # fmt: skip
    return out, Served(method, url, result, match.rule, answered_by, out.status, seq=match.candidate.seq)


def _rewrite_jsonp(out: Outgoing, old: str, new: str) -> Outgoing:
    # The callback name sits in the body; an encoded body is left as archived rather than re-encoded.
    if header(out.headers, "content-encoding") not in (None, "identity"):
        return out
    return Outgoing(out.status, out.reason, out.headers, rewrite_jsonp(out.body, old, new))
