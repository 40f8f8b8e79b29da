"""Servers as child processes, for load tests and benchmarks that watch their memory.

A server in its own process has its own resident set, which :func:`read_memory` reads from ``/proc``;
an in-process server would share the test runner's. :func:`capreplay_serve` runs the real command line,
so what is measured is what a user runs.
"""

from __future__ import annotations

import json
import os
import selectors
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

from capreplay.errors import ReplayError
from capreplay.util.closing import Closing


@dataclass(frozen=True)
class Memory:
    """A process's resident set now and at its peak, in KiB (``VmRSS`` and ``VmHWM``)."""

    rss_kib: int
    hwm_kib: int


def read_memory(pid: int) -> Memory:
    """``VmRSS`` and ``VmHWM`` of process ``pid`` (Linux only)."""
    fields: dict[str, int] = {}
    with open(f"/proc/{pid}/status", encoding="ascii") as f:
        for line in f:
            name, _, value = line.partition(":")
            if name in ("VmRSS", "VmHWM"):
                fields[name] = int(value.split()[0])
    return Memory(fields["VmRSS"], fields["VmHWM"])


class ChildServer(Closing):
    """A server command run as a child; ``start()`` spawns it, ``stop()`` ends it (SIGTERM, then SIGKILL).

    With ``json_line`` the child must print one JSON object as its first stdout line (``capreplay serve``
    does: ports, hosts, Chromium arguments) and ``start()`` returns it; otherwise stdout is discarded.
    A ``prefix`` such as ``["taskset", "-c", "0"]`` execs the command, so :attr:`pid` stays the server's.
    stderr goes to a temporary file, quoted when the child fails to start.
    """

    def __init__(self, command: Sequence[str], *, json_line: bool = True, cwd: Path | None = None) -> None:
        self.command = list(command)
        self.json_line = json_line
        self.cwd = cwd
        self._proc: subprocess.Popen[bytes] | None = None
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115  # closed by close()
        self.info: dict[str, Any] = {}
        self.started_at = 0.0
        """``time.monotonic()`` just before the child was spawned."""

    @property
    def pid(self) -> int:
        """The server's process id."""
        if self._proc is None:
            raise ReplayError("the server is not running")
        return self._proc.pid

    def running(self) -> bool:
        """Whether the child was started and has not exited."""
        return self._proc is not None and self._proc.poll() is None

    def start(self, timeout: float = 120.0) -> dict[str, Any]:
        """Spawn the child; with ``json_line``, wait at most ``timeout`` seconds for its first line."""
        self.started_at = time.monotonic()
        stdout = subprocess.PIPE if self.json_line else subprocess.DEVNULL
        self._proc = subprocess.Popen(self.command, stdout=stdout, stderr=self._stderr, cwd=self.cwd)
        if not self.json_line:
            return {}
        line = self._first_line(self.started_at + timeout)
        try:
            info = json.loads(line)
        except json.JSONDecodeError:
            self._fail(f"printed no JSON first line: {line[:200]!r}")
        if not isinstance(info, dict):
            self._fail(f"printed a first line that is not a JSON object: {line[:200]!r}")
        self.info = info
        return info

    def _first_line(self, deadline: float) -> bytes:
        assert self._proc is not None and self._proc.stdout is not None
        out = self._proc.stdout
        data = b""
        with selectors.DefaultSelector() as sel:
            sel.register(out, selectors.EVENT_READ)
            # Bounded by the deadline: every pass either reads something or fails.
            while b"\n" not in data:
                left = deadline - time.monotonic()
                if left <= 0 or not sel.select(left):
                    self._fail("did not print its first line in time")
                chunk = os.read(out.fileno(), 65536)
                if not chunk:
                    self._fail("exited before printing its first line")
                data += chunk
        return data.split(b"\n", 1)[0]

    def _fail(self, what: str) -> NoReturn:
        code = self.stop()
        last = self.stderr_text().strip().splitlines()[-1:]
        name = Path(self.command[0]).name
        raise ReplayError(f"{name} {what} (exit status {code})" + (f": {last[0]}" if last else ""))

    def memory(self) -> Memory:
        """The server's resident set now and at its peak."""
        return read_memory(self.pid)

    def stop(self, timeout: float = 15.0) -> int | None:
        """SIGTERM, then SIGKILL after ``timeout`` seconds; the exit status (None if never started)."""
        proc, self._proc = self._proc, None
        if proc is None:
            return None
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        try:
            code = proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            code = proc.wait(timeout)
        if proc.stdout is not None:
            proc.stdout.close()
        return code

    def stderr_text(self) -> str:
        """What the child wrote to stderr so far (for failure messages)."""
        if self._stderr.closed:
            return ""
        self._stderr.seek(0)
        return self._stderr.read().decode("utf-8", "replace")

    def close(self) -> None:
        """Stop the child and drop its stderr file."""
        self.stop()
        self._stderr.close()



def capreplay_serve(snapshot: Path, *, prefix: Sequence[str] = (), args: Sequence[str] = ()) -> ChildServer:
    """``capreplay serve SNAPSHOT`` with this interpreter (not started yet)."""
    return ChildServer([*prefix, sys.executable, "-m", "capreplay", "serve", str(snapshot), *args])
