"""One ``capreplay serve --proxy-port 0`` and one Chromium that can browse it both ways: directly, through the
host-resolver rules, and through the proxy (a browser context that names the proxy).

Tests that check a replay mechanism through the server and through the proxy hold both for their module.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from playwright.sync_api import Browser, sync_playwright

from capreplay.browser.launch import find_chromium
from capreplay.testing.serve_process import ChildServer, capreplay_serve

_PIN = "--ignore-certificate-errors-spki-list="
_RULES = "--host-resolver-rules="


@contextmanager
def serving_with_proxy(snapshot: Path) -> Iterator[dict[str, Any]]:
    """``capreplay serve --proxy-port 0`` on ``snapshot`` until the block ends; yields its first line."""
    server: ChildServer = capreplay_serve(snapshot, args=["--proxy-port", "0"])
    try:
        yield server.start()
    finally:
        server.stop()
        server.close()


@contextmanager
def browser_for_both(served: dict[str, Any]) -> Iterator[Browser]:
    """A Chromium with the server's ``chromium_args`` that trusts both the server's and the proxy's certificates,
    and resolves the proxy's own address (so a context may name the proxy)."""
    args = [a for a in served["chromium_args"] if not a.startswith(_PIN)]
    args = [a + ", EXCLUDE 127.0.0.1" if a.startswith(_RULES) else a for a in args]
    pins = [
        a.removeprefix(_PIN) for a in (*served["chromium_args"], *served["proxy_chromium_args"]) if a.startswith(_PIN)
    ]
    with sync_playwright() as pw:
        launched = pw.chromium.launch(executable_path=find_chromium(), args=[*args, _PIN + ",".join(pins)])
        try:
            yield launched
        finally:
            launched.close()
