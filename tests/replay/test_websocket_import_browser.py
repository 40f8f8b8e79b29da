"""WebSockets archived in the form Browsertrix Crawler writes (iipc/warc-specifications issue 115): the handshake's
request and response records under ``wss://``, the messages record written later, after other records, and naming
the handshake's response, or its request. ``capreplay import`` takes them, ``warcio check`` passes on the snapshot,
a real Chromium replays both conversations, ``verify`` accounts for them, and ``export`` keeps the messages.

The WARC is written byte by byte (:mod:`tests.support.foreign_warc`); the page lists below follow from its records.
"""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser

from tests.support.both_doors import browser_for_both, serving_with_proxy
from tests.support.cli import cli
from tests.support.foreign_warc import gz, http, page, record, request, rid, sha1_b32, warcinfo

pytestmark = pytest.mark.browser

HOST = "ws.import.test"
PAGE = f"https://{HOST}/live.html"
HTML = b"""<!doctype html><html><head><meta charset=utf-8><title>live</title></head><body>
<ol id="a"></ol><ol id="b"></ol><script>
const closed = new Set();
const connect = (name, first) => {
  const list = document.getElementById(name);
  const log = (text) => { const li = document.createElement("li"); li.textContent = text; list.appendChild(li); };
  const ws = new WebSocket("wss://" + location.host + "/ws/" + name);
  ws.onopen = () => { if (first) { log("-> " + first); ws.send(first); } };
  ws.onmessage = (e) => log("<- " + e.data);
  ws.onclose = (e) => {
    log("closed " + e.code + " " + e.reason);
    closed.add(name);
    if (closed.size === 2) document.body.dataset.done = "1";
  };
};
connect("a", "hello");
connect("b", null);
</script></body></html>"""

MESSAGES_A = [
    {"ts": 0.01, "type": "send", "opcode": 1, "payloadData": "hello"},
    {"ts": 0.02, "type": "receive", "opcode": 1, "payloadData": "welcome"},
    {"ts": 0.03, "type": "receive", "opcode": 8, "closeCode": 1000, "closeReason": "done"},
]
MESSAGES_B = [
    {"ts": 0.01, "type": "receive", "opcode": 1, "payloadData": "tick 1"},
    {"ts": 0.02, "type": "receive", "opcode": 1, "payloadData": "tick 2"},
    {"ts": 0.03, "type": "receive", "opcode": 8, "closeCode": 1000, "closeReason": "market closed"},
]
EXPECTED = {
    "a": ["-> hello", "<- welcome", "closed 1000 done"],
    "b": ["<- tick 1", "<- tick 2", "closed 1000 market closed"],
}


def _handshake_request(n: int, path: str, of: int) -> bytes:
    headers = [("Host", HOST), ("Upgrade", "websocket"), ("Connection", "Upgrade"), ("Sec-WebSocket-Version", "13"),
               ("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="), ("Origin", f"https://{HOST}")]  # fmt: skip
    block = http(f"GET {path} HTTP/1.1", headers)
    return record("request", f"wss://{HOST}{path}", block, n=n, headers=[("WARC-Concurrent-To", rid(of))])


def _handshake_response(n: int, path: str) -> bytes:
    """A 101 whose payload digest covers the whole block: warcio reads no HTTP under ws(s), so this is the form
    that passes ``warcio check``."""
    headers = [("Upgrade", "websocket"), ("Connection", "Upgrade"),
               ("Sec-WebSocket-Accept", "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")]  # fmt: skip
    block = http("HTTP/1.1 101 Switching Protocols", headers)
    return record("response", f"wss://{HOST}{path}", block, n=n, payload_digest=sha1_b32(block))


def _messages(n: int, path: str, names: int, lines: list[dict[str, object]]) -> bytes:
    body = b"".join(json.dumps(line).encode() + b"\n" for line in lines)
    warc = [("WARC-Concurrent-To", rid(names)), ("WARC-Resource-Type", "websocket")]
    return record("resource", f"wss://{HOST}{path}", body, n=n, headers=warc, content_type="application/jsonl")


def browsertrix_form() -> bytes:
    """The page, two handshakes under ``wss://``, then their messages records: ``/ws/b``'s names the handshake's
    request record, ``/ws/a``'s its response record; neither follows the response it belongs to."""
    return gz(
        warcinfo(1, "software: Browsertrix-Crawler 1.9.0 (with warcio.js 2.4.4)\r\n"),
        page(2, PAGE, HTML),
        request(3, PAGE, of=2),
        _handshake_response(4, "/ws/a"),
        _handshake_request(5, "/ws/a", of=4),
        _handshake_response(6, "/ws/b"),
        _handshake_request(7, "/ws/b", of=6),
        _messages(8, "/ws/b", 7, MESSAGES_B),
        _messages(9, "/ws/a", 4, MESSAGES_A),
    )


@pytest.fixture(scope="module")
def snapshot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The WARC imported by ``capreplay import``."""
    folder = tmp_path_factory.mktemp("ws-import")
    warc = folder / "browsertrix.warc.gz"
    warc.write_bytes(browsertrix_form())
    out = folder / "snap"
    run = cli("import", str(warc), "-o", str(out), "--page", PAGE)
    assert run.returncode == 0, run.stderr
    return out


@pytest.fixture(scope="module")
def served(snapshot: Path) -> Iterator[dict[str, Any]]:
    """``capreplay serve --proxy-port 0`` on the imported snapshot: its first line."""
    with serving_with_proxy(snapshot) as first_line:
        yield first_line


@pytest.fixture(scope="module")
def browser(served: dict[str, Any]) -> Iterator[Browser]:
    """One Chromium for the server and its proxy."""
    with browser_for_both(served) as launched:
        yield launched


def _lists(browser: Browser, proxy_port: int | None) -> dict[str, list[str]]:
    proxy = {"server": f"http://127.0.0.1:{proxy_port}"} if proxy_port else None
    context = browser.new_context(proxy=proxy)  # type: ignore[arg-type]
    try:
        page = context.new_page()
        page.goto(PAGE)
        page.wait_for_selector("body[data-done]", state="attached", timeout=15_000)
        page.wait_for_timeout(300)
        return {name: page.eval_on_selector_all(f"#{name} li", "els => els.map(e => e.textContent)") for name in "ab"}
    finally:
        context.close()


def test_the_handshakes_are_indexed_under_the_url_the_browser_asks_for(snapshot: Path) -> None:
    lines = (snapshot / "index.cdxj").read_text().splitlines()
    handshakes = sorted(json.loads(line.split(" ", 2)[2])["url"] for line in lines if " " in line and "/ws/" in line)
    assert handshakes == [f"https://{HOST}/ws/a", f"https://{HOST}/ws/b"]
    check = subprocess.run([sys.executable, "-m", "warcio.cli", "check", *map(str, snapshot.glob("archive/*"))],
                           capture_output=True, text=True)  # fmt: skip
    assert check.returncode == 0, check.stdout + check.stderr


def test_chromium_replays_both_conversations_directly_and_through_the_proxy(
    browser: Browser, served: dict[str, Any]
) -> None:
    assert _lists(browser, None) == EXPECTED
    assert _lists(browser, served["proxy_port"]) == EXPECTED


def test_verify_accounts_for_both_connections(snapshot: Path) -> None:
    run = cli("verify", str(snapshot), "--json")  # not --strict: the page's favicon was never archived
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    assert json.loads(run.stdout)["archived_misses"] == 0
    (report,) = json.loads(run.stdout)["pages"]
    sockets = {c["url"]: (c["handshake"], c["messages"], c["served"], c["client_misses"]) for c in report["websockets"]}
    assert sockets == {f"https://{HOST}/ws/a": ("hit", 1, 1, 0), f"https://{HOST}/ws/b": ("hit", 2, 2, 0)}


def test_export_keeps_the_messages(snapshot: Path, tmp_path: Path) -> None:
    wacz = tmp_path / "out.wacz"
    assert cli("export", str(snapshot), "-o", str(wacz)).returncode == 0
    with zipfile.ZipFile(wacz) as z:
        warcs = [z.read(n) for n in z.namelist() if n.startswith("archive/")]
    copied = tmp_path / "copied.warc.gz"
    copied.write_bytes(b"".join(warcs))
    assert copied.read_bytes() == b"".join(p.read_bytes() for p in sorted(snapshot.glob("archive/*")))
    har = tmp_path / "out.har"
    assert cli("export", str(snapshot), "-o", str(har)).returncode == 0
    entries = {e["request"]["url"]: e for e in json.loads(har.read_text())["log"]["entries"]}
    for name, lines in (("a", MESSAGES_A), ("b", MESSAGES_B)):
        entry = entries[f"https://{HOST}/ws/{name}"]
        assert entry["response"]["status"] == 101
        got = [(m["type"], m["opcode"], m["data"]) for m in entry["_webSocketMessages"]]
        assert got == [(m["type"], m["opcode"], m.get("payloadData", m.get("closeReason"))) for m in lines]
