"""The BrowserGym adapter's own tests (``adapters/browsergym/tests``), run in the adapter's locked environment as a
subprocess, since its packages (BrowserGym, gymnasium) are not the core's; under ``strace -f``, so that nothing its
episodes, their browsers (BrowserGym's, its chat window's) or the judge's browser sent left the machine."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support.paths import ROOT
from tests.support.strace import STRACE_SYSCALLS, off_machine_packets

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PROJECT = ROOT / "adapters" / "browsergym"
TIMEOUT_S = 900


def _uv() -> str:
    uv = os.environ.get("UV") or shutil.which("uv")
    assert uv, "uv is missing: scripts/setup.sh installs it and exports UV"
    return uv


def test_the_adapters_tests_pass_and_nothing_leaves_the_machine(tmp_path: Path) -> None:
    strace = shutil.which("strace")
    assert strace, "strace is missing: scripts/setup.sh installs it (apt-get install strace)"
    log = tmp_path / "strace.log"
    command = [_uv(), "run", "--offline", "--project", str(PROJECT), "--locked",
               "pytest", str(PROJECT / "tests"), "-q", "-p", "no:cacheprovider"]  # fmt: skip
    # The core's environment must not stand in for the adapter's.
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME")}
    run = subprocess.run(
        [strace, "-f", "--seccomp-bpf", "-qq", "-e", STRACE_SYSCALLS, "-o", str(log), *command],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=TIMEOUT_S, check=False,
    )  # fmt: skip
    output = run.stdout + run.stderr
    assert run.returncode == 0, output[-4000:]
    summary = run.stdout.strip().splitlines()[-1]  # pytest's last line (uv may write to stderr after it)
    assert " passed" in summary and "failed" not in summary and "error" not in summary, summary
    # A skip there is a test that did not run: a missing dependency must fail here, not pass unseen.
    assert "skipped" not in summary and "xfail" not in summary and "deselected" not in summary, summary
    with log.open(errors="replace") as lines:
        packets = off_machine_packets(lines)
    assert packets == [], packets[:5]
