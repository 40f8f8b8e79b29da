"""WebSocket messages compared by what they say, and the ids a client made up echoed back to it. Pure.

A page's client makes up fresh ids and times for what it sends on every load (JupyterLab's kernel messages
carry a new ``msg_id`` and ``date``, graphql-ws's ``subscribe`` a new ``id``), so a replayed client message
seldom equals its recording byte for byte even when it asks for the same thing. A message is read as fields:

- a text message holding a JSON object or array: its leaves, by dotted path;
- a binary message in the layout of Jupyter's kernel WebSocket protocol ``v1.kernel.websocket.jupyter.org``
  (a little-endian 64-bit count of offsets, the offsets, the channel name, then the message's parts: header,
  parent header, metadata and content as JSON, then any binary buffers): ``channel`` and each part's leaves
  under its number (``0.msg_id``, ``3.code``), a part that is not JSON as one field of its bytes;
- anything else has no fields and is compared by its bytes alone.

Two messages are **alike** when they have the same fields in the same order and every value that differs is
volatile on both sides: an identifier (a UUID, or a run of 16 or more hex digits) under any name, or what
POST bodies drop (:func:`capreplay.replay.rules.volatile_field`: a time under a time-like name, a nonce).
A different message type, channel, code or argument is never volatile, so an alike message asks the same.

When a client message matched its recording only alike, its **echoes** map each differing recorded string to
the one the client sent; the server messages played after it get every JSON string equal to a recorded value
replaced by the client's (:func:`echo`), all at once, so a reply names the request the page is waiting for
(JupyterLab files a kernel's output under its request's ``msg_id`` and drops output filed under another).
"""

from __future__ import annotations

import functools
import itertools
import json
import re
from collections.abc import Mapping

from capreplay.models.live_traffic import OPCODE_BINARY, OPCODE_TEXT, WebSocketMessage
from capreplay.replay.rules import volatile_field

type Leaf = tuple[str, object]
"""A field's dotted path and its value (a JSON scalar, or ``bytes`` for a part that is not JSON)."""

_IDENTIFIER = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[0-9a-f]{16,}", re.I | re.A)
_NOT_JSON = object()
_MAX_PARTS = 64
"""More offsets than any Jupyter message has: a binary message claiming more is read as plain bytes."""


def jupyter_parts(payload: bytes) -> tuple[str, list[bytes]] | None:
    """The channel and parts of a binary message in Jupyter's v1 layout, or None if it is not one."""
    if len(payload) < 16:
        return None
    count = int.from_bytes(payload[:8], "little")
    if not 3 <= count <= _MAX_PARTS or len(payload) < 8 * (count + 1):
        return None
    offsets = [int.from_bytes(payload[8 * (i + 1) : 8 * (i + 2)], "little") for i in range(count)]
    if offsets[0] != 8 * (count + 1) or offsets[-1] != len(payload):
        return None
    if any(a > b for a, b in itertools.pairwise(offsets)):
        return None
    try:
        channel = payload[offsets[0] : offsets[1]].decode("ascii")
    except UnicodeDecodeError:
        return None
    return channel, [payload[offsets[i] : offsets[i + 1]] for i in range(1, count - 1)]


def jupyter_frame(channel: str, parts: list[bytes]) -> bytes:
    """A binary message in Jupyter's v1 layout: the inverse of :func:`jupyter_parts`."""
    name = channel.encode("ascii")
    offsets = [8 * (len(parts) + 3), 8 * (len(parts) + 3) + len(name)]
    for part in parts:
        offsets.append(offsets[-1] + len(part))
    head = len(offsets).to_bytes(8, "little") + b"".join(o.to_bytes(8, "little") for o in offsets)
    return head + name + b"".join(parts)


@functools.lru_cache(maxsize=512)  # a replayed message is compared with many recorded ones in a row
def message_fields(opcode: int, payload: bytes) -> tuple[Leaf, ...] | None:
    """The fields of a message (see the module docstring), or None when it is compared by its bytes alone."""
    if opcode == OPCODE_TEXT:
        value = _json(payload)
        return None if not isinstance(value, dict | list) else tuple(_leaves(value, ""))
    if opcode != OPCODE_BINARY:
        return None
    framed = jupyter_parts(payload)
    if framed is None:
        return None
    channel, parts = framed
    leaves: list[Leaf] = [("channel", channel)]
    for i, part in enumerate(parts):
        value = _json(part)
        leaves.extend(_leaves(value, str(i)) if isinstance(value, dict | list) else [(str(i), part)])
    return tuple(leaves)


def alike(recorded: WebSocketMessage, opcode: int, payload: bytes) -> dict[str, str] | None:
    """The echoes (recorded string -> sent string) if the message sent is alike ``recorded``, else None."""
    if recorded.opcode != opcode:
        return None
    mine = message_fields(opcode, payload)
    theirs = message_fields(recorded.opcode, recorded.payload)
    if mine is None or theirs is None or len(mine) != len(theirs):
        return None
    echoes: dict[str, str] = {}
    for (path, sent), (recorded_path, was) in zip(mine, theirs, strict=True):
        if path != recorded_path:
            return None
        if sent == was and type(sent) is type(was):
            continue
        if not (_volatile(path, sent) and _volatile(path, was)):
            return None
        if isinstance(sent, str) and isinstance(was, str):
            echoes[was] = sent
    return echoes


def echo(message: WebSocketMessage, echoes: Mapping[str, str]) -> WebSocketMessage:
    """``message`` with every JSON string equal to a key of ``echoes`` replaced by its value; unchanged when it
    holds none, or is neither JSON text nor a Jupyter message."""
    if not echoes or message.opcode not in (OPCODE_TEXT, OPCODE_BINARY):
        return message
    pattern, table = _replacer(tuple(sorted(echoes.items())))
    if message.opcode == OPCODE_TEXT:
        payload = pattern.sub(lambda m: table[m[0]], message.payload)
    else:
        framed = jupyter_parts(message.payload)
        if framed is None:
            return message
        channel, parts = framed
        swapped = [pattern.sub(lambda m: table[m[0]], p) if _json(p) is not _NOT_JSON else p for p in parts]
        payload = jupyter_frame(channel, swapped)
    return message if payload == message.payload else message.model_copy(update={"payload": payload})


@functools.lru_cache(maxsize=64)  # the echoes grow a few times per connection; every server message uses them
def _replacer(echoes: tuple[tuple[str, str], ...]) -> tuple[re.Pattern[bytes], dict[bytes, bytes]]:
    """One pattern for every recorded string as a JSON string, so that all are replaced in one pass (a value
    sent for one message may be the value recorded for another: replacing in turn would chain them)."""
    table = {_quoted(was): _quoted(sent) for was, sent in echoes}
    pattern = re.compile(b"|".join(re.escape(k) for k in sorted(table, key=len, reverse=True)))
    return pattern, table


def _quoted(text: str) -> bytes:
    return json.dumps(text, ensure_ascii=False).encode("utf-8", "surrogatepass")


def _volatile(path: str, value: object) -> bool:
    if isinstance(value, str) and _IDENTIFIER.fullmatch(value):
        return True
    name = path.rpartition(".")[2].partition("[")[0].lower()
    return volatile_field(name, value)


def _json(data: bytes) -> object:
    """``data`` parsed as JSON, or :data:`_NOT_JSON`."""
    try:
        return json.loads(data)
    except (ValueError, RecursionError):  # ValueError covers bad UTF-8 too
        return _NOT_JSON


def _leaves(value: object, path: str) -> list[Leaf]:
    """Every leaf of a JSON value as ``(dotted path, value)``, keys sorted; an empty object or array is a leaf
    of its own (``path{}``, ``path[]``), so that it still counts as a field."""
    if isinstance(value, dict):
        if not value:
            return [(path + "{}", None)]
        return [leaf for key in sorted(value) for leaf in _leaves(value[key], f"{path}.{key}" if path else str(key))]
    if isinstance(value, list):
        if not value:
            return [(path + "[]", None)]
        return [leaf for i, item in enumerate(value) for leaf in _leaves(item, f"{path}[{i}]")]
    return [(path, value)]
