"""The BrowserGym adapter's own tests (``adapters/browsergym/tests``), run in the adapter's locked environment as a
subprocess, since its packages (BrowserGym, gymnasium) are not the core's; under ``strace -f``, so that nothing its
episodes, their browsers (BrowserGym's, its chat window's) or the judge's browser sent left the machine."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest

from tests.support.paths import ROOT
from tests.support.strace import STRACE_SYSCALLS, off_machine_packets

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PROJECT = ROOT / "adapters" / "browsergym"
TIMEOUT_S = 900


_CLOSE_START = re.compile(r"^(\d+)\s+close\((\d+)\s*<unfinished \.\.\.>$")
_CLOSE_END = re.compile(r"^(\d+)\s+<\.\.\. close resumed>")


def closes_at_entry(lines: Iterable[str]) -> Iterator[str]:
    """``strace -f`` lines with every interrupted ``close`` put where it started.

    The kernel frees a descriptor as ``close`` starts, so while one thread is still in ``close(23)`` another can get
    descriptor 23 from ``socket()``; strace then shows the close ending after the socket was made, and a parser that
    acts on a call when it ends forgets the new socket's kind (a UDP socket Chromium only connects, to learn its
    IPv6 route, looked like a TCP connection to 2001:4860:4860::8888 in this test's trace).
    """
    for line in lines:
        start = _CLOSE_START.match(line.strip())
        if start:
            yield f"{start.group(1)} close({start.group(2)}) = 0\n"
        elif not _CLOSE_END.match(line.strip()):
            yield line


def test_an_interrupted_close_counts_where_it_started() -> None:
    lines = [
        "7 clone3({flags=CLONE_VM|CLONE_FILES|CLONE_THREAD}, 88) = 8",  # 8 is a thread of 7: one descriptor table
        "7 close(23 <unfinished ...>",
        "8 socket(AF_INET6, SOCK_DGRAM, IPPROTO_IP) = 23",
        "7 <... close resumed>)              = 0",
        "8 connect(23, {sa_family=AF_INET6, sin6_port=htons(443), sin6_flowinfo=htonl(0), inet_pton(AF_INET6, "
        '"2001:4860:4860::8888", &sin6_addr), sin6_scope_id=0}, 28) = 0',
    ]
    assert off_machine_packets(closes_at_entry(lines)) == []
    # Taken in the order the calls ended, the close forgets the UDP socket and its connect looks like TCP.
    assert [p.address for p in off_machine_packets(lines)] == ["2001:4860:4860::8888"]


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
    with log.open(errors="replace") as lines:
        packets = off_machine_packets(closes_at_entry(lines))
    assert packets == [], packets[:5]
