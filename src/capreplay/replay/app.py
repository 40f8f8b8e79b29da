"""The aiohttp application that answers every request from the snapshot, and logs how it matched."""

from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass
from typing import Literal

from aiohttp import web
from multidict import CIMultiDict

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


STORE = web.AppKey("store", SnapshotStore)
SERVED = web.AppKey("served", list[Served])
KEEP_LOG = web.AppKey("keep_log", bool)


def _note(request: web.Request, served: Served) -> None:
    # A long-running server must not grow with every request: only bounded sessions (verify, open,
    # tests, agent runs that take their episode's records out) keep the log. Misses are logged through
    # ``logging`` either way.
    if request.app[KEEP_LOG]:
        sockname = request.transport.get_extra_info("sockname") if request.transport else None
        port = int(sockname[1]) if sockname else 0
        request.app[SERVED].append(dataclasses.replace(served, port=port))


def request_url(request: web.Request) -> str:
    """The absolute URL the browser asked for: its scheme, its ``Host`` header, the raw path and query."""
    scheme = "https" if request.secure else "http"
    return f"{scheme}://{request.host}{request.raw_path}"


async def handle(request: web.Request) -> web.StreamResponse:
    """Answer from the archive: exact match, then fuzzy rules, else a 404 that names the nearest URL."""
    store = request.app[STORE]
    url = request_url(request)
    body = await request.read() if request.can_read_body else None
    match = store.matcher.match(request.method, url, body)
    if match is None:
        nearest = store.matcher.nearest(request.method, url)
        out = miss_page(url, nearest, store.snapshot_id)
        log.warning("miss %s %s (nearest: %s)", request.method, url, nearest)
        archived = store.matcher.holds(request.method, url)
        _note(request, Served(request.method, url, "miss", None, nearest, out.status, archived))
        return _send(out)
    try:
        out = store.response(match.candidate.ref)  # type: ignore[arg-type]
    except ArchiveError as e:
        # A record that cannot be read is as good as missing; verify must count it, not lose it.
        log.error("unreadable record for %s %s: %s", request.method, url, e.line())
        _note(request, Served(request.method, url, "miss", "unreadable-record", None, 502))
        return _send(Outgoing(502, "Bad Gateway", [("Content-Type", "text/plain")], e.line().encode()))
    if match.jsonp is not None:
        out = _rewrite_jsonp(out, *match.jsonp)
    range_value = request.headers.get("Range")
    if range_value:
        ranged = serve_range(out, range_value)
        if ranged is not None:
            out = ranged
    result: Result = "hit" if match.rule is None else "fuzzy"
    # A fuzzy answer names the archived URL that gave it, so a log shows what stood in for what.
    answered_by = None if match.rule is None else match.candidate.url
    _note(request, Served(request.method, url, result, match.rule, answered_by, out.status))
    return _send(out)


def _rewrite_jsonp(out: Outgoing, old: str, new: str) -> Outgoing:
    # The callback name sits in the body; an encoded body is left as archived rather than re-encoded.
    if header(out.headers, "content-encoding") not in (None, "identity"):
        return out
    return Outgoing(out.status, out.reason, out.headers, rewrite_jsonp(out.body, old, new))


def _send(out: Outgoing) -> web.Response:
    headers: CIMultiDict[str] = CIMultiDict(out.headers)
    response = web.Response(status=out.status, reason=out.reason or None, headers=headers, body=out.body)
    return response


def make_app(store: SnapshotStore, *, keep_log: bool = True) -> web.Application:
    """The replay application for ``store``: one catch-all route; ``keep_log`` keeps every Served record."""
    app = web.Application(client_max_size=64 * 1024 * 1024)
    app[STORE] = store
    app[SERVED] = []
    app[KEEP_LOG] = keep_log
    app.router.add_route("*", "/{tail:.*}", handle)
    return app
