"""Request bodies read as fields, so that two POSTs can be compared by what they say, not by their bytes.

The index keeps a request's body but not its ``Content-Type``, so a body is recognised by its form, the
same way for the archived request and the replayed one:

- JSON (any value; a ``text/plain`` beacon holding JSON too): key order and whitespace ignored. A GraphQL
  request (an object with ``query``, ``operationName`` or a persisted-query hash) has an *operation*, its
  name and its query (the persisted hash, else the document with its white space collapsed), and its
  ``variables`` are compared field by field even when the client sent them as a JSON string. A JSON-RPC
  request's ``method`` is its operation;
- a url-encoded form (``a=1&b=2``): field order ignored, repeated fields keeping theirs;
- a multipart form: its fields by name, the boundary (random per request) ignored;
- other UTF-8 text (a plain-text beacon): one field, its line endings and surrounding white space ignored;
- anything else is binary: one field of its bytes.

Pure: no I/O, and the caches only remember results of pure functions.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import re
from email.parser import BytesParser
from email.policy import HTTP
from typing import Literal, NamedTuple
from urllib.parse import unquote_plus

from capreplay.archive.index.keys import canon_escapes

Kind = Literal["json", "form", "multipart", "text", "binary"]

type Field = tuple[str, str]
"""A field's name (a dotted path for JSON, ``?name`` for a URL's query) and its value as text."""

_WHITESPACE = re.compile(r"\s")
_RUNS = re.compile(r"\s+")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_BOUNDARY = re.compile(rb"--([!-~ ]{1,70}?)[ \t]*\r?\n")
_GRAPHQL_KEYS = frozenset({"query", "operationName", "extensions"})


class Body(NamedTuple):
    """A request body as matching compares it."""

    kind: Kind
    operation: str | None
    """What the request asks the server to do where the body names it (GraphQL, JSON-RPC); else None."""
    data: object
    """The body as compared exactly: JSON with GraphQL's parts normalised, or the list of fields."""
    fields: tuple[Field, ...]
    """The body's leaves, for the nearest-body rule: every field counts as one difference."""


@functools.lru_cache(maxsize=256)  # the nearest-body rule asks about the same archived bodies in a row
def parse_body(body: bytes) -> Body:
    """``body`` read by its form (see the module docstring). Never raises."""
    try:
        value = json.loads(body)
    except (ValueError, RecursionError):
        pass  # not JSON (ValueError covers bad UTF-8 and over-long integers), or absurdly nested
    else:
        if isinstance(value, dict | list):
            value, operation = _graphql(value)
            return Body("json", operation, value, tuple(_flatten(value, "")))
    multipart = _multipart(body)
    if multipart is not None:
        return Body("multipart", None, multipart, tuple(multipart))
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        return Body("binary", None, body, (("", body.decode("latin-1")),))
    if text.isascii() and "=" in text and not _WHITESPACE.search(text):
        form = form_fields(text)
        return Body("form", None, form, tuple(form))
    if _CONTROL.search(text):
        return Body("binary", None, body, (("", text),))
    plain = "\n".join(line.rstrip() for line in text.strip().splitlines())
    return Body("text", None, plain, (("", plain),))


def form_fields(text: str) -> list[Field]:
    """The fields of a url-encoded form (or query), decoded, stably sorted by name: repeats keep their order."""
    fields = []
    for token in canon_escapes(text).split("&"):
        if token:
            name, _, value = token.partition("=")
            fields.append((unquote_plus(name), unquote_plus(value)))
    fields.sort(key=lambda f: f[0])
    return fields


def _graphql(value: dict[str, object] | list[object]) -> tuple[object, str | None]:
    """``value`` with each GraphQL request's query white space collapsed and string ``variables`` parsed,
    and the operation of the request (of each request of a batch, joined)."""
    if isinstance(value, list):
        if not value or not all(isinstance(v, dict) and _GRAPHQL_KEYS & v.keys() for v in value):
            return value, None
        parts = [_graphql(v) for v in value]  # type: ignore[arg-type]
        return [p[0] for p in parts], "+".join(p[1] or "" for p in parts)
    if "jsonrpc" in value and isinstance(value.get("method"), str):
        return value, f"rpc:{value['method']}"
    if not _GRAPHQL_KEYS & value.keys():
        return value, None
    out = dict(value)
    query = out.get("query")
    if isinstance(query, str):
        out["query"] = _RUNS.sub(" ", query).strip()
    for name in ("variables", "extensions"):
        if isinstance(out.get(name), str):
            with contextlib.suppress(ValueError, RecursionError):  # a string that is not JSON stays a string
                out[name] = json.loads(out[name])  # type: ignore[arg-type]
    return out, _operation(out)


def _operation(request: dict[str, object]) -> str:
    extensions = request.get("extensions")
    persisted = extensions.get("persistedQuery") if isinstance(extensions, dict) else None
    digest = persisted.get("sha256Hash") if isinstance(persisted, dict) else None
    query = request.get("query")
    if not isinstance(digest, str):
        # No hash sent: the document itself says what is asked (two names can share one operation name).
        digest = hashlib.sha256(query.encode("utf-8", "surrogatepass")).hexdigest() if isinstance(query, str) else ""
    return f"graphql:{request.get('operationName') or ''}:{digest}"


def _flatten(value: object, path: str) -> list[Field]:
    """Every leaf of a JSON value as ``(dotted path, JSON text)``; the operation's own keys are left out."""
    if isinstance(value, dict):
        out: list[Field] = []
        for key in sorted(value):
            if not path and key in _GRAPHQL_KEYS:
                continue  # part of the operation, compared as a whole
            out.extend(_flatten(value[key], f"{path}.{key}" if path else str(key)))
        return out
    if isinstance(value, list):
        return [field for i, item in enumerate(value) for field in _flatten(item, f"{path}[{i}]")]
    return [(path, value if isinstance(value, str) else json.dumps(value))]


def _multipart(body: bytes) -> list[Field] | None:
    """The fields of a multipart body (its boundary read from its first line), or None if it is not one."""
    boundary = _BOUNDARY.match(body)
    if boundary is None:
        return None
    head = b'Content-Type: multipart/form-data; boundary="' + boundary[1] + b'"\r\n\r\n'
    message = BytesParser(policy=HTTP).parsebytes(head + body)
    if not message.is_multipart():
        return None
    fields: list[Field] = []
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        filename = part.get_param("filename", header="content-disposition")
        payload = part.get_payload(decode=True)
        data = payload if isinstance(payload, bytes) else b""
        text = data.decode("utf-8", "replace") if not _binary_bytes(data) else data.decode("latin-1")
        label = str(name) if isinstance(name, str) else ""
        fields.append((label + (f";filename={filename}" if isinstance(filename, str) else ""), text))
    if not fields:
        return None
    fields.sort(key=lambda f: f[0])
    return fields


def _binary_bytes(data: bytes) -> bool:
    try:
        return _CONTROL.search(data.decode("utf-8")) is not None
    except UnicodeDecodeError:
        return True


def fields_distance(mine: dict[str, list[str]], theirs: dict[str, list[str]]) -> tuple[int, float]:
    """How far two sets of named values are: the number of names only one of them has (repeated names counted
    as often as they occur), then the sum over shared names of how much the values differ: 0 when equal, else
    one minus the share of the longer value that is a common prefix. Symmetric; 0 only for the same fields."""
    names = sum(abs(len(mine.get(n, ())) - len(theirs.get(n, ()))) for n in mine.keys() | theirs.keys())
    values = 0.0
    for name in mine.keys() & theirs.keys():
        for a, b in zip(mine[name], theirs[name], strict=False):
            if a != b:
                values += 1.0 - shared_prefix(a, b) / max(len(a), len(b))
    return names, values


def by_name(fields: list[Field] | tuple[Field, ...]) -> dict[str, list[str]]:
    """``fields`` grouped by name, each name's values in their order."""
    named: dict[str, list[str]] = {}
    for name, value in fields:
        named.setdefault(name, []).append(value)
    return named


def shared_prefix(a: str, b: str) -> int:
    """The length of the longest common prefix of ``a`` and ``b``."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n
