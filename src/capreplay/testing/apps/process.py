"""One application server as a child process on 127.0.0.1: started on a free port, awaited, stopped with its children.

The server runs in a session of its own, so that stopping it reaches every process it started (JupyterLab's
kernels, a worker pool) and none is left running when the block ends, whatever happened in it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from capreplay.errors import CapreplayError
from capreplay.testing.pywb import _clean_env

START_TIMEOUT = 120.0
"""Seconds for a server to answer its first request (Gradio imports pandas and numpy: ~10 s on a busy machine)."""
STOP_TIMEOUT = 15.0
"""Seconds a server gets to shut down (JupyterLab stops its kernels first) before it is killed."""
OFFLINE_ENV = {
    # Each of these is a call home that the application would otherwise make while it runs.
    "HF_HUB_OFFLINE": "1",
    "HF_HUB_DISABLE_TELEMETRY": "1",
    "GRADIO_ANALYTICS_ENABLED": "False",
    "DO_NOT_TRACK": "1",
    "PYTHONUNBUFFERED": "1",
}


@dataclass
class Server:
    """A started application server: where it listens and the file its output goes to."""

    port: int
    process: subprocess.Popen[bytes]
    log: Path
    extra_maps: list[str] = field(default_factory=list)
    """``--map HOST=127.0.0.1:PORT`` values of other local origins the page loads from (a CDN served here)."""
    spki_pins: list[str] = field(default_factory=list)
    """SPKI pins of those origins' self-signed certificates, for a browser that visits them directly."""

    def url(self, path: str = "/") -> str:
        """``http://127.0.0.1:PORT`` + ``path``."""
        return f"http://127.0.0.1:{self.port}/{path.lstrip('/')}"

    def output(self) -> str:
        """What the server printed so far (its last 4,000 characters)."""
        return self.log.read_text(errors="replace")[-4000:] if self.log.exists() else ""


@contextlib.contextmanager
def running_server(
    command: Callable[[int], list[str]],
    *,
    ready_path: str,
    log: Path,
    cwd: Path,
    env: dict[str, str] | None = None,
    attempts: int = 3,
) -> Iterator[Server]:
    """Run ``command(port)`` on a free port until the block ends, once ``ready_path`` answers with any status.

    ``env`` adds to a clean environment (the project's virtual environment removed) with :data:`OFFLINE_ENV`.
    """
    server = _start(command, ready_path, log, cwd, env or {}, attempts)
    try:
        yield server
    finally:
        stop(server.process)


@contextlib.contextmanager
def running_static(folder: Path, *, log: Path, python: str | None = None) -> Iterator[Server]:
    """Python's own static file server over ``folder`` on 127.0.0.1 until the block ends (it follows symbolic
    links, so a site may link to files installed elsewhere); ``python``: the interpreter, default this one."""

    def command(port: int) -> list[str]:
        return [python or sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1",
                "--directory", str(folder)]  # fmt: skip

    with running_server(command, ready_path="/index.html", log=log, cwd=folder) as server:
        yield server


def _start(command: Callable[[int], list[str]], ready_path: str, log: Path, cwd: Path, env: dict[str, str],
           attempts: int) -> Server:  # fmt: skip
    full_env = server_env(env)
    log.parent.mkdir(parents=True, exist_ok=True)
    for _ in range(attempts):
        port = free_port()
        args = command(port)
        with open(log, "wb") as out:
            try:
                process = subprocess.Popen(
                    args, cwd=cwd, env=full_env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
                )
            except OSError as e:
                raise CapreplayError(f"could not start: {e}", where=args[0]) from e
        server = Server(port=port, process=process, log=log)
        if _wait_until_serving(server, ready_path):
            return server
        stop(process)
        if "in use" not in server.output():  # only a port taken meanwhile is worth another try
            break
    raise CapreplayError(f"{command(0)[0]} did not start serving:\n{Server(0, process, log).output()}", where=log)


def server_env(extra: dict[str, str]) -> dict[str, str]:
    """The environment an application runs in: this one without the project's virtual environment, with
    :data:`OFFLINE_ENV` and ``extra`` (also for an application's own build steps)."""
    return _clean_env() | OFFLINE_ENV | extra


def free_port() -> int:
    """A TCP port of 127.0.0.1 that is free now (a server that cannot say which port it bound needs one)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _wait_until_serving(server: Server, path: str) -> bool:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline and server.process.poll() is None:
        try:
            with urllib.request.urlopen(server.url(path), timeout=5):
                return True
        except urllib.error.HTTPError:
            return True  # it answers, which is all this waits for
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            time.sleep(0.2)
    return False


def stop(process: subprocess.Popen[bytes]) -> None:
    """Stop the server and every process of its session: politely first, then by force."""
    if process.poll() is None:
        _signal_group(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            _signal_group(process.pid, signal.SIGKILL)
            process.wait(timeout=STOP_TIMEOUT)
    # children that outlived the server (a kernel that ignored SIGTERM) still belong to its session
    _signal_group(process.pid, signal.SIGKILL)


def _signal_group(pid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)
