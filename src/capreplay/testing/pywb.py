"""pywb 2.10 and py-wacz as independent readers of our WACZ files: installed on demand, run with time limits.

pywb pins old packages (werkzeug, redis, pyOpenSSL, ...), so it never enters the project's locked
environment: :func:`ensure_pywb` installs it with uv into a virtual environment of its own (by default
``.cache/pywb-2.10`` in the repository) the first time, and reuses it afterwards; :func:`ensure_py_wacz`
does the same for py-wacz, the WACZ reference implementation, whose ``wacz validate`` checks a file
against the spec. pywb 2.10.0 declares Python 3.9 to 3.14; the environments use the interpreter running
capreplay (3.12), which is present wherever capreplay runs, unless ``CAPREPLAY_PYWB_PYTHON`` names
another. An install that was cut short is recognised (the marker file is written last) and redone.

Every step has a time limit, and every failure is a :class:`~capreplay.errors.CapreplayError` whose
message carries the tool's own output, so a test can fail with it rather than skip.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from capreplay.errors import CapreplayError
from capreplay.util.files import locked

PYWB_VERSION = "2.10.0"
PY_WACZ_VERSION = "0.6.0"
INSTALL_TIMEOUT = 900.0
"""Seconds for ``uv pip install pywb``: a few with a warm uv cache, a minute or two from PyPI."""
STEP_TIMEOUT = 120.0
"""Seconds for any other step: creating the environment, ``wb-manager``, pywb starting to answer."""
_MARKER = ".capreplay-installed"


@dataclass(frozen=True)
class ToolInstall:
    """A usable tool environment: where its commands are, and what :func:`ensure_pywb` had to do."""

    bin_dir: Path
    installed_now: bool
    """False when an earlier install was reused."""
    seconds: float

    def tool(self, name: str) -> str:
        """Absolute path of one of pywb's commands (``wayback``, ``wb-manager``, ``cdx-indexer``, ...)."""
        return str(self.bin_dir / name)


def ensure_pywb(venv: Path, *, python: str | None = None) -> ToolInstall:
    """pywb ``PYWB_VERSION`` in the virtual environment ``venv``, installed there first if needed.

    Safe to call from several processes at once (a file lock serialises installs) and idempotent.
    """
    check = "import pywb, gevent; print(pywb.__version__)"
    return _ensure(venv, "pywb", PYWB_VERSION, check, "wayback", python)


def ensure_py_wacz(venv: Path, *, python: str | None = None) -> ToolInstall:
    """py-wacz ``PY_WACZ_VERSION`` (the ``wacz`` command) in ``venv``, installed there first if needed."""
    check = "from importlib.metadata import version; print(version('wacz'))"
    return _ensure(venv, "wacz", PY_WACZ_VERSION, check, "wacz", python)


def _ensure(venv: Path, package: str, wanted: str, check: str, command: str, python: str | None) -> ToolInstall:
    started = time.monotonic()
    venv = venv.absolute()  # its commands are run from other working folders (the collection's)
    venv.parent.mkdir(parents=True, exist_ok=True)
    with locked(venv.parent / f".{venv.name}.lock"):
        installed_now = not _ready(venv, wanted, command)
        if installed_now:
            python = python or os.environ.get("CAPREPLAY_PYWB_PYTHON") or _this_python()
            _install(venv, python, package, wanted, check)
    return ToolInstall(bin_dir=venv / "bin", installed_now=installed_now, seconds=time.monotonic() - started)


def _ready(venv: Path, wanted: str, command: str) -> bool:
    marker = venv / _MARKER
    return marker.is_file() and marker.read_text().strip() == wanted and (venv / "bin" / command).exists()


def _install(venv: Path, python: str, package: str, wanted: str, check: str) -> None:
    shutil.rmtree(venv, ignore_errors=True)  # whatever an interrupted install left
    uv = _find_uv()
    _run([uv, "venv", "--quiet", "--python", python, str(venv)], timeout=STEP_TIMEOUT, what="creating the environment")
    venv_python = str(venv / "bin" / "python")
    _run(  # bytecode compiled now, as pip would: where PYTHONDONTWRITEBYTECODE is set, no run would write it
        [uv, "pip", "install", "--quiet", "--compile-bytecode", "--python", venv_python, f"{package}=={wanted}"],
        timeout=INSTALL_TIMEOUT,
        what=f"installing {package}=={wanted}",
    )
    found = _run([venv_python, "-c", check], timeout=STEP_TIMEOUT, what=f"importing {package}").strip()
    if found != wanted:
        raise CapreplayError(f"{package} {found} was installed instead of {wanted}", where=venv)
    (venv / _MARKER).write_text(wanted + "\n")


def _this_python() -> str:
    # a virtual environment's python would tie pywb's environment to the project's; use the interpreter behind it
    return str(getattr(sys, "_base_executable", None) or sys.executable)


def _find_uv() -> str:
    """uv as scripts/setup.sh leaves it ($UV), else on PATH, else beside or inside the base Python."""
    # pip puts uv's command next to the interpreter it was installed into (a pyenv Python, say)
    beside_python = str(Path(_this_python()).with_name("uv"))
    for candidate in (os.environ.get("UV"), shutil.which("uv"), beside_python):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    with contextlib.suppress(ImportError):
        import uv  # type: ignore[import-not-found, unused-ignore]  # only where pip installed uv into this Python

        return str(uv.find_uv_bin())
    raise CapreplayError("uv is needed to install pywb and was not found (run scripts/setup.sh)")


def _clean_env() -> dict[str, str]:
    """This environment without what points uv or Python at the project's own virtual environment."""
    env = dict(os.environ)
    for name in ("VIRTUAL_ENV", "UV_PYTHON", "PYTHONPATH", "PYTHONHOME", "UV_PROJECT_ENVIRONMENT"):
        env.pop(name, None)
    return env


def _run(args: list[str], *, timeout: float, what: str, cwd: Path | None = None) -> str:
    """Run a command to its end within ``timeout``; its stdout, or an error carrying its output."""
    try:
        done = subprocess.run(
            args, cwd=cwd, env=_clean_env(), capture_output=True, text=True, timeout=timeout, check=False
        )
    except subprocess.TimeoutExpired as e:
        raise CapreplayError(f"{what} did not finish within {timeout:.0f} s: {' '.join(args)}") from e
    except OSError as e:
        raise CapreplayError(f"{what} could not start: {e}", where=args[0]) from e
    if done.returncode != 0:
        output = (done.stderr or done.stdout).strip()[-2000:]
        raise CapreplayError(f"{what} failed (exit status {done.returncode}): {' '.join(args)}\n{output}")
    return done.stdout


def add_collection(pywb: ToolInstall, root: Path, name: str, wacz: Path) -> None:
    """``wb-manager init NAME`` and ``wb-manager add --unpack-wacz NAME WACZ`` in the folder ``root``.

    pywb 2.10 copies the WACZ's WARCs into the collection and merges its ``indexes/*.cdx(.gz)`` into the
    collection's index with the WARC file names rewritten; it does not index the WARCs itself.
    """
    root.mkdir(parents=True, exist_ok=True)
    _run([pywb.tool("wb-manager"), "init", name], cwd=root, timeout=STEP_TIMEOUT, what="wb-manager init")
    _run(
        [pywb.tool("wb-manager"), "add", "--unpack-wacz", name, str(wacz)],
        cwd=root,
        timeout=STEP_TIMEOUT,
        what="wb-manager add --unpack-wacz",
    )


@dataclass
class Wayback:
    """A running ``wayback`` server on 127.0.0.1."""

    port: int
    process: subprocess.Popen[bytes]
    log: Path

    def url(self, path: str) -> str:
        """``http://127.0.0.1:PORT/`` + ``path``."""
        return f"http://127.0.0.1:{self.port}/{path.lstrip('/')}"


@contextlib.contextmanager
def running_wayback(pywb: ToolInstall, root: Path) -> Iterator[Wayback]:
    """Serve the collections under ``root`` on a free port of 127.0.0.1 until the block ends."""
    server = _start(pywb, root)
    try:
        yield server
    finally:
        _stop(server.process)


def _start(pywb: ToolInstall, root: Path, attempts: int = 3) -> Wayback:
    log = root / "wayback.log"
    for _ in range(attempts):
        port = _free_port()
        with open(log, "wb") as out:
            process = subprocess.Popen(
                [pywb.tool("wayback"), "--bind", "127.0.0.1", "--port", str(port)],
                cwd=root,
                env=_clean_env(),
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        server = Wayback(port=port, process=process, log=log)
        if _wait_until_serving(server):
            return server
        _stop(process)  # most likely another process took the port in between: try another one
    raise CapreplayError(f"wayback did not start serving:\n{log.read_text(errors='replace')[-2000:]}", where=log)


def _free_port() -> int:
    # wayback cannot report a port it chose itself, so pick one; _start retries if it is taken meanwhile
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _wait_until_serving(server: Wayback) -> bool:
    deadline = time.monotonic() + STEP_TIMEOUT
    while time.monotonic() < deadline and server.process.poll() is None:
        try:
            with urllib.request.urlopen(server.url("/"), timeout=5):
                return True
        except urllib.error.HTTPError:
            return True  # it answers, which is all this waits for
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            time.sleep(0.1)
    return False


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)
