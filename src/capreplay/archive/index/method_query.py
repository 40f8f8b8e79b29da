"""The lookup key pywb and ReplayWeb.page give a request that is not a GET: its method and body as a query.

A CDX index has one key per URL, so replay tools fold the method and body of a POST (or the method of
an OPTIONS, HEAD, ...) into the URL before computing its SURT key: ``?__wb_method=post&name=ada``. The
indexer does it for the archived request and the replay server for the live one, so both must apply the
same rule or the record is never found. This module is that rule as pywb 2.10's indexer
(``MethodQueryCanonicalizer`` with ``append_post``) applies it, written anew and pure:

- GET: nothing is appended;
- any other method: ``__wb_method=<METHOD>``, and for POST and PUT with a body also the body as a query:
  a url-encoded form as its decoded text, a JSON body (``application/json``, or ``text/plain`` that
  parses as JSON) flattened to ``key=value`` pairs, a multipart form as its fields url-encoded, and
  anything else (or text that is not UTF-8) as ``__wb_post_data=<base64>``;
- the body query is cut to 4096 characters, as pywb does.

AMF bodies (Flash remoting) are treated as binary: pywb decodes them, but no capture of ours holds one.
"""

from __future__ import annotations

import base64
import json
import math
from email.parser import BytesParser
from email.policy import HTTP
from urllib.parse import unquote_plus, urlencode

MAX_QUERY_LENGTH = 4096
"""pywb keeps this many characters of a body query; the rest would only make keys longer."""

_BODY_METHODS = ("POST", "PUT")


def method_query(method: str, content_type: str | None, body: bytes) -> tuple[str, str] | None:
    """``(appended, body_query)`` for a request, or None for a GET, whose URL is its key as it is.

    ``appended`` goes after the URL (behind ``?`` or ``&``); ``body_query`` is the body part alone, which
    pywb keeps in the index as ``requestBody`` ("" when the request has no body worth keying).
    """
    method = method.upper()
    if method == "GET":
        return None
    query = body_query(content_type or "", body) if method in _BODY_METHODS and body else ""
    appended = f"__wb_method={method}" + (f"&{query}" if query else "")
    return appended, query


def url_with_method(url: str, appended: str) -> str:
    """``url`` with ``appended`` added as further query parameters."""
    return url + ("&" if "?" in url else "?") + appended


def body_query(content_type: str, body: bytes) -> str:
    """A POST/PUT body as a query string, by its Content-Type, as pywb's indexer writes it."""
    mime = content_type.strip().lower()
    if mime.startswith("application/x-www-form-urlencoded"):
        try:
            query = unquote_plus(body.decode("utf-8"))
        except UnicodeDecodeError:
            query = _binary(body)
    elif mime.startswith("multipart/"):
        query = _multipart(content_type, body)
    elif mime.startswith("application/json"):
        # pywb drops a JSON body it cannot parse: the key is then the method alone
        query = _json_or_none(body) or ""
    elif mime.startswith("text/plain"):
        parsed = _json_or_none(body)
        query = parsed if parsed is not None else _binary(body)
    else:
        query = _binary(body)
    return query[:MAX_QUERY_LENGTH]


def _binary(body: bytes) -> str:
    return "__wb_post_data=" + base64.b64encode(body).decode("ascii")


def _json_or_none(body: bytes) -> str | None:
    """The JSON body flattened to ``key=value`` pairs, or None if it is not JSON."""
    try:
        value = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        return None
    pairs: dict[str, str] = {}
    repeats: dict[str, int] = {}

    def key_for(name: str) -> str:
        # a name seen before becomes name.2_, name.3_, ... so that no value is lost
        if name not in pairs:
            return name
        repeats[name] = repeats.get(name, 1) + 1
        return f"{name}.{repeats[name]}_"

    def walk(node: object, name: str) -> None:
        if isinstance(node, dict):
            for child_name, child in node.items():
                walk(child, str(child_name))
        elif isinstance(node, list):
            for child in node:
                walk(child, name)
        elif name:
            pairs[key_for(name)] = _json_scalar(node)

    walk(value, "")
    return urlencode(pairs)


def _json_scalar(value: object) -> str:
    """A JSON scalar as JavaScript prints it, which is what a browser-side replay computes too."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return str(int(value))
    return str(value)


def _multipart(content_type: str, body: bytes) -> str:
    """The fields of a multipart form, url-encoded in order; without a boundary, the body as binary."""
    if "boundary=" not in content_type.lower():
        return _binary(body)
    head = f"Content-Type: {content_type}\r\n\r\n".encode("latin-1", "replace")
    message = BytesParser(policy=HTTP).parsebytes(head + body)
    fields: list[tuple[str, str | bytes]] = []
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        if not isinstance(name, str):
            continue
        payload = part.get_payload(decode=True)
        data = payload if isinstance(payload, bytes) else b""
        try:
            fields.append((name, data.decode("utf-8")))
        except UnicodeDecodeError:
            fields.append((name, data))
    return urlencode(fields, doseq=True)
