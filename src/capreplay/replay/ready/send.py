"""Sending a ready response (:mod:`capreplay.replay.ready.responses`) as an aiohttp response, by offset (``sendfile``).

On plain TCP the whole response (head and body, already laid out as aiohttp would write them) leaves in
one ``sendfile`` system call straight to the socket when the socket takes it all (an ordinary response
does), else the rest goes through ``loop.sendfile``, as aiohttp's own ``FileResponse`` sends a file; over TLS, where
the kernel cannot encrypt, the slice is read and written through the TLS transport (``FileResponse`` falls
back the same way). A response whose archive had no ``Date`` gets aiohttp's own clock value in its head.

Everything that decides when a request ends stays as it is: :class:`ReadyResponse` is prepared and
finished by the same calls as any aiohttp response (the traffic middleware's ``prepare``/``write_eof``),
and a client that hangs up makes ``prepare`` raise :class:`ConnectionError`, as a failed write does.
"""

from __future__ import annotations

import asyncio
import os
from typing import TYPE_CHECKING

from aiohttp import web
from aiohttp.helpers import rfc822_formatted_time
from aiohttp.http import HttpVersion11

from capreplay.replay.ready.responses import Ready, ReadyResponses

if TYPE_CHECKING:
    from aiohttp.abc import AbstractStreamWriter
    from aiohttp.web_request import BaseRequest

_READ = 1 << 20
"""Bytes read and written at a time where ``sendfile`` cannot be used."""


def ready_for(ready: ReadyResponses, request: web.Request, url: str) -> Ready | None:
    """Where the ready response to ``request`` (for the absolute ``url``) lies, or None when the general path
    must answer: anything but a bodiless HTTP/1.1 keep-alive ``GET`` without ``Range``, or a URL not ready."""
    if (
        request.method != "GET"
        or request.version != HttpVersion11
        or not request.keep_alive
        or request.can_read_body
        or "Range" in request.headers
    ):
        return None
    return ready.find(url)


class ReadyResponse(web.StreamResponse):
    """One ready response, sent by offset from its part of the ready file when prepared."""

    def __init__(self, ready: ReadyResponses, found: Ready) -> None:
        """Send ``found`` from ``ready``."""
        super().__init__(status=found.status)
        self._ready = ready
        self._found = found

    async def prepare(self, request: BaseRequest) -> AbstractStreamWriter | None:
        """Send the whole response (the head is already in the file); later calls do nothing."""
        if self._eof_sent:
            return None
        if self._payload_writer is not None:
            return self._payload_writer
        self._req = request
        self._keep_alive = True
        writer = self._payload_writer = request._payload_writer
        transport = request.transport
        if transport is None or transport.is_closing():
            raise ConnectionResetError("Connection lost")  # as a failed write: the client has gone
        found = self._found
        part = self._ready.parts[found.part]
        fd = self._ready.fds[found.part]
        start, count = found.offset, found.length
        if found.date_at >= 0:
            head = bytearray(os.pread(fd, found.head_length, start))
            date = rfc822_formatted_time().encode("ascii")
            head[found.date_at : found.date_at + len(date)] = date
            await writer.write(head)
            start, count = start + found.head_length, count - found.head_length
        if transport.get_extra_info("sslcontext") is not None:
            while count > 0:
                chunk = os.pread(fd, min(_READ, count), start)
                if not chunk:
                    raise ConnectionResetError("the ready file ended early")
                await writer.write(chunk)
                start, count = start + len(chunk), count - len(chunk)
        elif count > 0:
            sent = _send_now(transport, fd, start, count)
            writer.output_size += sent
            if sent < count:  # the socket's buffer is full: asyncio waits for room and sends the rest
                await request._loop.sendfile(transport, part, start + sent, count - sent)
                writer.output_size += count - sent
        return writer


def _send_now(transport: asyncio.BaseTransport, fd: int, offset: int, count: int) -> int:
    """Send what the socket takes now of ``count`` bytes at ``offset`` of ``fd``, with one ``sendfile`` call
    straight to the transport's socket, when nothing is waiting in the transport's own buffer (else the
    bytes would overtake it); how many bytes were sent. ``loop.sendfile`` would also stop and restart reading
    on the socket, stat the file and seek it: four more system calls for a response that fits in one."""
    sock = transport.get_extra_info("socket")
    if sock is None or not isinstance(transport, asyncio.WriteTransport) or transport.get_write_buffer_size():
        return 0
    try:
        return os.sendfile(sock.fileno(), fd, offset, count)
    except (BlockingIOError, InterruptedError):
        return 0
