"""Nothing leaves the machine: strace on the browser's whole process tree during a replay."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from playwright.async_api import Error as PlaywrightError

from capreplay.browser.actions import load_page
from capreplay.browser.launch import BrowserSettings, find_chromium, open_browser
from capreplay.replay.server import ReplayServer
from tests.support.probes import WEBRTC
from tests.support.signals import default_sigint
from tests.support.strace import STRACE_SYSCALLS, off_machine_packets

pytestmark = pytest.mark.browser  # both tests browse the committed snapshot with Chromium


@pytest.fixture
def traced_chromium(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A wrapper that runs the real Chromium under ``strace -f``; capreplay.browser launches it."""
    strace = shutil.which("strace")
    assert strace, "strace is missing: scripts/setup.sh installs it (apt-get install strace)"
    chromium = find_chromium()
    assert chromium, "no Chromium found"
    log = tmp_path / "strace.log"
    wrapper = tmp_path / "chromium-traced"
    wrapper.write_text(f'#!/bin/sh\nexec {strace} -f -qq -e {STRACE_SYSCALLS} -o {log} {chromium} "$@"\n')
    wrapper.chmod(0o755)
    monkeypatch.setenv("CAPREPLAY_CHROMIUM", str(wrapper))
    return log


async def test_replay_with_an_unknown_host_sends_nothing_off_the_machine(
    committed_snapshot: Path, traced_chromium: Path
) -> None:
    server = ReplayServer(committed_snapshot)
    info = await server.start()
    manifest = server.store.manifest
    try:
        async with open_browser(BrowserSettings(info.chromium_args, manifest.frozen_time, manifest.random_seed)) as ctx:
            page = ctx.pages[0]
            await load_page(page, "https://www.shop.test/", [])
            await page.evaluate("() => fetch('https://example.com/x', {mode: 'no-cors'}).catch(() => null)")
            assert await page.evaluate(WEBRTC) == []
            # A main-frame navigation to an unknown host: the error page's DNS probe is what used to leak.
            with pytest.raises(PlaywrightError, match="ERR_CONNECTION_REFUSED"):
                await page.goto("https://unknown-host.example/")
            await page.wait_for_timeout(2000)
    finally:
        await server.stop()
    lines = traced_chromium.read_text(errors="replace").splitlines()
    # The trace must have seen the browser's own traffic to the replay server, or it proves nothing.
    https_port = f"htons({info.https_port})"
    assert any("connect(" in line and https_port in line and "127.0.0.1" in line for line in lines), (
        f"strace saw no connection to the replay server in {len(lines)} lines"
    )
    assert off_machine_packets(lines) == []


def test_serve_prints_the_contract_line_and_any_chromium_can_browse_with_it(committed_snapshot: Path) -> None:
    import json
    import signal
    import subprocess
    import sys

    from playwright.sync_api import sync_playwright

    proc = subprocess.Popen(
        [sys.executable, "-m", "capreplay", "serve", str(committed_snapshot)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ}, preexec_fn=default_sigint,
    )
    try:
        assert proc.stdout is not None
        first = json.loads(proc.stdout.readline())
        assert set(first) == {"http_port", "https_port", "hosts", "chromium_args"}
        assert first["hosts"] == ["api.data.test", "static.cdn.test", "widget.embed.test", "www.shop.test"]
        # A plain Playwright Chromium, launched without capreplay.browser: the printed arguments suffice.
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=find_chromium(), args=first["chromium_args"])
            try:
                page = browser.new_page()
                page.goto("https://www.shop.test/")
                assert page.title() == "Fixture Shop"
                with pytest.raises(PlaywrightError, match="ERR_CONNECTION_REFUSED"):
                    page.goto("https://example.com/")
            finally:
                browser.close()
    finally:
        proc.send_signal(signal.SIGINT)
        code = proc.wait(timeout=30)
    assert code == 0
