"""Why a replay missed a URL that the archive holds in some form: the one difference between the request and
the nearest archived URL. Pure; used by the fidelity benchmark to name each shortfall.

The reasons, in the order they are tried (the first that explains the difference wins):

- ``exact-url-archived``: the archive holds this very URL, so the miss is the server's;
- ``scheme``: archived under the other scheme (an HSTS upgrade, mixed content upgraded by Chromium);
- ``host-form``: the host differs in letter case, a default port or a trailing dot;
- ``percent-encoding``: equal once percent-escapes are decoded (``%2C`` and ``,``, ``%2c`` and ``%2C``);
- ``plus-or-space``: equal once ``+`` and ``%20`` in the query are read as the same space;
- ``query-order``: the same query arguments in another order;
- ``empty-query-or-fragment``: a trailing ``?`` or a ``#fragment``;
- ``timestamped-query``: same path, arguments differ in values that look like times or random ids;
- ``other-query``: same path, other query values;
- ``www``: the same path on the host with or without ``www.``;
- None: nothing archived is that close.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import parse_qsl, unquote, urlsplit

_DEFAULT_PORTS = {"http": 80, "https": 443}
# Query values that change on every load: epoch seconds or milliseconds, long hex or base-36 ids.
_VOLATILE_VALUE = re.compile(r"^(\d{9,}|[0-9a-f]{12,}|\d+\.\d+|[0-9a-z_]*\d{9,}[0-9a-z_]*)$", re.IGNORECASE)
_VOLATILE_NAME = re.compile(r"(time|stamp|^t$|^ts$|^_$|rand|^r$|^rnd$|nonce|cb|callback|^ei$|^zx$|^v$)",
                            re.IGNORECASE)  # fmt: skip


@dataclass(frozen=True)
class MissReason:
    """The difference that explains a miss, and the archived URL it was measured against."""

    reason: str
    nearest: str


@dataclass(frozen=True)
class _Parts:
    scheme: str
    host: str
    port: int | None
    path: str
    query: str
    fragment: str
    has_question_mark: bool


def _parts(url: str) -> _Parts | None:
    try:
        split = urlsplit(url)
        port = split.port
    except ValueError:
        return None
    scheme = split.scheme.lower()
    return _Parts(scheme, (split.hostname or "").rstrip("."), port, split.path or "/", split.query, split.fragment,
                  "?" in url.split("#", 1)[0])  # fmt: skip


def _host_key(p: _Parts) -> tuple[str, int]:
    return p.host.lower(), p.port or _DEFAULT_PORTS.get(p.scheme, 0)


def _decoded(text: str) -> str:
    return unquote(text)


def _args(query: str) -> list[tuple[str, str]]:
    return parse_qsl(query, keep_blank_values=True)


def _volatile(request: str, archived: str) -> bool:
    """True when every argument that differs looks like a time, a counter or a random id."""
    asked, held = dict(_args(request)), dict(_args(archived))
    if set(asked) != set(held):
        return False
    changed = [name for name in asked if asked[name] != held[name]]
    return bool(changed) and all(
        _VOLATILE_NAME.search(name) or _VOLATILE_VALUE.match(asked[name]) for name in changed
    )


def _compare(asked: _Parts, held: _Parts) -> str | None:
    """The reason ``held`` explains a miss of ``asked``, when both name the same host and path."""
    if asked.path == held.path and asked.query == held.query:
        if asked.scheme != held.scheme:
            return "scheme"
        if asked.host != held.host or asked.port != held.port:
            return "host-form"
        return "empty-query-or-fragment"
    if _decoded(asked.path) == _decoded(held.path) and _decoded(asked.query) == _decoded(held.query):
        return "percent-encoding"
    if _decoded(asked.query.replace("+", " ")) == _decoded(held.query.replace("+", " ")):
        return "plus-or-space" if _decoded(asked.path) == _decoded(held.path) else None
    if _decoded(asked.path) != _decoded(held.path):
        return None
    if sorted(_args(asked.query)) == sorted(_args(held.query)):
        return "query-order"
    if _volatile(asked.query, held.query):
        return "timestamped-query"
    return "other-query"


_ORDER = ("scheme", "host-form", "empty-query-or-fragment", "percent-encoding", "plus-or-space", "query-order",
          "timestamped-query", "other-query")  # fmt: skip


def miss_reason(url: str, archived: Iterable[str]) -> MissReason | None:
    """Why a request for ``url`` may have found nothing, measured against the archived URLs; None if none is close."""
    asked = _parts(url)
    if asked is None:
        return None
    best: tuple[int, str, str] | None = None
    www: str | None = None
    for candidate in archived:
        if candidate == url:
            return MissReason("exact-url-archived", candidate)
        held = _parts(candidate)
        if held is None:
            continue
        if _host_key(asked)[0] != _host_key(held)[0]:
            if www is None and asked.host.lower().removeprefix("www.") == held.host.lower().removeprefix("www.") \
                    and _decoded(asked.path) == _decoded(held.path):
                www = candidate
            continue
        if _host_key(asked) != _host_key(held) and asked.scheme == held.scheme:
            continue  # another port of the same host is another origin
        reason = _compare(asked, held)
        if reason is not None and (best is None or _ORDER.index(reason) < best[0]):
            best = (_ORDER.index(reason), reason, candidate)
    if best is not None:
        return MissReason(best[1], best[2])
    return MissReason("www", www) if www is not None else None
