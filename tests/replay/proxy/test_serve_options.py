"""``serve --proxy-port`` from the command line: bad ports, a port already taken, and Ctrl-C."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

from tests.support.cli import cli
from tests.support.signals import default_sigint


def test_one_port_for_the_proxy_and_the_server_is_refused(committed_snapshot: Path) -> None:
    run = cli("serve", str(committed_snapshot), "--proxy-port", "8123", "--https-port", "8123", timeout=120)
    assert run.returncode == 2 and run.stdout == ""
    assert run.stderr.strip().splitlines() == [
        "capreplay serve: --proxy-port and --https-port are both 8123: one port cannot serve both"
    ]


def test_a_proxy_port_out_of_range_is_refused(committed_snapshot: Path) -> None:
    run = cli("serve", str(committed_snapshot), "--proxy-port", "70000", timeout=120)
    assert run.returncode == 2 and run.stdout == ""
    assert "--proxy-port" in run.stderr and "port number" in run.stderr


def test_a_proxy_port_in_use_is_one_line_and_nothing_served(committed_snapshot: Path) -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        run = cli("serve", str(committed_snapshot), "--proxy-port", str(port), timeout=300)
    assert run.returncode == 1 and run.stdout == ""
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and f"127.0.0.1:{port}" in lines[0] and "address already in use" in lines[0], run.stderr


def test_a_new_ca_is_announced_and_ctrl_c_stops_the_server_and_its_proxy(
    committed_snapshot: Path, tmp_path: Path
) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "capreplay", "serve", str(committed_snapshot), "--proxy-port", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=default_sigint,
        env={**os.environ, "CAPREPLAY_CACHE_DIR": str(tmp_path / "fresh-cache")},
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        first = json.loads(proc.stdout.readline())
        with socket.create_connection(("127.0.0.1", first["proxy_port"]), timeout=10):
            pass  # it listens
    finally:
        proc.send_signal(signal.SIGINT)
        code = proc.wait(timeout=60)
    assert proc.stderr is not None
    stderr = proc.stderr.read()
    assert code == 0, stderr
    # A user with no CA for this snapshot yet is told which certificate to trust.
    note = f"capreplay serve: made the snapshot's CA (new); clients must trust {first['ca_cert']}"
    assert stderr.splitlines() == [note]
    assert Path(first["ca_cert"]).is_relative_to(tmp_path / "fresh-cache")
    with socket.socket() as probe:
        assert probe.connect_ex(("127.0.0.1", first["proxy_port"])) != 0  # and the port is closed
