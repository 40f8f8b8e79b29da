"""The process's one job: read ``start``, run the episode, send ``answer``, or one ``error`` line on failure."""

from __future__ import annotations

import asyncio
import logging

from capreplay_browser_use.agent.episode import AgentGaveUp, AttachError, run_episode
from capreplay_browser_use.agent.harness import Harness, Outbox, ProtocolError
from capreplay_browser_use.agent.messages import PROTOCOL_VERSION, AgentFailed
from capreplay_browser_use.agent.settings import SettingsError

log = logging.getLogger("capreplay_browser_use.agent")

EXPECTED = (AgentGaveUp, AttachError, SettingsError, ProtocolError)
"""Failures the error line explains in full."""
MAX_MESSAGE = 500
"""An error line's message is cut to this many characters."""


def one_line(error: BaseException) -> str:
    """An exception as one short line: its type and the first line of its message."""
    lines = str(error).strip().splitlines()
    text = f"{type(error).__name__}: {lines[0]}" if lines else type(error).__name__
    return text[:MAX_MESSAGE]


async def serve(outbox: Outbox, fd: int = 0) -> int:
    """Run one episode from the harness's input on ``fd``; the exit status (0 answered, 1 failed)."""
    harness = Harness(fd)
    harness.open()
    listening: asyncio.Future[None] | None = None
    try:
        start = await harness.start()
        if start.protocol != PROTOCOL_VERSION:
            raise ProtocolError(f"the harness speaks protocol {start.protocol}, this agent {PROTOCOL_VERSION}")
        listening = asyncio.ensure_future(harness.listen())
        answer = await run_episode(start, harness, outbox)
    except Exception as e:
        # The harness gets the one line it records; stderr the traceback too, if the failure is not a known one.
        log.error("the episode failed: %s", e, exc_info=not isinstance(e, EXPECTED))
        outbox.send(AgentFailed(message=one_line(e)))
        return 1
    finally:
        if listening is not None:
            listening.cancel()
    outbox.send(answer)
    return 0
