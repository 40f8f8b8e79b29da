"""Request matching: which archived exchange answers a request the browser makes during replay.

In the spirit of mitmproxy's server-replay ``_hash(flow)`` and the fuzzy matching of Web Page Replay and
pywb: an exact key first, then the :data:`FUZZY_RULES` from strictest to loosest. Every rule has its own
dict index built once, so a lookup costs one dict access per rule however large the archive is.
"""

from __future__ import annotations

import bisect
import gc
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from capreplay.replay.rules import FUZZY_RULES, KeyFn, Rule, exact_key, normalize_url, request_method, url_forms

__all__ = [
    "FUZZY_RULES",
    "Candidate",
    "Match",
    "Matcher",
    "Rule",
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


class Matcher:
    """Finds the archived candidate for each replayed request; remembers repeats until :meth:`reset`."""

    def __init__(self, candidates: Iterable[Candidate]) -> None:
        """Index ``candidates`` under the exact key; each fuzzy rule's index is built when first needed."""
        self._candidates = sorted(candidates, key=lambda c: c.seq)
        # Start-up pays only for the exact index: most replays never reach a fuzzy rule, and at 100,000
        # records building all of them took 1.06 s against 0.40 s for the exact one.
        self._indexes: list[tuple[str | None, KeyFn, dict[str, list[Candidate]] | None]] = [
            (None, exact_key, self._build(exact_key)),
            *((rule.name, rule.key, None) for rule in FUZZY_RULES),
        ]
        self._buckets: dict[tuple[str, str], _Bucket] | None = None  # built by the first `nearest`
        self._hosts: list[str] = []
        self._served: dict[tuple[str | None, str], int] = {}

    def _build(self, key_of: KeyFn) -> dict[str, list[Candidate]]:
        """Every candidate under ``key_of``'s key, each list in capture order."""
        # Indexing creates many small lists; the cyclic collector would walk all of them again and again
        # (half the build time) while none of them can form a cycle.
        collecting = gc.isenabled()
        gc.disable()
        try:
            index: dict[str, list[Candidate]] = {}
            heads: list[str] = []
            for cand in self._candidates:
                key = key_of(cand.method, cand.url, cand.body)
                if key is not None:
                    index.setdefault(key, []).append(cand)
                    if cand.method.upper() == "HEAD":
                        heads.append(key)
            # A recorded HEAD has no body: when the GET was recorded too, serve only the GET.
            for key in heads:
                gets = [c for c in index[key] if c.method.upper() != "HEAD"]
                if gets:
                    index[key] = gets
        finally:
            if collecting:
                gc.enable()
        return index

    def _index_of(self, position: int) -> dict[str, list[Candidate]]:
        name, key_of, index = self._indexes[position]
        if index is None:
            index = self._build(key_of)
            self._indexes[position] = (name, key_of, index)
        return index

    def match(self, method: str, url: str, body: bytes | None) -> Match | None:
        """The candidate for a request: exact match first, then each fuzzy rule in order.

        Repeats of one request (same rule and key) get the recorded candidates in capture order, one per
        request, and then the last one again. HEAD is answered from the GET recording without using up a
        response, since the browser's next GET expects the same one.
        """
        is_head = method.upper() == "HEAD"
        for position, (name, key_of, _) in enumerate(self._indexes):
            key = key_of(method, url, body)
            found = self._index_of(position).get(key) if key is not None else None
            if key is None or not found:
                continue
            if not is_head and found[0].method.upper() == "HEAD":
                continue  # only a HEAD was recorded; a GET needs a body
            served = self._served.get((name, key), 0)
            if not is_head:
                self._served[(name, key)] = served + 1
            cand = found[min(served, len(found) - 1)]
            return Match(cand, name, _jsonp_names(cand.url, url))
        return None

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
        best = max(_common_prefix(tails[i], query) for i in (at - 1, at) if 0 <= i < len(tails))
        prefix = query[:best]
        low = bisect.bisect_left(tails, prefix)
        high = bisect.bisect_left(tails, prefix + "\U0010ffff", low)
        return bucket.urls[min(tails[low : min(high, low + _TIE_SCAN)], key=len)]

    def reset(self) -> None:
        """Forget which responses repeated requests have had (a new page load starts from the first)."""
        self._served.clear()

    def _bucket_by_host(self) -> dict[tuple[str, str], _Bucket]:
        tails: dict[tuple[str, str], dict[str, str]] = {}
        for cand in self._candidates:
            forms = url_forms(cand.url)
            for method in (request_method(cand.method), "*"):
                tails.setdefault((method, forms.host), {}).setdefault(forms.tail, cand.url)
        return {where: _Bucket(sorted(urls), urls) for where, urls in tails.items()}

    def _closest_host(self, host: str) -> str:
        # The archived host sharing the longest ending with ``host`` (cdn.a.com for img.a.com), shortest first.
        if not self._hosts:
            return host
        return max(self._hosts, key=lambda h: (_common_prefix(h[::-1], host[::-1]), -len(h)))


def _common_prefix(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


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
