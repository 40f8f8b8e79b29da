"""A pinned set of packages in a virtual environment of its own, installed with uv the first time, reused after.

The applications pin packages that capreplay's lock does not hold (JupyterLab brings about 100, Gradio pandas
and numpy), so each gets its own environment, as pywb does (:mod:`capreplay.testing.pywb`, whose uv helpers
this reuses). The marker file lists the exact requirements and is written last, so an install that was cut
short, or one made for other versions, is redone; an environment that is ready is recognised by reading
one small file, well under a second.
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

from capreplay.errors import CapreplayError
from capreplay.testing.pywb import INSTALL_TIMEOUT, STEP_TIMEOUT, ToolInstall, _find_uv, _run, _this_python
from capreplay.util.files import locked

_MARKER = ".capreplay-installed"


def ensure_env(venv: Path, requirements: list[str], *, check: str, python: str | None = None) -> ToolInstall:
    """The environment ``venv`` with exactly ``requirements`` (``name==version`` each), installed first if needed.

    ``check`` is Python code run in the new environment that must succeed (an import of the application), so
    that an install which "succeeded" with an unusable package fails here rather than in the test using it.
    Safe to call from several processes at once (a file lock serialises installs) and idempotent.
    """
    unpinned = [r for r in requirements if "==" not in r]
    if unpinned:
        raise CapreplayError(f"requirements must be pinned (name==version): {', '.join(unpinned)}")
    started = time.monotonic()
    venv = venv.absolute()
    venv.parent.mkdir(parents=True, exist_ok=True)
    wanted = "\n".join(sorted(requirements))
    with locked(venv.parent / f".{venv.name}.lock"):
        marker = venv / _MARKER
        installed_now = not (marker.is_file() and marker.read_text().strip() == wanted)
        if installed_now:
            _install(venv, python or os.environ.get("CAPREPLAY_APPS_PYTHON") or _this_python(), requirements, check)
            marker.write_text(wanted + "\n")
    return ToolInstall(bin_dir=venv / "bin", installed_now=installed_now, seconds=time.monotonic() - started)


def _install(venv: Path, python: str, requirements: list[str], check: str) -> None:
    shutil.rmtree(venv, ignore_errors=True)  # whatever an interrupted or outdated install left
    uv = _find_uv()
    _run([uv, "venv", "--quiet", "--python", python, str(venv)], timeout=STEP_TIMEOUT, what="creating the environment")
    venv_python = str(venv / "bin" / "python")
    _run(  # bytecode now: where PYTHONDONTWRITEBYTECODE is set, every start would compile the imports again
        [uv, "pip", "install", "--quiet", "--compile-bytecode", "--python", venv_python, *requirements],
        timeout=INSTALL_TIMEOUT,
        what=f"installing {' '.join(requirements)}",
    )
    _run([venv_python, "-c", check], timeout=STEP_TIMEOUT, what=f"checking the install in {venv.name}")
