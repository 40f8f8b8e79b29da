"""Request matching: which archived exchange answers a request the browser makes during replay.

In the spirit of mitmproxy's server-replay ``_hash(flow)`` and the fuzzy matching of Web Page Replay and
pywb: an exact key first, then the :data:`FUZZY_RULES` from strictest to loosest.

No rule changes a URL's host or path (they relax the query, the scheme and the body), so every candidate a
rule can pick for a request shares the request's :func:`bucket_key`. The matcher asks its
:class:`CandidateSource` for that one bucket (a range lookup in the sorted index of a large archive, a dict
for a list) and indexes only it, under every rule, keeping the most recently used buckets. Start-up costs
nothing per archived record, and a lookup costs one dict access per rule however large the archive is.
"""

from __future__ import annotations

import bisect
import re
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Protocol

from capreplay.archive.index.keys import surt
from capreplay.replay.bodies import shared_prefix
from capreplay.replay.nearest import BEACON_GET, NEAREST_BODY, beacon_get, nearest_body
from capreplay.replay.rules import (
    FUZZY_RULES,
    IDENTITY_RULES,
    NEAREST_QUERY,
    KeyFn,
    Rule,
    exact_key,
    normalize_url,
    query_distance,
    request_method,
    same_path,
    url_forms,
)

__all__ = [
    "BEACON_GET",
    "FUZZY_RULES",
    "IDENTITY_RULES",
    "NEAREST_BODY",
    "NEAREST_QUERY",
    "Candidate",
    "CandidateSource",
    "Match",
    "Matcher",
    "Rule",
    "bucket_key",
    "exact_key",
    "normalize_url",
    "rewrite_jsonp",
]


@dataclass(frozen=True)
class Candidate:
    """An archived request that can answer replayed ones."""

    method: str
    """Upper-case method."""
    url: str
    """Absolute URL as archived."""
    body: bytes | None
    """Request body for POST, PUT, ...; None or empty for GET."""
    seq: int
    """Capture order: lower is earlier."""
    ref: object = field(default=None, compare=False)
    """Opaque payload for the caller (an index entry); not part of equality or hash."""
    not_modified: bool = field(default=False, compare=False)
    """The recording is a ``304 Not Modified``: the capture's browser revalidated what it had cached."""


@dataclass(frozen=True)
class Match:
    """The candidate chosen for a request, and how it was chosen."""

    candidate: Candidate
    rule: str | None
    """None for an exact match, else the name of the fuzzy rule that matched."""
    jsonp: tuple[str, str] | None
    """(archived callback, requested callback) when they differ, for :func:`rewrite_jsonp`."""


@dataclass(frozen=True, slots=True)
class _Bucket:
    tails: list[str]  # sorted, so the longest common prefix is next to the bisect point
    urls: dict[str, str]  # tail -> the earliest archived URL with it


_TIE_SCAN = 256  # how many URLs sharing the best prefix `nearest` looks through for the shortest
_KEPT = 4096  # looked-up keys and buckets kept indexed; the rest are looked up again when asked for


def bucket_key(url: str) -> str:
    """The part of a URL's SURT key before its query: host (without ``www``) and path, lower-case.

    Two URLs that any matching rule takes as one have the same bucket key, because :func:`surt` is computed
    from the canonical URL and no rule relaxes the host or the path.
    """
    return surt(url).split("?", 1)[0]


class CandidateSource(Protocol):
    """Where a :class:`Matcher` finds candidates: by bucket, or all of them (only for :meth:`Matcher.nearest`)."""

    def bucket(self, key: str) -> list[Candidate]:
        """Every candidate whose :func:`bucket_key` is ``key`` (a few more do no harm)."""
        ...

    def exact(self, urlkey: str) -> list[Candidate]:
        """Every candidate whose URL's :func:`surt` is ``urlkey`` (a few more do no harm)."""
        ...

    def __iter__(self) -> Iterator[Candidate]:
        """Every candidate."""
        ...


class ListSource:
    """Candidates held in a list, grouped by bucket once."""

    def __init__(self, candidates: Iterable[Candidate]) -> None:
        self._all = list(candidates)
        self._by_key: dict[str, list[Candidate]] = {}
        self._by_bucket: dict[str, list[Candidate]] = {}
        for cand in self._all:
            urlkey = surt(cand.url)
            self._by_key.setdefault(urlkey, []).append(cand)
            self._by_bucket.setdefault(urlkey.split("?", 1)[0], []).append(cand)

    def bucket(self, key: str) -> list[Candidate]:
        """The candidates under the bucket ``key``."""
        return self._by_bucket.get(key, [])

    def exact(self, urlkey: str) -> list[Candidate]:
        """The candidates under the SURT key ``urlkey``."""
        return self._by_key.get(urlkey, [])

    def __iter__(self) -> Iterator[Candidate]:
        return iter(self._all)


class _Indexed:
    """One bucket's candidates in capture order, indexed under each rule when that rule is first asked."""

    __slots__ = ("candidates", "indexes")

    def __init__(self, candidates: list[Candidate], rules: int) -> None:
        self.candidates = sorted(candidates, key=lambda c: c.seq)
        self.indexes: list[dict[str, list[Candidate]] | None] = [None] * rules

    def index(self, position: int, key_of: KeyFn) -> dict[str, list[Candidate]]:
        found = self.indexes[position]
        if found is None:
            found = self.indexes[position] = _build(self.candidates, key_of)
        return found


def _build(candidates: list[Candidate], key_of: KeyFn) -> dict[str, list[Candidate]]:
    """Every candidate under ``key_of``'s key, each list in capture order."""
    index: dict[str, list[Candidate]] = {}
    heads: list[str] = []
    for cand in candidates:
        key = key_of(cand.method, cand.url, cand.body)
        if key is not None:
            index.setdefault(key, []).append(cand)
            if cand.method.upper() == "HEAD":
                heads.append(key)
    # A recorded 304 answered a browser that held the body; a replayed request may hold nothing (a fresh
    # browser gets ERR_ABORTED from a 304 it never asked for), so when the body was recorded too, serve only it.
    for key, found in index.items():
        if any(c.not_modified for c in found) and not all(c.not_modified for c in found):
            index[key] = [c for c in found if not c.not_modified]
    # A recorded HEAD has no body: when the GET was recorded too, serve only the GET.
    for key in heads:
        gets = [c for c in index[key] if c.method.upper() != "HEAD"]
        if gets:
            index[key] = gets
    return index


class Matcher:
    """Finds the archived candidate for each replayed request; remembers repeats per browser until :meth:`forget`
    (that browser) or :meth:`reset` (all)."""

    def __init__(
        self,
        candidates: Iterable[Candidate] | CandidateSource,
        *,
        rules: tuple[Rule, ...] = FUZZY_RULES,
        nearest_query: bool = True,
        strict_hosts: frozenset[str] = frozenset(),
    ) -> None:
        """Match against ``candidates``: a :class:`CandidateSource`, or any iterable of candidates.

        ``rules`` are the keyed fuzzy rules to try after an exact match (:data:`IDENTITY_RULES` for a lookup
        by identity); ``nearest_query`` adds the nearest rules after them, in this order: :data:`NEAREST_QUERY`
        for GET and HEAD, :data:`NEAREST_BODY` for other methods, :data:`BEACON_GET` for a beacon;
        ``strict_hosts``: hosts that never get the nearest rules, even with ``nearest_query``.
        """
        self._source: CandidateSource = (
            candidates if hasattr(candidates, "bucket") else ListSource(candidates)  # type: ignore[assignment]
        )
        self._rules = rules
        self._nearest_query = nearest_query
        self._strict_hosts = strict_hosts
        self._exact: _Lru[dict[str, list[Candidate]]] = _Lru(
            lambda urlkey: _build(sorted(self._source.exact(urlkey), key=lambda c: c.seq), exact_key)
        )
        self._fuzzy: _Lru[_Indexed] = _Lru(lambda key: _Indexed(self._source.bucket(key), len(rules)))
        self._sole: dict[str, Match] = {}  # URL -> its exact match, for GETs with a single recording
        self._buckets: dict[tuple[str, str], _Bucket] | None = None  # built by the first `nearest`
        self._hosts: list[str] = []
        self._served: dict[tuple[int, str | None, str], int] = {}  # (browser, rule, key) -> responses given

    def match(
        self, method: str, url: str, body: bytes | None, *, beacon: bool = False, browser: int = 0
    ) -> Match | None:
        """The candidate for a request: exact match first, then each fuzzy rule in order, then the nearest
        rules (``beacon``: the request is one whose response no script reads, see
        :func:`capreplay.replay.nearest.is_beacon`).

        Repeats of one request (same rule and key) from one ``browser`` get the recorded candidates in capture
        order, one per request, and then the last one again: a page fetched before and after a form changed it
        gets its two recordings in turn, whatever other browsers on the same server asked before. HEAD is
        answered from the GET recording without using up a response, since the browser's next GET expects the
        same one.
        """
        plain_get = method == "GET" and not body
        if plain_get:
            known = self._sole.get(url)
            if known is not None:
                return known
        urlkey = surt(url)
        key = exact_key(method, url, body)
        recorded = self._exact.get(urlkey).get(key)
        found = self._pick(None, key, recorded, method, url, browser)
        if found is not None:
            if plain_get and recorded is not None and len(recorded) == 1:
                # One recording, so every repeat gets it too: the next time, skip the keys and lookups.
                if len(self._sole) >= _KEPT:
                    self._sole.clear()
                self._sole[url] = found
            return found
        bucket = self._fuzzy.get(urlkey.split("?", 1)[0])
        if not bucket.candidates:
            return None
        for position, rule in enumerate(self._rules):
            key = rule.key(method, url, body)  # type: ignore[assignment]
            if key is not None:
                found = self._pick(rule.name, key, bucket.index(position, rule.key).get(key), method, url, browser)
                if found is not None:
                    return found
        if not self._nearest_query or (self._strict_hosts and url_forms(url).host in self._strict_hosts):
            return None
        if request_method(method) == "GET":
            return self._closest(bucket.candidates, method, url)
        chosen = nearest_body(bucket.candidates, method, url, body)
        if chosen is not None:
            return Match(chosen, NEAREST_BODY, _jsonp_names(chosen.url, url))
        chosen = beacon_get(bucket.candidates, method, url) if beacon else None
        return None if chosen is None else Match(chosen, BEACON_GET, _jsonp_names(chosen.url, url))

    def _closest(self, candidates: list[Candidate], method: str, url: str) -> Match | None:
        # Candidates are in capture order and min() keeps the first of equals: ties go to the earliest.
        same = [c for c in candidates if request_method(c.method) == "GET" and same_path(url, c.url)]
        if any(not c.not_modified for c in same):
            same = [c for c in same if not c.not_modified]
        if method.upper() != "HEAD":
            same = [c for c in same if c.method.upper() != "HEAD"]  # a GET needs a recorded body
        if not same:
            return None
        best = min(same, key=lambda c: query_distance(url, c.url))
        return Match(best, NEAREST_QUERY, _jsonp_names(best.url, url))

    def _pick(
        self, rule: str | None, key: str, found: list[Candidate] | None, method: str, url: str, browser: int
    ) -> Match | None:
        if not found:
            return None
        is_head = method.upper() == "HEAD"
        if not is_head and found[0].method.upper() == "HEAD":
            return None  # only a HEAD was recorded; a GET needs a body
        if len(found) == 1:
            cand = found[0]  # nothing to count: a long-running server must not grow with every new URL
        else:
            served = self._served.get((browser, rule, key), 0)
            if not is_head:
                self._served[(browser, rule, key)] = served + 1
            cand = found[min(served, len(found) - 1)]
        return Match(cand, rule, _jsonp_names(cand.url, url))

    def nearest(self, method: str, url: str) -> str | None:
        """The archived URL most like ``url``, for the miss log: same method and host preferred, then the
        longest common prefix of path and query, ties to the shorter URL. None if nothing is archived."""
        if self._buckets is None:  # only misses need it, so the first one builds it
            self._buckets = self._bucket_by_host()
            self._hosts = sorted({host for _, host in self._buckets})
        forms = url_forms(url)
        bucket = (
            self._buckets.get((request_method(method), forms.host))
            or self._buckets.get(("*", forms.host))
            or self._buckets.get(("*", self._closest_host(forms.host)))
        )
        if bucket is None:
            return None
        tails, query = bucket.tails, forms.tail
        at = bisect.bisect_left(tails, query)
        best = max(shared_prefix(tails[i], query) for i in (at - 1, at) if 0 <= i < len(tails))
        prefix = query[:best]
        low = bisect.bisect_left(tails, prefix)
        high = bisect.bisect_left(tails, prefix + "\U0010ffff", low)
        return bucket.urls[min(tails[low : min(high, low + _TIE_SCAN)], key=len)]

    def holds(self, method: str, url: str) -> bool:
        """Whether the archive holds a request like this one: the same method (HEAD as GET) for the same
        host, port and path under either scheme, with any query. A miss of such a request is a replay
        defect; any other miss is a capture gap (a ``sendBeacon`` POST to a path captured only as an image
        GET was never captured)."""
        wanted = request_method(method)
        return any(
            request_method(c.method) == wanted and same_path(url, c.url)
            for c in self._fuzzy.get(bucket_key(url)).candidates
        )

    def reset(self) -> None:
        """Forget which responses repeated requests have had (a new page load starts from the first)."""
        self._served.clear()

    def forget(self, browser: int) -> None:
        """Forget which responses the repeated requests of ``browser`` have had (it has gone; a browser that
        comes under the same number later starts from the first)."""
        for counted in [k for k in self._served if k[0] == browser]:
            del self._served[counted]

    def _bucket_by_host(self) -> dict[tuple[str, str], _Bucket]:
        tails: dict[tuple[str, str], dict[str, str]] = {}
        for cand in sorted(self._source, key=lambda c: c.seq):
            forms = url_forms(cand.url)
            for method in (request_method(cand.method), "*"):
                tails.setdefault((method, forms.host), {}).setdefault(forms.tail, cand.url)
        return {where: _Bucket(sorted(urls), urls) for where, urls in tails.items()}

    def _closest_host(self, host: str) -> str:
        # The archived host sharing the longest ending with ``host`` (cdn.a.com for img.a.com), shortest first.
        if not self._hosts:
            return host
        return max(self._hosts, key=lambda h: (shared_prefix(h[::-1], host[::-1]), -len(h)))


class _Lru[T]:
    """The values of ``make(key)`` for the most recently used keys, at most :data:`_KEPT` of them."""

    def __init__(self, make: Callable[[str], T]) -> None:
        self._make = make
        self._kept: OrderedDict[str, T] = OrderedDict()

    def get(self, key: str) -> T:
        found = self._kept.get(key)
        if found is not None:
            self._kept.move_to_end(key)
            return found
        found = self._kept[key] = self._make(key)
        if len(self._kept) > _KEPT:
            self._kept.popitem(last=False)
        return found


def _jsonp_names(archived: str, requested: str) -> tuple[str, str] | None:
    old, new = url_forms(archived).callback, url_forms(requested).callback
    return (old, new) if old is not None and new is not None and old != new else None


_IDENTIFIER = re.compile(r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*", re.ASCII)


def rewrite_jsonp(body: bytes, old: str, new: str) -> bytes:
    """``body`` with its JSONP call ``old(`` renamed ``new(``.

    The call may follow whitespace, a byte-order mark, comments, ``try{`` and guards such as
    ``typeof old === 'function' &&``, whose ``old`` is renamed too. The body is returned unchanged when
    ``old`` is not called there or ``new`` is not a plain (dotted) identifier, since it goes into script.
    """
    if not old or not _IDENTIFIER.fullmatch(new):
        return body
    bare = re.escape(old.encode("utf-8", "surrogatepass")) + rb"(?![\w$])"
    name = rb"(?<![\w$.])(?:window\.)?" + bare  # ``cb`` or ``window.cb``, but not ``my_cb`` or ``x.cb``
    # Possessive: none of the preamble forms can swallow the call itself, so there is nothing to retry.
    preamble = (
        rb"(?:\s+|\xef\xbb\xbf|/\*.*?\*/|//[^\n]*\n|try\s*\{|typeof\s+"
        + name
        + rb"\s*[!=]==?\s*(?P<q>['\"])(?:function|undefined)(?P=q)\s*&&|"
        + name
        + rb"\s*&&)*+"
    )
    head = re.match(preamble + name + rb"\s*\(", body, re.DOTALL)
    if head is None:
        return body
    renamed = re.sub(rb"(?<![\w$.])(window\.)?" + bare, lambda m: (m[1] or b"") + new.encode(), head[0])
    return renamed + body[head.end() :]
