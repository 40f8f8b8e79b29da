"""A bounded pool of workers over one plan: the part of executing a run that every kind of run shares."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any


async def run_workers(count: int, worker: Callable[[], Coroutine[Any, Any, None]]) -> None:
    """Run ``count`` copies of ``worker`` at once until all return; the first exception stops them all.

    That exception is raised, not the group: with one failing worker the others were only cancelled.
    """
    try:
        async with asyncio.TaskGroup() as group:
            for _ in range(count):
                group.create_task(worker())
    except ExceptionGroup as e:
        raise e.exceptions[0] from e
