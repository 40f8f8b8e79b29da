"""Stopping a capture mid-page, as ``capreplay capture`` stops on SIGTERM: its task is cancelled."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest

from capreplay.capture.session import CaptureOptions, capture


async def capture_stopped_at(opts: CaptureOptions, count: Callable[[], int], at_least: int) -> int:
    """Run a capture, cancel it once ``count()`` (what the origin has sent) reaches ``at_least`` (waiting 30 s at
    most), and return the count at the moment of the stop."""
    task = asyncio.create_task(capture(opts))
    for _ in range(600):
        if count() >= at_least:
            break
        await asyncio.sleep(0.05)
    at_stop = count()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    return at_stop
