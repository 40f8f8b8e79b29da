"""How busy the machine is apart from the benchmark: a shared two-core machine is noisy, so say how noisy.

:func:`foreign_cpu` is the CPU time spent during a run by everything except the server and the load
generator, in cores (0.5: half a core was busy elsewhere on average). :func:`wait_quiet` waits, within a
bound, for a moment when nothing else runs, so each measured run starts from a quiet machine.
"""

from __future__ import annotations

import os
import resource
import time
from dataclasses import dataclass

_TICK = os.sysconf("SC_CLK_TCK")


def busy_seconds() -> float:
    """CPU seconds spent busy (not idle or waiting on I/O) on all cores since boot."""
    with open("/proc/stat", encoding="ascii") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    idle = fields[3] + fields[4]  # idle + iowait
    return (sum(fields[:8]) - idle) / _TICK  # guest time is already inside user time


def process_seconds(pid: int) -> float:
    """CPU seconds (user + system) process ``pid`` has used."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as f:
        after_name = f.read().rsplit(")", 1)[1].split()
    return (int(after_name[11]) + int(after_name[12])) / _TICK


def children_seconds() -> float:
    """CPU seconds used by this process's waited-for children (wrk, once it has exited)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


@dataclass
class CpuWatch:
    """Busy time of the machine, of the server and of finished children, from :meth:`start` to :meth:`stop`."""

    server_pid: int
    _busy: float = 0.0
    _server: float = 0.0
    _children: float = 0.0
    _own: float = 0.0
    _wall: float = 0.0

    def start(self) -> None:
        """Take the starting readings."""
        self._busy, self._server = busy_seconds(), process_seconds(self.server_pid)
        self._children, self._own, self._wall = children_seconds(), time.process_time(), time.monotonic()

    def stop(self) -> dict[str, float]:
        """Cores used on average since :meth:`start`: by the server, by wrk and by everything else."""
        wall = max(time.monotonic() - self._wall, 1e-9)
        busy = busy_seconds() - self._busy
        server = process_seconds(self.server_pid) - self._server
        client = children_seconds() - self._children
        own = time.process_time() - self._own
        return {
            "server_cores": round(server / wall, 3),
            "client_cores": round(client / wall, 3),
            "foreign_cores": round(max(busy - server - client - own, 0.0) / wall, 3),
        }


def wait_quiet(max_wait: float, threshold: float = 0.1, window: float = 1.0) -> float:
    """Wait until the machine was busy less than ``threshold`` cores over ``window`` seconds, at most
    ``max_wait`` seconds; returns the busy cores of the last window (above the threshold if it gave up)."""
    deadline = time.monotonic() + max_wait
    while True:
        before, started = busy_seconds(), time.monotonic()
        time.sleep(window)
        load = (busy_seconds() - before) / (time.monotonic() - started)
        if load < threshold or time.monotonic() >= deadline:
            return round(load, 3)
