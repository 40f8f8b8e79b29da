"""A user's own Chromium, launched with nothing but ``capreplay serve``'s ``chromium_args``, sends nothing off the
machine under ``strace -f``, whatever a page sends it to: a host outside the snapshot, an IP literal, a WebRTC peer,
a WebSocket to an unknown host.

The browser is the real binary started directly, not through Playwright's launcher, which adds flags of its own
(``--disable-background-networking`` and a ``--disable-features`` list among them) that could hide a leak; and its
profile is a fresh empty folder, so no capreplay preference helps it. Only what a headless launch needs is added:
``--headless`` (no display), ``--user-data-dir`` (that empty profile), ``--remote-debugging-port=0`` (the test
drives it over CDP, on loopback) and, as root, ``--no-sandbox`` (Chromium refuses to start as root without it).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Error as PlaywrightError, Page, sync_playwright

from capreplay.browser.flags import REFUSED
from capreplay.browser.launch import find_chromium
from capreplay.testing.serve_process import capreplay_serve
from tests.support.probes import WEBRTC, WEBSOCKET
from tests.support.processes import descendants
from tests.support.strace import STRACE_SYSCALLS, Packet, off_machine_packets

pytestmark = pytest.mark.browser

HOME = "https://www.shop.test/"
GRACE_MS = 3000
"""How long a case waits after its request failed: the error page's DNS probe, when there is one, starts after."""
START_TIMEOUT_S = 60.0


@dataclass
class TracedChromium:
    """A plain Chromium under ``strace -f``, its page, its trace log, and what ``serve`` printed."""

    page: Page
    log: Path
    served: dict[str, Any]

    def lines(self) -> list[str]:
        """The trace so far."""
        return self.log.read_text(errors="replace").splitlines()

    def leaks_since(self, before: int) -> list[Packet]:
        """The off-machine packets the browser sent after the first ``before`` of them, once the grace is over.

        The whole trace is parsed each time, since a send is judged by where its socket was connected earlier.
        """
        self.page.wait_for_timeout(GRACE_MS)
        lines = self.lines()
        # Without the browser's own connection to the replay server in it, an empty trace would prove nothing.
        port = self.served["https_port"]
        assert any("connect(" in line and f"htons({port})" in line and "127.0.0.1" in line for line in lines), (
            f"strace saw no connection to the replay server in {len(lines)} lines"
        )
        return off_machine_packets(lines)[before:]

    def packets(self) -> int:
        """How many off-machine packets the trace holds now."""
        return len(off_machine_packets(self.lines()))


def _plain_launch(chromium: str, profile: Path, args: list[str]) -> list[str]:
    sandbox = ["--no-sandbox"] if os.geteuid() == 0 else []
    return [chromium, "--headless", *sandbox, f"--user-data-dir={profile}", "--remote-debugging-port=0", *args]


def _devtools_port(profile: Path, proc: subprocess.Popen[bytes]) -> int:
    """The CDP port Chromium chose, from the ``DevToolsActivePort`` file it writes into its profile."""
    active = profile / "DevToolsActivePort"
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        assert proc.poll() is None, f"Chromium exited with status {proc.returncode}"
        lines = active.read_text().splitlines() if active.exists() else []
        if len(lines) >= 2:  # port, then path: the file is complete
            return int(lines[0])
        time.sleep(0.1)
    raise AssertionError(f"Chromium wrote no DevToolsActivePort in {START_TIMEOUT_S:.0f} s")


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """End strace and the browser it traces: strace detaches when signalled and would leave the browser running,
    so the browser's processes are signalled, and strace ends when they have."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in sorted(descendants(proc.pid)):
            with contextlib.suppress(ProcessLookupError):  # it ended on its own meanwhile
                os.kill(pid, sig)
        try:
            proc.wait(timeout=30)
            return
        except subprocess.TimeoutExpired:
            continue
    proc.kill()
    proc.wait(timeout=30)


@pytest.fixture(scope="module")
def chromium(committed_snapshot: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[TracedChromium]:
    """``capreplay serve`` on the committed snapshot, and a plain Chromium with its ``chromium_args`` under strace,
    on the snapshot's home page."""
    strace = shutil.which("strace")
    assert strace, "strace is missing: scripts/setup.sh installs it (apt-get install strace)"
    binary = find_chromium()
    assert binary, "no Chromium found"
    folder = tmp_path_factory.mktemp("plain-chromium")
    profile, log = folder / "profile", folder / "chromium.strace"
    profile.mkdir()
    server = capreplay_serve(committed_snapshot)
    try:
        served = server.start()
        command = [strace, "-f", "-qq", "-e", STRACE_SYSCALLS, "-o", str(log),
                   *_plain_launch(binary, profile, served["chromium_args"]), "about:blank"]  # fmt: skip
        proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            port = _devtools_port(profile, proc)
            with sync_playwright() as pw:
                browser = pw.chromium.connect_over_cdp(f"http://127.0.0.1:{port}")
                context = browser.contexts[0]
                page = context.pages[0] if context.pages else context.new_page()
                page.goto(HOME)
                yield TracedChromium(page, log, served)
                browser.close()
        finally:
            _stop(proc)
    finally:
        server.close()


def _failed_navigation(page: Page, url: str) -> str:
    with pytest.raises(PlaywrightError) as failed:
        page.goto(url)
    return failed.value.message


def test_the_plain_browser_browses_the_snapshot(chromium: TracedChromium) -> None:
    before = chromium.packets()
    chromium.page.goto(HOME)
    assert chromium.page.title() == "Fixture Shop"
    assert chromium.page.evaluate("() => document.querySelector('img').naturalWidth") > 0  # another archived host
    assert chromium.leaks_since(before) == []


def test_an_unknown_host_is_refused_and_its_error_page_sends_nothing(chromium: TracedChromium) -> None:
    before = chromium.packets()
    error = _failed_navigation(chromium.page, "https://not-in-snapshot.invalid/")
    # The error page's DNS probe, after a navigation failed to resolve, is what leaked.
    assert chromium.leaks_since(before) == []
    assert "net::ERR_CONNECTION_REFUSED" in error
    host, port = REFUSED.split(":")
    assert any("connect(" in line and f"htons({port})" in line and host in line for line in chromium.lines())


@pytest.mark.parametrize("url", ["http://203.0.113.7/", "http://[2001:db8::7]/"])
def test_an_ip_literal_is_refused_and_sends_nothing(chromium: TracedChromium, url: str) -> None:
    before = chromium.packets()
    error = _failed_navigation(chromium.page, url)
    assert chromium.leaks_since(before) == []
    assert "net::ERR_CONNECTION_REFUSED" in error


def test_a_webrtc_peer_gets_no_candidate_and_sends_nothing(chromium: TracedChromium) -> None:
    chromium.page.goto(HOME)
    before = chromium.packets()
    # STUN servers on an IP literal and on a host name: WebRTC would send UDP past the resolver rules.
    assert chromium.page.evaluate(WEBRTC) == []
    assert chromium.leaks_since(before) == []


def test_a_websocket_to_an_unknown_host_fails_and_sends_nothing(chromium: TracedChromium) -> None:
    chromium.page.goto(HOME)
    before = chromium.packets()
    assert chromium.page.evaluate(WEBSOCKET, "wss://unknown.example/") == "error"
    assert chromium.leaks_since(before) == []
