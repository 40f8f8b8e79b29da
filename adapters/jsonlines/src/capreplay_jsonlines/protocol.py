"""The JSON-lines loop: one request object per stdin line, one response object per stdout line.

A request is ``{"id": <any>, "cmd": <name>, ...parameters}``. Requests are handled one at a time, in order.
Each gets exactly one final response, ``{"id": .., "ok": true, ...result}`` or ``{"id": .., "ok": false,
"error": ".."}``. A long-running command may first send progress lines ``{"id": .., "event": <name>, ...}``
(they carry no ``ok``). ``{"cmd": "shutdown"}`` is answered, then the process exits; so does end of input.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
from collections.abc import Awaitable, Callable, Mapping
from functools import partial
from typing import Any, TextIO

log = logging.getLogger("capreplay_jsonlines")

Json = dict[str, Any]
Emit = Callable[[Json], None]
"""Sends a progress line (``event`` plus fields) for the request being handled."""
Handler = Callable[[Json, Emit], Awaitable[Json]]
"""A command: the request and an ``emit`` for progress lines in, the fields of the ``ok`` response out."""


class RequestError(Exception):
    """The request cannot be acted on (missing or malformed parameter, unknown target)."""


def param(request: Json, name: str) -> str:
    """A required non-empty string parameter of the request."""
    value = request.get(name)
    if not isinstance(value, str) or not value:
        raise RequestError(f"'{name}' must be a non-empty string")
    return value


def flag(request: Json, name: str, default: bool) -> bool:
    """An optional true/false parameter of the request."""
    value = request.get(name, default)
    if not isinstance(value, bool):
        raise RequestError(f"'{name}' must be true or false")
    return value


def int_param(request: Json, name: str, default: int | None = None, minimum: int = 1) -> int:
    """A required (or defaulted) integer parameter of the request, at least ``minimum``."""
    value = request.get(name, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise RequestError(f"'{name}' must be an integer of at least {minimum}")
    return value


def str_list_param(request: Json, name: str) -> list[str]:
    """A required list of non-empty strings (it may be empty itself)."""
    value = request.get(name)
    if not isinstance(value, list) or not all(isinstance(item, str) and item for item in value):
        raise RequestError(f"'{name}' must be a list of non-empty strings")
    return list(value)


class Channel:
    """The protocol's output: whole JSON lines on the stream that was stdout, flushed one by one."""

    def __init__(self, out: TextIO) -> None:
        self._out = out

    def send(self, message: Json) -> None:
        """Write one message as one line."""
        self._out.write(json.dumps(message, ensure_ascii=False) + "\n")
        self._out.flush()


def _emit(channel: Channel, rid: Any, event: Json) -> None:
    channel.send({"id": rid, **event})


def _parse(line: bytes) -> Json:
    request = json.loads(line)
    if not isinstance(request, dict):
        raise RequestError("a request must be a JSON object")
    return request


async def serve(commands: Mapping[str, Handler], channel: Channel) -> None:
    """Answer requests from stdin until ``shutdown`` or end of input."""
    while True:
        # A thread, not a pipe transport: stdin may be a pipe, a file or a terminal.
        line = await asyncio.to_thread(sys.stdin.buffer.readline)
        if not line:
            log.info("end of input: exiting")
            return
        if not line.strip():
            continue
        rid: Any = None
        try:
            request = _parse(line)
            rid = request.get("id")
            cmd = request.get("cmd")
            if cmd == "shutdown":
                channel.send({"id": rid, "ok": True})
                return
            handler = commands.get(cmd) if isinstance(cmd, str) else None
            if handler is None:
                raise RequestError(f"unknown cmd {cmd!r}; known: {', '.join(sorted([*commands, 'shutdown']))}")
            result = await handler(request, partial(_emit, channel, rid))
            channel.send({"id": rid, "ok": True, **result})
        except RequestError as e:
            channel.send({"id": rid, "ok": False, "error": str(e)})
        except json.JSONDecodeError as e:
            channel.send({"id": rid, "ok": False, "error": f"not a JSON line: {e}"})
        except Exception as e:
            # Reported to the caller, with the traceback on stderr: the adapter stays up for the next request.
            log.exception("request %r failed", rid)
            channel.send({"id": rid, "ok": False, "error": f"{type(e).__name__}: {e}"})
