"""The agent's end of the protocol: lines to the harness on the protocol stream, lines from it on stdin.

stdin is read by a daemon thread with ``os.read`` on file descriptor 0, not by ``asyncio.to_thread``: the
harness may keep stdin open after the answer, and a worker thread stuck in ``readline`` would hold
``asyncio.run`` at exit (it joins its executor) and the interpreter's stdin lock at shutdown.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from typing import TextIO

from pydantic import ValidationError

from capreplay_browser_use.agent.messages import TO_AGENT, Ack, FromAgent, Start, Stop

log = logging.getLogger("capreplay_browser_use.agent")

MAX_LINE = 1 << 20
"""The longest line the harness may send (its messages are a few hundred bytes)."""
_READ_SIZE = 1 << 16


class ProtocolError(Exception):
    """The harness sent something the protocol does not allow here."""


class Outbox:
    """Whole JSON lines on the stream that was stdout, flushed one by one."""

    def __init__(self, out: TextIO) -> None:
        self._out = out

    def send(self, message: FromAgent) -> None:
        """Write one message as one line."""
        self._out.write(message.model_dump_json() + "\n")
        self._out.flush()


def _read_lines(fd: int, loop: asyncio.AbstractEventLoop, lines: asyncio.Queue[bytes | None]) -> None:
    """The reader thread: each line from ``fd`` into ``lines``, then None at end of input."""
    buffer = b""
    while True:
        try:
            chunk = os.read(fd, _READ_SIZE)
        except OSError:
            chunk = b""
        items: list[bytes | None]
        if chunk:
            *complete, buffer = (buffer + chunk).split(b"\n")
            items = [*complete]
            if len(buffer) > MAX_LINE:
                # Handed on as it is: the parser reports it, and a bad line ends the episode.
                items, buffer = [*items, buffer], b""
        else:
            items = [buffer, None] if buffer else [None]
        for item in items:
            try:
                loop.call_soon_threadsafe(lines.put_nowait, item)
            except RuntimeError:  # the loop is closed: the episode is over and nobody listens any more
                return
        if not chunk:
            return


class Harness:
    """Messages from the harness: the ``start`` line, then ``ack``s and ``stop`` routed to whoever waits."""

    def __init__(self, fd: int = 0) -> None:
        self._fd = fd
        self._lines: asyncio.Queue[bytes | None] = asyncio.Queue()
        self._acks: asyncio.Queue[Ack] = asyncio.Queue()
        self.stopped = asyncio.Event()
        """Set on ``stop``, at end of input, and when the harness breaks the protocol."""
        self.stop_reason: str | None = None
        self.failure: str | None = None
        """Why the harness's input cannot be followed (set with ``stopped``)."""

    def open(self) -> None:
        """Start reading stdin (in the running loop)."""
        thread = threading.Thread(
            target=_read_lines, args=(self._fd, asyncio.get_running_loop(), self._lines), name="stdin", daemon=True
        )
        thread.start()

    async def _next(self) -> Start | Ack | Stop | None:
        """The next message; None at end of input."""
        while True:
            line = await self._lines.get()
            if line is None:
                return None
            if not line.strip():
                continue
            try:
                return TO_AGENT.validate_json(line)
            except ValidationError as e:
                first = e.errors()[0]
                where = ".".join(str(part) for part in first["loc"]) or "line"
                raise ProtocolError(f"not a protocol line: {where}: {first['msg']}: {line[:200]!r}") from e

    async def start(self) -> Start:
        """The ``start`` line, which must come first."""
        message = await self._next()
        if not isinstance(message, Start):
            raise ProtocolError(f"expected a 'start' line first, got {message.type if message else 'end of input'}")
        return message

    async def listen(self) -> None:
        """Route ``ack``s to :meth:`acked` and set ``stopped`` on ``stop``, end of input or a bad line."""
        try:
            while True:
                message = await self._next()
                if isinstance(message, Ack):
                    self._acks.put_nowait(message)
                    continue
                if isinstance(message, Start):
                    raise ProtocolError("a second 'start' line")
                self.stop_reason = message.reason if message else "end of input"
                log.info("stopping: %s", self.stop_reason)
                return
        except ProtocolError as e:
            self.failure = str(e)
        finally:
            self.stopped.set()

    async def acked(self, n: int) -> bool:
        """Wait until the harness acks step ``n`` (True), or stops the episode first (False)."""
        ack = asyncio.ensure_future(self._acks.get())
        stop = asyncio.ensure_future(self.stopped.wait())
        try:
            await asyncio.wait({ack, stop}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            stop.cancel()
            if not ack.done():
                ack.cancel()
        if not ack.done() or ack.cancelled():
            return False
        if ack.result().n != n:
            self.failure = f"got an ack for step {ack.result().n} while waiting for step {n}"
            self.stopped.set()
            return False
        return True
