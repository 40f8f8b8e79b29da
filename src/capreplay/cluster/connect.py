"""Ray for ``--backend ray``: imported only when asked for (an optional extra), connected once per process.

With ``--ray-address`` (or ``$RAY_ADDRESS``) capreplay joins a cluster the user runs (``auto``: the one last
started on this machine with ``ray start``). Without either it starts a Ray of its own on this machine, for the
run only, kept to 127.0.0.1: Ray takes a node's address from the machine's outward
interface and listens on every interface unless its multi-node support is switched off, which must happen
before Ray is imported. Ray's usage reports (sent to its makers over the internet) are off unless the user
has said otherwise: nothing capreplay runs may leave the machine by itself. So is Ray's copying of a ``uv
run`` driver's environment to its workers (it uploads the working folder and runs every worker through ``uv
run`` there, which finds another environment, without Ray): a task runs in the node's own Python, where
capreplay is installed.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from types import ModuleType

from capreplay.errors import ClusterError, UsageError

LOOPBACK_SWITCH = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"
"""Off (``0``): Ray's nodes take 127.0.0.1 as their address and bind their servers to it."""
USAGE_STATS = "RAY_USAGE_STATS_ENABLED"
UV_RUN_PROPAGATION = "RAY_ENABLE_UV_RUN_RUNTIME_ENV"
INSTALL_HINT = "install capreplay with its ray extra (uv sync --extra ray, or pip install 'capreplay[ray]')"
LOCAL_START_TRIES = 2
"""How often a Ray of the run's own is started before the run gives up: Ray gives a new node a fixed 30 s to
register with its control store (``ray._private.node``), which a machine busy enough can miss once."""


def import_ray() -> ModuleType:
    """The ``ray`` module; its absence is one ``UsageError`` line saying how to install it."""
    os.environ.setdefault(USAGE_STATS, "0")
    os.environ.setdefault(UV_RUN_PROPAGATION, "0")
    try:
        import ray
    except ImportError as e:
        raise UsageError(f"--backend ray needs Ray: {INSTALL_HINT}") from e
    return ray


def connect(address: str | None) -> ModuleType:
    """Join the Ray cluster at ``address`` (else ``$RAY_ADDRESS``), or start one on this machine on 127.0.0.1;
    return the ``ray`` module. Once connected, later calls in the process reuse the connection."""
    address = address or os.environ.get("RAY_ADDRESS") or None
    if address is None:
        os.environ.setdefault(LOOPBACK_SWITCH, "0")
    ray = import_ray()
    if ray.is_initialized():
        return ray
    if address is None:
        start_local(lambda: ray.init(address="local", include_dashboard=False, logging_level="WARNING"), ray.shutdown)
        return ray
    try:
        ray.init(address=address, logging_level="WARNING")
    except (ConnectionError, ValueError, RuntimeError) as e:
        raise UsageError(f"--ray-address {address}: cannot connect: {e}") from e
    return ray


def start_local(init: Callable[[], object], shutdown: Callable[[], None], tries: int = LOCAL_START_TRIES) -> None:
    """Start a Ray of the run's own with ``init``, at most ``tries`` times, shutting down what a failed start left;
    a start that fails every time is one :class:`ClusterError` line with Ray's last reason."""
    for attempt in range(1, tries + 1):
        try:
            init()
            return
        # Ray raises a bare Exception when its node misses the startup deadline, and others for what it fails to
        # spawn: all of them end this start, none is the user's input.
        except Exception as e:
            shutdown()
            if attempt == tries:
                reason = str(e).splitlines()[0] if str(e) else type(e).__name__
                raise ClusterError(f"a Ray of the run's own did not start ({tries} tries): {reason}") from e
