"""URL normalisation and the fuzzy rules that decide which archived request answers a replayed one.

A rule turns ``(method, url, body)`` into a key; two requests with the same key under a rule are taken to
ask for the same thing. The rules are tried from strictest to loosest and each one keeps the relaxations
of the rules before it (after "cache-busting", every later rule also ignores cache-busters), so a request
that differs from its recording in two harmless ways still finds it.

Everything here is pure: no I/O, and the caches only remember results of pure functions, because the
matcher asks every rule about the same URL in a row while indexing an archive.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from operator import itemgetter
from typing import NamedTuple
from urllib.parse import unquote_plus

from capreplay.archive.index.keys import canon_escapes, site_host, split_url
from capreplay.replay.bodies import fields_distance, parse_body

type KeyFn = Callable[[str, str, bytes | None], str | None]


@dataclass(frozen=True)
class Rule:
    """A named way of ignoring one harmless difference between a request and its recording."""

    name: str
    doc: str
    """One sentence: what the rule ignores and why that is safe."""
    key: KeyFn
    """``(method, url, body) -> key``, or None when the rule does not apply to the request."""


_CACHE_BUSTERS = frozenset(
    {
        "_",
        "_dc",
        "cb",
        "cachebust",
        "cache_bust",
        "cachebuster",
        "cache_buster",
        "nocache",
        "no_cache",
        "rnd",
        "rand",
        "random",
    }
)
"""Parameter names that only ever carry a cache-defeating value (``_`` is jQuery's, ``_dc`` ExtJS's)."""
_TIME_NAMES = frozenset({"t", "_t", "ts", "_ts", "time", "timestamp"})
"""Names that are cache-busters only when their value is a time or random number (``t=pageview`` is not)."""
_NONCE_NAMES = frozenset({"nonce", "_nonce", "cnonce", "requestid", "request_id"})
_FORM_TOKEN_NAMES = frozenset(
    {
        "csrfmiddlewaretoken",  # Django
        "csrf_token",  # Flask-WTF, Datasette
        "csrftoken",
        "_csrf",  # Express's csurf, Spring
        "_csrf_token",
        "authenticity_token",  # Rails
        "_token",  # Laravel
        "__form_token",  # Trac
        "wpedittoken",  # MediaWiki
    }
)
"""Hidden form fields holding an anti-forgery token: per session or per page load, never part of what is asked."""
_CALLBACK_NAMES = frozenset({"callback", "jsonp", "jsoncallback"})
# In a body, a time is dropped only under a name that says so: ``{"id": 1700000000}`` is an id.
_TIME_FIELD = re.compile(r"time|stamp|date|^_?ts?$|at$|^now$|created|updated|sent|expir")

_UNIX_NUMBER = re.compile(r"([0-9]{9,10}|[0-9]{12,13})(?:\.[0-9]+)?", re.ASCII)
_ISO_DATETIME = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9]{2}:[0-9]{2}(?::[0-9]{2}(?:[.,][0-9]+)?)?"
    r"(?:Z|[+-][0-9]{2}(?::?[0-9]{2})?)?|[0-9]{8}T[0-9]{6}(?:\.[0-9]+)?Z?",
    re.ASCII | re.IGNORECASE,
)
_RANDOM_FRACTION = re.compile(r"0\.[0-9]{6,}", re.ASCII)  # Math.random()
# Seconds from 2000 to 2100: an id of nine or ten digits outside that range is not mistaken for a time.
_SECONDS = range(946_684_800, 4_102_444_800)


def is_timestamp(value: str) -> bool:
    """Whether ``value`` is a Unix time in seconds or milliseconds (2000-2100) or an ISO-8601 datetime."""
    if len(value) < 9 or not value[0].isdigit():
        return False  # most values, cheaply: no time is written in fewer than nine characters
    number = _UNIX_NUMBER.fullmatch(value)
    if number:
        whole = int(number[1])
        return whole in _SECONDS or whole // 1000 in _SECONDS
    return _ISO_DATETIME.fullmatch(value) is not None


def _is_buster(name: str, value: str) -> bool:
    if name in _CACHE_BUSTERS:
        return True
    return name in _TIME_NAMES and (is_timestamp(value) or _RANDOM_FRACTION.fullmatch(value) is not None)


# A query parameter: (canonical ``name=value`` token, canonical name, decoded lower-case name, decoded
# value). Plain tuples because indexing a large archive builds millions of them. The token writes ``%20``
# as ``+``, which form decoding treats alike.
type _Param = tuple[str, str, str, str]


def _decode(text: str) -> str:
    return unquote_plus(text) if "%" in text or "+" in text else text


def _params(query: str) -> list[_Param]:
    """The parameters of a canonical query, stably sorted by name (repeats keep their order, which can
    matter: ``a=1&a=2`` is not ``a=2&a=1``)."""
    params = []
    for token in query.replace("%20", "+").split("&"):
        if not token:
            continue  # ``a=1&&b=2`` is read as ``a=1&b=2``
        name, _, value = token.partition("=")
        params.append((token, name, _decode(name).lower(), _decode(value)))
    params.sort(key=itemgetter(1))
    return params


def _join(base: str, params: list[_Param]) -> str:
    return base + "?" + "&".join([p[0] for p in params]) if params else base


class UrlForms(NamedTuple):
    """One URL in every form the rules compare."""

    canonical: str
    """The exact form: see :func:`normalize_url`."""
    host: str
    """Host and port as normalised (no user info); empty when the URL has none."""
    tail: str
    """Path and query as normalised."""
    has_query: bool
    reordered: str
    no_busters: str
    no_volatile: str
    no_callback: str
    any_scheme: str | None
    """The ``no_callback`` form without its scheme, for http and https URLs only."""
    callback: str | None
    """The decoded value of the first JSONP callback parameter, if any."""


@functools.lru_cache(maxsize=4096)
def url_forms(url: str) -> UrlForms:
    """Split and normalise ``url`` once into every form the rules need. Never raises."""
    scheme, host, base, path, query = split_url(url)
    canonical = f"{base}?{query}" if query else base
    tail = f"{path}?{query}" if query else path
    if not query:
        any_scheme = canonical[len(scheme) + 1 :] if scheme in ("http", "https") else None
        return UrlForms(canonical, host, tail, False, *(canonical,) * 4, any_scheme, None)
    # Each form drops more than the one before; the params stay sorted, so only filter and join.
    params = _params(query)
    reordered = _join(base, params)
    kept = [p for p in params if not _is_buster(p[2], p[3])]
    no_busters = reordered if len(kept) == len(params) else _join(base, kept)
    stable = [p for p in kept if not is_timestamp(p[3])]
    no_volatile = no_busters if len(stable) == len(kept) else _join(base, stable)
    callback = None
    for param in params:
        if param[2] in _CALLBACK_NAMES:
            callback = param[3]
            break
    no_callback = no_volatile
    if callback is not None:
        no_callback = _join(base, [(p[1] + "=", *p[1:]) if p[2] in _CALLBACK_NAMES else p for p in stable])
    any_scheme = no_callback[len(scheme) + 1 :] if scheme in ("http", "https") else None
    return UrlForms(
        canonical, host, tail, bool(params), reordered, no_busters, no_volatile, no_callback, any_scheme, callback
    )


def normalize_url(url: str) -> str:
    """``url`` in the canonical form of :func:`capreplay.archive.index.keys.canonical_url`."""
    return url_forms(url).canonical


def request_method(method: str) -> str:
    """The method as the keys use it: upper-case, with HEAD read as GET so it finds the GET recording."""
    method = method.upper()
    return "GET" if method == "HEAD" else method


@functools.lru_cache(maxsize=64)  # only the rules asking about one body in a row need it
def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _key(method: str, url_form: str, body: bytes | None) -> str:
    method = request_method(method)
    if method == "GET" or not body:
        return f"{method} {url_form}"
    return f"{method} {url_form} sha256={_digest(body)}"


def exact_key(method: str, url: str, body: bytes | None) -> str:
    """The key of an exact match: method (HEAD as GET), normalised URL (see :func:`normalize_url`) and,
    for methods other than GET/HEAD with a body, the sha256 of the body."""
    return _key(method, normalize_url(url), body)


def _query_order(method: str, url: str, body: bytes | None) -> str | None:
    """Ignores the order of query parameters (the same parameters in another order, repeated ones keeping
    theirs) because servers read parameters by name."""
    forms = url_forms(url)
    return _key(method, forms.reordered, body) if forms.has_query else None


def _cache_busting(method: str, url: str, body: bytes | None) -> str | None:
    """Also ignores cache-busting parameters (``_``, ``cb``, ``rnd``, ``nocache`` and the like, and
    ``t``/``ts``/``timestamp`` holding a time or random number) whose values exist only to defeat caches."""
    return _key(method, url_forms(url).no_busters, body)


def _timestamps(method: str, url: str, body: bytes | None) -> str | None:
    """Also ignores any query parameter whose value is a Unix time (s or ms, years 2000-2100) or an
    ISO-8601 datetime, which pages add to make each request unique, not to ask for something else."""
    return _key(method, url_forms(url).no_volatile, body)


def _jsonp_callback(method: str, url: str, body: bytes | None) -> str | None:
    """Also ignores the value of a ``callback``/``jsonp``/``jsoncallback`` parameter, a function name
    made up per page load that the server rewrites in the recorded body."""
    forms = url_forms(url)
    return _key(method, forms.no_callback, body) if forms.callback is not None else None


def _ignore_scheme(method: str, url: str, body: bytes | None) -> str | None:
    """Also treats http and https URLs with the same host, path and query as one, because a page
    upgraded to https (HSTS, redirects, mixed content) still asks for the same resource."""
    forms = url_forms(url)
    return _key(method, forms.any_scheme, body) if forms.any_scheme is not None else None


def _ignore_www(method: str, url: str, body: bytes | None) -> str | None:
    """Also treats a host with and without a leading ``www.`` (or ``www2.``) as one, as pywb's SURT keys
    do, because a page and its archive often name a site's host the two ways (``www.vk.com``, ``vk.com``)."""
    forms = url_forms(url)
    if forms.any_scheme is None:
        return None
    # ``any_scheme`` is ``//host/path?query`` with the host as ``forms.host`` gives it.
    return _key(method, "//" + site_host(forms.host) + forms.any_scheme[2 + len(forms.host) :], body)


def _post_body(method: str, url: str, body: bytes | None) -> str | None:
    """For POST/PUT/PATCH, compares JSON or form-urlencoded bodies with keys sorted and nonces, anti-forgery
    tokens and time-named fields holding a time dropped, because those change on every submission without
    changing what is asked."""
    if request_method(method) not in ("POST", "PUT", "PATCH") or not body:
        return None
    canonical = _canonical_body(body)
    if canonical is None:
        return None
    return f"{request_method(method)} {_loosest(url)} body={_digest(canonical)}"


def _post_any_body(method: str, url: str, body: bytes | None) -> str | None:
    """Last keyed resort for methods other than GET/HEAD whose body cannot be compared field by field (a
    binary body, or none): the same method and URL (as relaxed above) with any such body, so a binary beacon
    or RPC still gets its recorded answer."""
    method = request_method(method)
    if method == "GET" or (body and parse_body(body).kind != "binary"):
        return None
    return f"{method} {_loosest(url)}"


def _loosest(url: str) -> str:
    forms = url_forms(url)
    return forms.no_callback if forms.any_scheme is None else forms.any_scheme


@functools.lru_cache(maxsize=64)  # only the rules asking about one body in a row need it
def _canonical_body(body: bytes) -> bytes | None:
    """The body as :func:`capreplay.replay.bodies.parse_body` reads it, with volatile fields dropped and keys
    sorted, or None for a binary body."""
    parsed = parse_body(body)
    if parsed.kind == "json":
        return json.dumps(_stable_json(parsed.data), sort_keys=True, separators=(",", ":")).encode()
    if parsed.kind == "form":
        params = [p for p in _params(canon_escapes(body.decode("ascii"))) if not volatile_field(p[2], p[3])]
        return _join("", params).encode()
    if parsed.kind == "multipart":
        kept = [f for f in parsed.fields if not volatile_field(f[0].lower(), f[1])]
        return b"multipart:" + json.dumps(kept, separators=(",", ":")).encode()
    if parsed.kind == "text":
        return b"text:" + parsed.fields[0][1].encode("utf-8", "surrogatepass")
    return None


def _stable_json(value: object) -> object:
    if isinstance(value, dict):
        return {k: _stable_json(v) for k, v in value.items() if not volatile_field(str(k).lower(), v)}
    if isinstance(value, list):
        return [_stable_json(v) for v in value]
    return value


def volatile_field(name: str, value: object) -> bool:
    """Whether a field named ``name`` (lower case) holding ``value`` changes on every submission without changing
    what is asked: a nonce, cache-buster or anti-forgery token name, or a time (or ``Math.random()`` fraction)
    under a time-like name."""
    if name in _NONCE_NAMES or name in _CACHE_BUSTERS or name in _FORM_TOKEN_NAMES:
        return True
    if not _TIME_FIELD.search(name) or isinstance(value, bool):  # bool is an int, but True is not a time
        return False
    if isinstance(value, int | float) and value == value and abs(value) < 1e16:  # NaN and inf are not
        whole = int(value)
        return whole in _SECONDS or whole // 1000 in _SECONDS
    return isinstance(value, str) and (is_timestamp(value) or _RANDOM_FRACTION.fullmatch(value) is not None)


def _rule(name: str, key: KeyFn) -> Rule:
    return Rule(name, " ".join(inspect.cleandoc(key.__doc__ or "").split()), key)


def _other_scheme(method: str, url: str, body: bytes | None) -> str | None:
    """Treats http and https URLs with the same host, path and query (in any order) as one, and nothing
    else: the same resource, whichever scheme a page or an agent wrote."""
    forms = url_forms(url)
    scheme_length = forms.canonical.find(":") + 1
    return _key(method, forms.reordered[scheme_length:], body) if forms.any_scheme is not None else None


NEAREST_QUERY = "nearest-query"
"""The first of the nearest rules, tried after :data:`FUZZY_RULES`: for GET and HEAD, when nothing else
matches, the capture of the same host and path (never another path) whose query is closest by
:func:`query_distance`, ties to the earliest capture, since a beacon or a JSONP call with a fresh time,
random id or encoded blob still asks for the same thing. ``serve --strict`` turns the nearest rules off."""


def query_distance(asked: str, archived: str) -> tuple[int, float]:
    """How far the query of ``archived`` is from that of ``asked`` (both URLs on one host and path).

    First the number of argument names that only one of them has (repeated names counted as often as they
    occur), then the sum over shared names of how much the values differ: 0 when equal, else one minus the
    share of the longer value that is a common prefix, so ``t=1520301385356`` is nearer ``t=1520301385999``
    than ``t=9``. Pure; symmetric in the names, and 0 only for the same query up to order and spelling.
    """
    return fields_distance(_named(url_forms(asked).reordered), _named(url_forms(archived).reordered))


def _named(url: str) -> dict[str, list[str]]:
    values: dict[str, list[str]] = {}
    query = url.partition("?")[2]
    for param in _params(query) if query else []:
        values.setdefault(param[2], []).append(param[3])
    return values


def same_path(asked: str, archived: str) -> bool:
    """Whether two URLs share host, port and path exactly (canonical form, any scheme, with or without a
    leading ``www.`` as for :func:`_ignore_www`)."""
    a, b = url_forms(asked), url_forms(archived)
    return site_host(a.host) == site_host(b.host) and a.tail.partition("?")[0] == b.tail.partition("?")[0]


FUZZY_RULES: tuple[Rule, ...] = (
    _rule("query-order", _query_order),
    _rule("cache-busting", _cache_busting),
    _rule("timestamps", _timestamps),
    _rule("jsonp-callback", _jsonp_callback),
    _rule("ignore-scheme", _ignore_scheme),
    _rule("ignore-www", _ignore_www),
    _rule("post-body", _post_body),
    _rule("post-any-body", _post_any_body),
)
"""The fuzzy rules with a key, in the order they are tried, strictest first; ``nearest-query`` comes after."""

IDENTITY_RULES: tuple[Rule, ...] = (
    _rule("query-order", _query_order),
    _rule("other-scheme", _other_scheme),
)
"""The rules of a lookup by identity (the judge's): the same canonical URL, with its query in any order,
under either scheme. Nothing volatile is dropped and nothing nearest is taken: ``?id=999`` is not ``?id=1``."""
