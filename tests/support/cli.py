"""Running ``capreplay`` as a user would, without paying Python's start and capreplay's imports each time.

Half a second of every command-line run goes to starting Python and importing the verb's libraries (aiohttp,
Playwright, mitmproxy, pydantic's models), and the suite runs the command line several hundred times. Here a fork
server (:mod:`multiprocessing`'s ``forkserver``) imports every verb once per test worker, and each run is a fork of
it that does what ``python -m capreplay`` does: it runs the package's ``__main__`` module with ``sys.argv`` set, in
its own session, working folder and environment, with stdout and stderr in files of its own and stdin empty, and
its exit status is the process's. A traceback goes to its stderr as it would in a terminal. Tests that signal a
running verb (Ctrl-C a capture or a server) start a real ``python -m capreplay`` instead.
"""

from __future__ import annotations

import contextlib
import io
import multiprocessing
import os
import pkgutil
import runpy
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Mapping
from dataclasses import dataclass
from multiprocessing.process import BaseProcess
from pathlib import Path

import capreplay.cli

PRELOAD = [
    "capreplay.cli",
    *(f"capreplay.cli.{m.name}" for m in pkgutil.iter_modules(capreplay.cli.__path__)),
    "capreplay.capture.session",
    "capreplay.replay.server",
    "capreplay.verify.page_loads",
    "playwright.async_api",
]
"""What the fork server imports before it forks a run: every verb, and the libraries most verbs reach."""

_CONTEXT = multiprocessing.get_context("forkserver")
_CONTEXT.set_forkserver_preload(PRELOAD)


def _main(args: list[str], cwd: str, env: dict[str, str], out: str, err: str, status: str) -> None:
    """In the forked process: become ``python -m capreplay ARGS`` run in ``cwd`` with ``env``."""
    os.setsid()  # a session of its own, so that a kill reaches the browser and drivers it started
    os.chdir(cwd)
    os.environ.clear()
    os.environ.update(env)
    for fd, path in ((1, out), (2, err)):
        opened = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(opened, fd)
        os.close(opened)
    # As Python sets them up when stdout and stderr are files: stdout block-buffered, stderr line-buffered.
    sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), encoding="utf-8")
    sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), encoding="utf-8", errors="backslashreplace",
                                  line_buffering=True)  # fmt: skip
    sys.argv = ["capreplay", *args]
    try:
        runpy.run_module("capreplay", run_name="__main__", alter_sys=True)
        code = 0
    except SystemExit as e:  # as the interpreter turns SystemExit into an exit status
        if e.code is None or isinstance(e.code, int):
            code = e.code or 0
        else:
            print(e.code, file=sys.stderr)
            code = 1
    except BaseException:
        traceback.print_exc()
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    # The status the fork server relays is 255 now and then when many runs end at once, so the run writes its own.
    Path(status).write_text(str(code), encoding="utf-8")
    raise SystemExit(code)


@dataclass
class WarmRun:
    """One run of ``capreplay ARGS``: wait for it, kill it, read what it printed."""

    args: list[str]
    process: BaseProcess
    folder: Path
    """Where its stdout and stderr files are; removed by :meth:`output`."""

    @property
    def stdout_path(self) -> Path:
        return self.folder / "stdout"

    def wait(self, timeout: float | None = None) -> int | None:
        """The exit status once it exits, or None if it still runs after ``timeout`` seconds."""
        self.process.join(timeout)
        return None if self.process.exitcode is None else self.returncode

    @property
    def returncode(self) -> int:
        """The status it exited with (it must have exited): the one it wrote, else minus the signal that killed it."""
        written = self.folder / "status"
        if written.exists():
            return int(written.read_text(encoding="utf-8"))
        assert self.process.exitcode is not None, "the run has not exited"
        return self.process.exitcode

    def kill(self) -> None:
        """SIGKILL its session (the run and the browser or driver it started), then reap it."""
        if self.process.exitcode is None and self.process.pid is not None:
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):  # not yet in a session of its own
                self.process.kill()
        self.process.join()

    def output(self) -> tuple[str, str]:
        """What it printed on stdout and stderr (it must have exited); its files are then removed."""
        printed = []
        for name in ("stdout", "stderr"):  # a file is missing only if the fork died before it was made
            path = self.folder / name
            printed.append(path.read_text(encoding="utf-8", errors="replace") if path.exists() else "")
        shutil.rmtree(self.folder, ignore_errors=True)
        return printed[0], printed[1]


def start(args: list[str], *, cwd: Path | str | None = None, env: Mapping[str, str] | None = None) -> WarmRun:
    """Start ``capreplay ARGS`` in ``cwd`` (this process's own by default) with ``env`` (this process's)."""
    folder = Path(tempfile.mkdtemp(prefix="capreplay-cli-"))
    where = str(Path(cwd if cwd is not None else os.getcwd()).resolve())
    environ = dict(os.environ if env is None else env)
    files = (str(folder / "stdout"), str(folder / "stderr"), str(folder / "status"))
    process = _CONTEXT.Process(target=_main, args=(args, where, environ, *files))
    process.start()
    return WarmRun(list(args), process, folder)


def run(args: list[str], *, cwd: Path | str | None = None, env: Mapping[str, str] | None = None,
        timeout: float = 300) -> subprocess.CompletedProcess[str]:  # fmt: skip
    """``capreplay ARGS`` to its end; raises :class:`subprocess.TimeoutExpired` (the run killed) after ``timeout``."""
    started = start(args, cwd=cwd, env=env)
    if started.wait(timeout) is None:
        started.kill()
        out, err = started.output()
        raise subprocess.TimeoutExpired(["capreplay", *args], timeout, out, err)
    code = started.returncode
    out, err = started.output()
    return subprocess.CompletedProcess(["capreplay", *args], code, out, err)


def first_stdout_line(started: WarmRun, timeout: float) -> str:
    """The first line ``started`` prints on stdout, or "" if it exits or ``timeout`` passes before one."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(FileNotFoundError):
            text = started.stdout_path.read_text(encoding="utf-8", errors="replace")
            if "\n" in text:
                return text.split("\n", 1)[0] + "\n"
        if started.wait(0.05) is not None:
            break
    return ""


def cli(*args: str, timeout: int = 300) -> subprocess.CompletedProcess[str]:
    """``capreplay ARGS`` from this process's working folder; the exit status is the caller's to check."""
    return run(list(args), timeout=timeout)

