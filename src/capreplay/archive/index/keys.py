"""Keys of archived captures: the canonical form of a URL, its SURT form, and the 14-digit timestamp of a
WARC-Date. Pure.

Replay's matching rules (:mod:`capreplay.replay.rules`) build on :func:`split_url`, and the index sorts by
:func:`surt` of the same canonical form, so every URL that any rule can match to a request sorts under the
request's own host and path: replay finds candidates with one range lookup in the sorted index.
"""

from __future__ import annotations

import functools
import re
from datetime import datetime
from typing import NamedTuple
from urllib.parse import quote, unquote, urlsplit

_DATE = re.compile(r"(\d{4})(?:-(\d{2})(?:-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2}))?)?)?)?")
_SURT_PORTS = {"http": "80", "https": "443"}
_WWW = re.compile(r"^www\d*\.")
_UNSAFE = re.compile(r"[\x00-\x20\x7f]")

_DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443}
_UNRESERVED = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~"
# As pywb does, an escaped character that means the same as the literal one is decoded: unreserved ones,
# and the reserved ones that delimit nothing in their part of the URL (``%2C`` is ``,`` in a path and in a
# query). Unlike pywb, the delimiters of each part stay escaped, since decoding them would change what
# the server reads: ``/`` in a path (``a%2Fb`` is one segment), ``&``, ``=`` and ``+`` in a query
# (``q=a%26b`` is one parameter, ``%2B`` is a plus and ``+`` a space), and ``?``, ``#`` and ``%`` anywhere.
_DECODED_IN_PATH = frozenset(_UNRESERVED + "!$&'()*+,;=:@")
_DECODED_IN_QUERY = frozenset(_UNRESERVED + "!$'()*,;:@/?")
# Characters that may stay literal; every other one is escaped (a raw space is ``%20``).
_SAFE = ":/?#[]@!$&'()*+,;=%"
_PLAIN = re.compile(r"[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=]*")
_LONE_PCT = re.compile(r"%(?![0-9A-Fa-f]{2})")
_PCT = re.compile(r"%([0-9A-Fa-f]{2})")
# Java servlet session ids in a path segment (``/a;jsessionid=0A1B``): per visit, never part of what is asked.
_PATH_SESSION = re.compile(r";jsessionid=[^/?#]*", re.IGNORECASE)
# RFC 3986 appendix B: matches any text, so no URL makes the matcher raise. Group 2 is None without ``//``.
_URI = re.compile(r"(?:([A-Za-z][A-Za-z0-9+.\-]*):)?(?://([^/?#]*))?([^?#]*)(?:\?([^#]*))?")
_HOST_PORT = re.compile(r"(\[[^\]]*\]|[^:]*)(?::([0-9]{0,5}))?", re.ASCII)


def canon_escapes(text: str, *, query: bool = True) -> str:
    """Percent-encoding in one canonical form: escapes of characters that mean the same as the literal
    one decoded (unreserved ones, and reserved ones that delimit nothing in a query or, with
    ``query=False``, in a path), the other escapes upper-case, characters that must be escaped escaped."""
    if "%" not in text and _PLAIN.fullmatch(text):
        return text  # the common case, kept cheap for indexing large archives
    text = _LONE_PCT.sub("%25", text)
    text = quote(text, safe=_SAFE, errors="surrogatepass")
    return _PCT.sub(_fix_query_escape if query else _fix_path_escape, text)


def _fix_query_escape(match: re.Match[str]) -> str:
    char = chr(int(match[1], 16))
    return char if char in _DECODED_IN_QUERY else "%" + match[1].upper()


def _fix_path_escape(match: re.Match[str]) -> str:
    char = chr(int(match[1], 16))
    return char if char in _DECODED_IN_PATH else "%" + match[1].upper()


def _idna(host: str) -> str:
    """A host in the ASCII form a browser sends (``bücher.de`` is ``xn--bcher-kva.de``); as is if it has none."""
    if "%" in host:
        host = unquote(host)
    if host.isascii():
        return host
    try:
        return host.encode("idna").decode("ascii")
    except UnicodeError:
        return host  # not a valid international name: compare it as written


def _host(netloc: str, scheme: str) -> str:
    hostport = _idna(netloc.rpartition("@")[2]).lower()
    if ":" not in hostport:
        return hostport
    split = _HOST_PORT.fullmatch(hostport)
    if split is None:
        return hostport  # a port that is not a number: leave it as written
    host, port = split.group(1, 2)
    if not port or int(port) == _DEFAULT_PORTS.get(scheme):
        return host
    return f"{host}:{int(port)}"  # ``:08080`` is ``:8080``


class UrlParts(NamedTuple):
    """A URL split and put in canonical form (see :func:`canonical_url`)."""

    scheme: str
    """Lower-case; empty for a relative reference."""
    host: str
    """Host and port as normalised (lower-case, no user info, default port dropped); empty when none."""
    base: str
    """Everything before the query: scheme, authority (without user info) and path."""
    path: str
    query: str
    """Without the ``?``; empty when there is none (an empty ``?`` is dropped)."""


@functools.lru_cache(maxsize=4096)
def split_url(url: str) -> UrlParts:
    """Split ``url`` and canonicalise each part. Never raises: any text is some URL reference."""
    parts = _URI.match(url)
    assert parts is not None  # every group is optional, so the pattern matches any text
    scheme, netloc, path, query = parts.group(1, 2, 3, 4)
    scheme = (scheme or "").lower()
    host = _host(netloc, scheme) if netloc is not None else ""
    path = canon_escapes(path, query=False)
    if ";" in path:
        path = _PATH_SESSION.sub("", path)
    if not path and host and scheme in _DEFAULT_PORTS:
        path = "/"  # ``http://a.com`` and ``http://a.com/`` are the same request line
    # User info is dropped, as pywb drops it: a browser never sends it in the request line.
    authority = "" if netloc is None else f"//{host}"
    base = f"{scheme}:{authority}{path}" if scheme else authority + path
    return UrlParts(scheme, host, base, path, canon_escapes(query or ""))


def canonical_url(url: str) -> str:
    """``url`` with scheme and host lower-cased (an international host in its IDNA form), user info, default
    port, fragment, empty ``?`` and ``;jsessionid=`` path parameters dropped, and percent-encoding canonical
    (``%7E`` is ``~``, ``%2c`` is ``,``, ``%2f`` in a path is ``%2F``, a raw space is ``%20``; see
    :func:`canon_escapes`)."""
    parts = split_url(url)
    return f"{parts.base}?{parts.query}" if parts.query else parts.base


def origin_of(url: str) -> tuple[str, str, int]:
    """``(scheme, host, port)`` of a URL, with the scheme's default port filled in."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    return scheme, (parts.hostname or "").lower(), parts.port or (443 if scheme == "https" else 80)


def site_host(host: str) -> str:
    """``host`` without a leading ``www.``/``wwwN.``: the host as SURT keys (pywb's and these) compare it."""
    return _WWW.sub("", host)


def surt(url: str) -> str:
    """The SURT key of ``url``, as pywb and ReplayWeb.page compute it in the common cases.

    Computed from the :func:`canonical_url`, so percent-encoding variants share a key. Lowercased;
    scheme, user info, fragment and default port dropped; a leading ``www``/``wwwN.`` dropped; host labels
    reversed and joined by commas, then ``)``, the path and the query with its parameters sorted.
    Whitespace and control characters are percent-encoded so a key is one token. Non-HTTP URLs are
    returned lowercased.
    """
    simple = _SIMPLE_HTTP.fullmatch(url)
    if simple is not None:
        return _simple_surt(*simple.group(1, 2, 3))
    return general_surt(url)


def general_surt(url: str) -> str:
    """:func:`surt` by its general steps, for any text."""
    text = canonical_url(url).lower()
    scheme, sep, rest = text.partition("://")
    if not sep or scheme not in _SURT_PORTS:
        return _escape(text)
    rest = rest.split("#", 1)[0]
    cut = min((i for i in (rest.find("/"), rest.find("?")) if i >= 0), default=len(rest))
    authority, tail = rest[:cut], rest[cut:]
    host = authority.rsplit("@", 1)[-1]
    port = ""
    if ":" in host and not host.endswith("]"):  # "]" ends an IPv6 literal without a port
        host, port = host.rsplit(":", 1)
    host = site_host(host.rstrip("."))
    key = ",".join(reversed(host.split("."))) if not host.startswith("[") else host
    if port and port != _SURT_PORTS[scheme]:
        key += ":" + port
    path, qmark, query = tail.partition("?")
    key += ")" + (path or "/")
    if qmark:
        key += "?" + "&".join(sorted(query.split("&")))
    return _escape(key)


# An http(s) URL that needs nothing of canonical_url but lower-casing: a host of letters, digits, dots and
# hyphens (no user info, no port), then a path and a query of characters that stay literal, with no escape,
# no ``;`` in the path (a session id), no fragment, no white space. Most archived URLs are such.
_SIMPLE_HTTP = re.compile(
    r"https?://([A-Za-z0-9][A-Za-z0-9.\-]*)(/[A-Za-z0-9\-._~:/@!$&'()*+,=]*)?(?:\?([A-Za-z0-9\-._~:/?@!$&'()*+,;=]*))?"
)


def _simple_surt(host: str, path: str | None, query: str | None) -> str:
    """:func:`surt` of a URL :data:`_SIMPLE_HTTP` matched whole, from its parts, as the general steps make it."""
    host = site_host(host.lower().rstrip("."))
    key = ",".join(reversed(host.split("."))) + ")" + (path.lower() if path else "/")
    if query:
        key += "?" + "&".join(sorted(query.lower().split("&")))
    return key


def _escape(text: str) -> str:
    if not _UNSAFE.search(text):
        return text
    return "".join(f"%{ord(c):02X}" if ord(c) <= 0x20 or ord(c) == 0x7F else c for c in text)


def warc_timestamp(date: str) -> str | None:
    """14-digit timestamp of a WARC-Date, None if it is not a real date and time.

    W3C-ISO8601 allows lower precision (``2014-01``), padded here; a day or hour out of range
    (``2020-01-32``) is refused, since no clock can be set to it.
    """
    # _DATE reads 19 characters at most: records seconds apart share their answer
    return _timestamp_of(date.strip()[:19])


@functools.lru_cache(maxsize=256)
def _timestamp_of(date: str) -> str | None:
    match = _DATE.match(date)
    if not match:
        return None
    year, month, day, hour, minute, second = match.groups()
    parts = (year, month or "01", day or "01", hour or "00", minute or "00", second or "00")
    try:
        datetime(int(parts[0]), int(parts[1]), int(parts[2]), int(parts[3]), int(parts[4]), int(parts[5]))
    except ValueError:
        return None
    return "".join(parts)
