"""Running ``capreplay`` as a user would: a subprocess of this interpreter, its output captured."""

from __future__ import annotations

import subprocess
import sys


def cli(*args: str, timeout: int = 300) -> subprocess.CompletedProcess[str]:
    """``python -m capreplay ARGS``; the exit status is the caller's to check."""
    return subprocess.run([sys.executable, "-m", "capreplay", *args], capture_output=True, text=True,
                          timeout=timeout, check=False)  # fmt: skip
