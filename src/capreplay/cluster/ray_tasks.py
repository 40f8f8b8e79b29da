"""Submitting one Ray task per unit of work (an episode, a page session) and taking each result as it comes.

Every task asks for one browser's worth of a node (:data:`BROWSER_RESOURCES`). A task whose worker process or
node dies is run again by Ray, from its start, at most :data:`MAX_RETRIES` times; only an attempt that returns
is handed on, so nothing is recorded twice. A task still lost after that is handed on as lost, with the reason.
An error capreplay raises on purpose inside a task (a snapshot that does not match its manifest, no Chromium on
a node) is raised in the driver as it would be on one machine, and the tasks still running are cancelled.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from capreplay.errors import CapreplayError, ReplayError

BROWSER_RESOURCES: dict[str, Any] = {"num_cpus": 1, "memory": 1 << 30}
"""What one task asks of a node: a core and 1 GiB for its Chromium, its agent and its replay server."""
MAX_RETRIES = 2
"""Times Ray runs a task again after its worker process or node died."""
WAIT_S = 5.0
"""How long the driver waits for any task before looking again (it looks until every one is back)."""


def stall_after(task_s: float) -> float:
    """How long a run waits without any task ending before it stops: a task's longest run, once more for a
    retry, and five minutes to start workers and copy the snapshot."""
    return 2 * task_s + 300.0


def passed_on(names: Sequence[str]) -> dict[str, str]:
    """Those of the driver's variables ``names`` that are set (a model key, an endpoint), for the tasks' workers."""
    return {name: os.environ[name] for name in names if os.environ.get(name)}


def lost_reason(error: BaseException) -> str:
    """Why a task was lost, in one line."""
    text = str(error).strip()
    first = text.splitlines()[0] if text else ""
    return f"its Ray worker failed {MAX_RETRIES + 1} times ({type(error).__name__}: {first})"


def run_tasks[K](
    ray: Any,
    function: Callable[..., Any],
    work: Mapping[K, tuple[Any, ...]],
    *,
    name: Callable[[K], str],
    on_result: Callable[[K, Any], None],
    on_lost: Callable[[K, str], None],
    stall_s: float,
    env: Mapping[str, str] | None = None,
) -> None:
    """Run ``function(*work[key])`` as a Ray task for every key; call ``on_result(key, value)`` or ``on_lost(key,
    reason)`` for each as it ends, in the order they end. On any way out, the tasks still running are cancelled.

    Ray starts a worker again and again when it cannot start one (a node without capreplay, a broken
    environment), so a run whose tasks never start would wait for ever: when no task has ended for ``stall_s``
    seconds, the run stops with a ``ReplayError``."""
    options: dict[str, Any] = {"max_retries": MAX_RETRIES, "retry_exceptions": False, **BROWSER_RESOURCES}
    if env:
        options["runtime_env"] = {"env_vars": dict(env)}
    remote = ray.remote(function)
    pending = {remote.options(name=name(key), **options).remote(*args): key for key, args in work.items()}
    last = time.monotonic()
    try:
        while pending:
            done, _ = ray.wait(list(pending), num_returns=1, timeout=WAIT_S)
            if done:
                last = time.monotonic()
            elif time.monotonic() - last > stall_s:
                raise ReplayError(
                    f"no Ray task ended in {stall_s:.0f} s ({len(pending)} waiting): do the nodes' workers start? "
                    "(the Ray logs say; every node needs capreplay installed in the Python its raylet runs)"
                )
            for ref in done:
                key = pending.pop(ref)
                try:
                    value = ray.get(ref)
                except ray.exceptions.RayTaskError as e:
                    if isinstance(e.cause, CapreplayError):
                        raise e.cause from None
                    raise
                except ray.exceptions.RayError as e:
                    on_lost(key, lost_reason(e))
                    continue
                on_result(key, value)
    finally:
        for ref in pending:
            ray.cancel(ref, force=True)
