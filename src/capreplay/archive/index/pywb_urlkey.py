"""The SURT key pywb computes for a URL (its ``canonicalize``), so that a WACZ index is looked up as written.

pywb looks a request up by ``canonicalize(url)``, the Internet Archive's URL canonicalization in SURT
form (the ``surt`` package: Google's safe-browsing rules, then the Wayback rules), so every key in an
index it reads must be computed the same way or the record is never found. capreplay's own index keys
(:func:`capreplay.archive.index.cdxj.surt`) are simpler and differ on URLs such as ``/dir/`` (pywb drops the
trailing slash), ``%7E`` (pywb unescapes it), non-ASCII paths (pywb escapes them) or ``/a/../b``. This
module is those rules written anew, pure and without the network (pywb resolves numeric host forms such
as ``0x7f.1`` with the system resolver; here :func:`socket.inet_aton` parses them the same way).

The steps, in order:

1. parse: trim, drop tabs and line breaks, ``http://`` for a URL without a scheme, one ``http(s)://``
   for a repeated one; the fragment, user and password are dropped;
2. host: unescaped, IDNA for non-ASCII, ``..`` collapsed and outer dots dropped, numeric IPv4 forms made
   dotted-quad, lowercased, a leading ``www``/``wwwN.`` dropped, the scheme's default port dropped;
3. path: unescaped repeatedly, ``.``/``..``/empty segments resolved (with a host), escaped once (bytes
   outside printable ASCII, space, ``#`` and ``%``), lowercased, ASP.NET session ids dropped, a
   trailing slash dropped unless the path is ``/``;
4. query: unescaped and escaped once the same way, session ids (jsessionid, phpsessid, sid, ASP,
   ColdFusion) dropped, lowercased, parameters sorted, dropped if empty;
5. ``host labels reversed, joined by commas`` + ``:port`` + ``)`` + path + ``?query``.
"""

from __future__ import annotations

import contextlib
import re
import socket
from urllib.parse import quote_from_bytes, unquote_to_bytes

_URI = re.compile(rb"^(?:([a-zA-Z][a-zA-Z0-9+.-]*):)?(?:(?://([^/?#]*))?([^?#]*)(?:\?([^#]*))?)?(?:#(.*))?$")
_HAS_SCHEME = re.compile(rb"^[a-zA-Z][a-zA-Z0-9+\-.]*:")
_REPEATED_HTTP = re.compile(rb"^(https?://)+")
_LINE_BREAKS = re.compile(rb"[\n\r\t]")
_WWW = re.compile(rb"^www\d*\.")
_DECIMAL_IP = re.compile(rb"^[1-9][0-9]*(\.[0-9]+){0,3}$")
_OCTAL_IP = re.compile(rb"^0[0-7]*(\.[0-7]+){0,3}$")
_SAFE = b"!\"$&'()*+,-./:;<=>?@[\\]^_`{|}~"
"""Printable ASCII punctuation that stays as it is; '#' and '%' are escaped with everything unprintable."""
_DEFAULT_PORTS = {b"http": 80, b"https": 443}
_PATH_SESSION = (
    re.compile(rb"^(.*/)(\((?:[a-z]\([0-9a-z]{24}\))+\)/)([^?]+\.aspx.*)$", re.IGNORECASE),
    re.compile(rb"^(.*/)(\([0-9a-z]{24}\)/)([^?]+\.aspx.*)$", re.IGNORECASE),
)
_QUERY_SESSION = tuple(
    re.compile(rb"^(.*)(?:" + pattern + rb")(?:&(.*))?$", re.IGNORECASE)
    for pattern in (rb"jsessionid=[0-9a-zA-Z]{32}", rb"phpsessid=[0-9a-zA-Z]{32}", rb"sid=[0-9a-zA-Z]{32}",
                    rb"ASPSESSIONID[a-zA-Z]{8}=[a-zA-Z]{24}", rb"cfid=[^&]+&cftoken=[^&]+")
)


def pywb_urlkey(url: str) -> str:
    """The key pywb 2.10 looks ``url`` up by, e.g. ``com,example)/a~b?a=1&b=2`` for
    ``https://www.Example.com/A%7eB/?b=2&a=1``."""
    raw = _LINE_BREAKS.sub(b"", url.encode("utf-8").strip())
    if raw and not _HAS_SCHEME.match(raw):
        raw = b"http://" + raw
    raw = _REPEATED_HTTP.sub(lambda m: m.group(1), raw)
    match = _URI.match(raw)
    if match is None:  # the pattern matches any text; kept for the type checker
        return url
    scheme, netloc, path, query = (match.group(i) or b"" for i in (1, 2, 3, 4))
    host, port = _host_and_port(netloc.rstrip(b":") if netloc.endswith(b":") else netloc)
    if scheme.lower().startswith(b"http") and host is None and path:
        # "http:/example.com/x" and the like: the host is the first path segment
        first, _, rest = path.lstrip(b"/").partition(b"/")
        host, path = first, b"/" + rest
    if host is not None:
        host = _canonical_host(host)
        if port == _DEFAULT_PORTS.get(scheme.lower()):
            port = None
        path = _normalise_path(_unescape(path))
    else:
        path = _unescape(path)
    path = _strip_path_session(_escape(path).lower())
    if len(path) > 1 and path.endswith(b"/"):
        path = path[:-1]
    key = b",".join(reversed(host.split(b"."))) if host else scheme + b":"
    if host and port is not None:
        key += b":%d" % port
    if host:
        key += b")"
    key += path or (b"/" if query else b"")
    canonical_query = _canonical_query(query) if query else b""
    if canonical_query:
        key += b"?" + canonical_query
    return key.decode("utf-8", "surrogateescape")


def _host_and_port(netloc: bytes) -> tuple[bytes | None, int | None]:
    """Host (lowercased, brackets of an IPv6 literal removed) and port, as ``urllib.parse`` splits them."""
    hostinfo = netloc.rpartition(b"@")[2]
    if hostinfo.startswith(b"["):
        host, _, rest = hostinfo[1:].partition(b"]")
        port_text = rest.partition(b":")[2]
    else:
        host, _, port_text = hostinfo.partition(b":")
    port = int(port_text) if port_text.isdigit() and 0 < int(port_text) <= 65535 else None
    return (host.lower() or None), port


def _canonical_host(host: bytes) -> bytes:
    host = _unescape(host)
    if not host.isascii():
        with contextlib.suppress(UnicodeError):  # a label IDNA cannot encode stays escaped bytes, as in pywb
            host = host.decode("utf-8", "ignore").encode("idna")
    host = host.replace(b"..", b".").strip(b".")
    dotted = _numeric_ip(host)
    host = dotted if dotted is not None else _escape(host.lower())
    return _WWW.sub(b"", host.lower())


def _numeric_ip(host: bytes) -> bytes | None:
    """A host written as a number (``2130706433``, ``0x7f.1``, ``0177.0.0.1``) as a dotted quad, else None."""
    if host.isdigit():
        return socket.inet_ntoa((int(host) & 0xFFFFFFFF).to_bytes(4, "big")).encode("ascii")
    if _DECIMAL_IP.match(host) or _OCTAL_IP.match(host):
        try:
            return socket.inet_ntoa(socket.inet_aton(host.decode("ascii"))).encode("ascii")
        except OSError:
            return None
    return None


def _normalise_path(path: bytes) -> bytes:
    """Resolve ``.`` and ``..`` and drop empty segments (but keep a final slash)."""
    if not path:
        return b"/"
    kept: list[bytes] = []
    for segment in path.split(b"/")[1:]:
        if segment == b".":
            continue
        if segment == b".." and kept:
            kept.pop()
        else:
            kept.append(segment)
    if not kept:
        return b"/"
    return b"/" + b"".join(s + b"/" for s in kept[:-1] if s) + kept[-1]


def _strip_path_session(path: bytes) -> bytes:
    for pattern in _PATH_SESSION:
        found = pattern.match(path)
        if found:
            path = found.group(1) + found.group(3)
    return path


def _canonical_query(query: bytes) -> bytes:
    query = _escape(_unescape(query))
    for pattern in _QUERY_SESSION:
        found = pattern.match(query)
        if found:
            query = found.group(1) + (found.group(2) or b"")
    query = query.lower()
    if len(query) <= 1:
        return query
    pairs = sorted(tuple(arg.split(b"=", 1)) for arg in query.split(b"&"))
    return b"&".join(b"=".join(pair) for pair in pairs)


def _unescape(data: bytes) -> bytes:
    """Percent-decode until nothing changes (``%2541`` becomes ``A``)."""
    while True:
        decoded = unquote_to_bytes(data)
        if decoded == data:
            return data
        data = decoded


def _escape(data: bytes) -> bytes:
    return quote_from_bytes(data, safe=_SAFE).encode("ascii") if data else data
