"""Keys of archived captures: the SURT form of a URL and the 14-digit timestamp of a WARC-Date. Pure."""

from __future__ import annotations

import re
from datetime import datetime

_DATE = re.compile(r"(\d{4})(?:-(\d{2})(?:-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2}))?)?)?)?")
_DEFAULT_PORTS = {"http": "80", "https": "443"}
_WWW = re.compile(r"^www\d*\.")


def surt(url: str) -> str:
    """The SURT key of ``url``, as pywb and ReplayWeb.page compute it in the common cases.

    Lowercased; scheme, user info, fragment and default port dropped; a leading ``www``/``wwwN.``
    dropped; host labels reversed and joined by commas, then ``)``, the path and the query with its
    parameters sorted. Whitespace and control characters are percent-encoded so a key is one token.
    Non-HTTP URLs are returned lowercased.
    """
    text = url.strip().lower()
    scheme, sep, rest = text.partition("://")
    if not sep or scheme not in _DEFAULT_PORTS:
        return _escape(text)
    rest = rest.split("#", 1)[0]
    cut = min((i for i in (rest.find("/"), rest.find("?")) if i >= 0), default=len(rest))
    authority, tail = rest[:cut], rest[cut:]
    host = authority.rsplit("@", 1)[-1]
    port = ""
    if ":" in host and not host.endswith("]"):  # "]" ends an IPv6 literal without a port
        host, port = host.rsplit(":", 1)
    host = _WWW.sub("", host.rstrip("."))
    key = ",".join(reversed(host.split("."))) if not host.startswith("[") else host
    if port and port != _DEFAULT_PORTS[scheme]:
        key += ":" + port
    path, qmark, query = tail.partition("?")
    key += ")" + (path or "/")
    if qmark:
        key += "?" + "&".join(sorted(query.split("&")))
    return _escape(key)


def _escape(text: str) -> str:
    return "".join(f"%{ord(c):02X}" if ord(c) <= 0x20 or ord(c) == 0x7F else c for c in text)


def warc_timestamp(date: str) -> str | None:
    """14-digit timestamp of a WARC-Date, None if it is not a real date and time.

    W3C-ISO8601 allows lower precision (``2014-01``), padded here; a day or hour out of range
    (``2020-01-32``) is refused, since no clock can be set to it.
    """
    match = _DATE.match(date.strip())
    if not match:
        return None
    year, month, day, hour, minute, second = match.groups()
    stamp = f"{year}{month or '01'}{day or '01'}{hour or '00'}{minute or '00'}{second or '00'}"
    try:
        datetime.strptime(stamp, "%Y%m%d%H%M%S")
    except ValueError:
        return None
    return stamp
