"""Chromium through ``capreplay serve --proxy-port``: it browses the snapshot, and under strace neither the
browser nor the proxy sends a packet off the machine, even when the page asks for hosts outside the snapshot."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import ssl
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Error as PlaywrightError, Page, sync_playwright

from capreplay.browser.launch import find_chromium
from capreplay.testing.serve_process import ChildServer, capreplay_serve
from capreplay.util.cache_folder import cache_dir
from tests.support.probes import WEBRTC
from tests.support.strace import STRACE_SYSCALLS, off_machine_packets

pytestmark = pytest.mark.browser

CONTRACT = {"http_port", "https_port", "hosts", "chromium_args"}
PROXY_KEYS = {"proxy_port", "ca_cert", "proxy_chromium_args"}



def _strace() -> str:
    strace = shutil.which("strace")
    assert strace, "strace is missing: scripts/setup.sh installs it (apt-get install strace)"
    return strace


def _stop_traced(server: ChildServer) -> list[int]:
    """Stop a server run under strace, and return its process ids: strace detaches when signalled and would
    leave the server running, so the server itself is sent SIGTERM, and strace ends when it does."""
    pids = []
    if server.running():
        pids = [int(child) for child in Path(f"/proc/{server.pid}/task/{server.pid}/children").read_text().split()]
        for pid in pids:
            os.kill(pid, signal.SIGTERM)
    server.stop()
    return pids


@pytest.fixture
def served(committed_snapshot: Path, tmp_path: Path) -> Iterator[tuple[ChildServer, Path]]:
    """``capreplay serve --proxy-port 0`` in a child process under ``strace -f``, and the trace log."""
    log = tmp_path / "serve.strace"
    prefix = [_strace(), "-f", "-qq", "-e", STRACE_SYSCALLS, "-o", str(log)]
    server = capreplay_serve(committed_snapshot, prefix=prefix, args=["--proxy-port", "0"])
    try:
        server.start()
        yield server, log
    finally:
        _stop_traced(server)
        server.close()


def _traced_chromium(tmp_path: Path) -> tuple[Path, Path]:
    chromium = find_chromium()
    assert chromium, "no Chromium found"
    log = tmp_path / "chromium.strace"
    wrapper = tmp_path / "chromium-traced"
    wrapper.write_text(f'#!/bin/sh\nexec {_strace()} -f -qq -e {STRACE_SYSCALLS} -o {log} {chromium} "$@"\n')
    wrapper.chmod(0o755)
    return wrapper, log


class _Listener:
    """A local TCP server that only counts the connections it gets: what a page could reach on loopback."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.accepted = 0
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.accepted += 1
            conn.close()

    def close(self) -> None:
        self.sock.close()
        self._thread.join(timeout=5)


def _browse(page: Page) -> None:
    """The snapshot's home page, then requests for hosts outside it: a fetch, WebRTC, a navigation."""
    page.goto("https://www.shop.test/")
    assert page.title() == "Fixture Shop"
    # The hero image comes from another archived host, through the same proxy.
    assert page.evaluate("() => document.querySelector('img').naturalWidth") > 0
    page.evaluate("() => fetch('https://example.com/x', {mode: 'no-cors'}).catch(() => null)")
    assert page.evaluate(WEBRTC) == []  # no candidate at all: WebRTC may not send UDP
    with pytest.raises(PlaywrightError, match="ERR_TUNNEL_CONNECTION_FAILED"):
        page.goto("https://unknown-host.example/")


def test_serve_with_a_proxy_adds_its_port_and_ca_and_chromium_browses_through_it(committed_snapshot: Path) -> None:
    server = capreplay_serve(committed_snapshot, args=["--proxy-port", "0"])
    listener = _Listener()
    try:
        first = server.start()
        assert set(first) == CONTRACT | PROXY_KEYS
        ca = Path(first["ca_cert"])
        assert ca.is_file() and ca.is_relative_to(cache_dir()) and not ca.is_relative_to(committed_snapshot.resolve())
        with sync_playwright() as pw:
            # A plain Playwright Chromium, launched without capreplay.browser: the printed arguments suffice.
            browser = pw.chromium.launch(executable_path=find_chromium(), args=first["proxy_chromium_args"])
            try:
                _browse(browser.new_page())
                # Loopback goes through the proxy too, which refuses it: the page cannot reach local services.
                response = browser.new_page().goto(f"http://127.0.0.1:{listener.port}/")
                assert response is not None and response.status == 403
                assert response.headers["x-capreplay"] == "refused"
            finally:
                browser.close()
        assert listener.accepted == 0
    finally:
        listener.close()
        server.close()


def test_nothing_leaves_the_machine_from_the_browser_or_the_proxy(
    served: tuple[ChildServer, Path], tmp_path: Path
) -> None:
    server, server_log = served
    port = server.info["proxy_port"]
    wrapper, browser_log = _traced_chromium(tmp_path)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(wrapper), args=server.info["proxy_chromium_args"])
        try:
            _browse(browser.new_page())
        finally:
            browser.close()
    # httpx too: an archived page, and hosts outside the snapshot on both schemes.
    tls = ssl.create_default_context(cafile=server.info["ca_cert"])
    with httpx.Client(proxy=f"http://127.0.0.1:{port}", verify=tls, trust_env=False, timeout=30) as client:
        assert client.get("https://static.cdn.test/css/shop.css").status_code == 200
        assert client.get("http://example.org/").status_code == 403
        with pytest.raises(httpx.ProxyError, match="403"):
            client.get("https://example.net/")
    # A tunnel that carries neither TLS nor HTTP: mitmproxy would pass it to the server, resolving its name first.
    with socket.create_connection(("127.0.0.1", port), timeout=30) as raw:
        raw.sendall(b"CONNECT www.shop.test:443 HTTP/1.1\r\nHost: www.shop.test:443\r\n\r\n")
        assert raw.recv(100).startswith(b"HTTP/1.1 200")
        raw.sendall(b"\x00\x01 neither TLS nor HTTP\r\n\r\n")
        assert raw.recv(100) == b""  # closed, with nothing from any server
    stopped = _stop_traced(server)
    assert stopped and not any(Path(f"/proc/{pid}").exists() for pid in stopped)  # no server left running
    browser_lines = browser_log.read_text(errors="replace").splitlines()
    server_lines = server_log.read_text(errors="replace").splitlines()
    # Both traces must have seen the traffic between them, or they prove nothing.
    assert any("connect(" in line and f"htons({port})" in line for line in browser_lines), "browser never reached it"
    assert any("bind(" in line and "sin_port=htons(0)" in line for line in server_lines)
    assert sum("accept4(" in line and "127.0.0.1" in line for line in server_lines) >= 1, "the proxy accepted nothing"
    # The outside hosts reached the proxy, which refused them rather than connecting anywhere.
    assert "refused CONNECT unknown-host.example:443" in server.stderr_text()
    assert "refused CONNECT example.com:443" in server.stderr_text()
    assert "refused CONNECT example.net:443" in server.stderr_text()
    assert "refused GET http://example.org/" in server.stderr_text()
    assert off_machine_packets(browser_lines) == []
    assert off_machine_packets(server_lines) == []
    # Stricter for the proxy, whatever the machine's resolver: it opens no connection at all, not even on loopback.
    assert [line for line in server_lines if "connect(" in line and "AF_INET" in line] == []
