"""WebSockets end to end: the WebSocket origin captured by capreplay's capture (real mitmproxy, real Chromium), then
replayed to Chromium by ``capreplay serve`` directly and through its proxy, and accounted for by ``capreplay verify``.

The pages: a chat (the server answers what the page says; the page closes), a ticker (the server pushes on a timer,
then closes), a page that closes its connection and opens it again, and binary frames. Each page lists what it sent,
received and how its connections closed; the lists below were written by hand from the origin's code.
"""

from __future__ import annotations

import asyncio
import io
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser

from capreplay.archive.warc.live import read_websocket_messages
from capreplay.archive.warc.read import iter_records
from capreplay.archive.warc.stored import StoredRecord
from capreplay.capture.plan_file import parse_maps
from capreplay.capture.session import CaptureOptions, capture
from capreplay.models.capture_plan import CapturePlan
from capreplay.testing.fixtures.websocket_site import HOST, PAGES, WebSocketSite
from tests.support.both_doors import browser_for_both, serving_with_proxy

pytestmark = pytest.mark.browser

EXPECTED = {
    "chat": ["→ hello", "← welcome", "← echo: hello", "→ how are you?", "← echo: how are you?", "closed 4001 bye"],
    "ticker": ["← tick 1: 107.01", "← tick 2: 114.02", "← tick 3: 121.03", "← tick 4: 128.04", "← tick 5: 135.05",
               "closed 4002 market closed"],
    "reopen": ["1 → round 1", "1 ← echo: round 1", "1 closed 1000", "2 → round 2", "2 ← echo: round 2",
               "2 closed 1000"],
    "binary": ["→ 01 02 03 fa", "← fa 03 02 01", "← 00 80 ff", "← binary done", "closed 1000"],
}  # fmt: skip


def _records(snapshot: Path) -> list[StoredRecord]:
    (warc,) = sorted(snapshot.glob("archive/*.warc.gz"))
    return list(iter_records(io.BytesIO(warc.read_bytes()), name=str(warc)))


@pytest.fixture(scope="module")
def snapshot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The four pages captured once, each held long enough for its conversation to end."""
    out = tmp_path_factory.mktemp("websockets") / "snap"

    async def run() -> None:
        async with WebSocketSite() as site:
            pages = [{"url": f"https://{HOST}/{p}.html", "actions": [{"type": "wait", "ms": 1200}]} for p in PAGES]
            opts = CaptureOptions(
                out=out, plan=CapturePlan.model_validate({"pages": pages}), maps=parse_maps(site.map_args()),
                progress=False,
            )  # fmt: skip
            result = await capture(opts)
        assert not result.failed and not result.errors, (result.failed, result.errors)

    asyncio.run(run())
    return out


@pytest.fixture(scope="module")
def served(snapshot: Path) -> Iterator[dict[str, Any]]:
    """``capreplay serve --proxy-port 0`` on the snapshot: its first line."""
    with serving_with_proxy(snapshot) as first_line:
        yield first_line


@pytest.fixture(scope="module")
def browser(served: dict[str, Any]) -> Iterator[Browser]:
    """One Chromium that browses the snapshot directly and through the proxy (a context picks the proxy)."""
    with browser_for_both(served) as launched:
        yield launched


def _conversations(browser: Browser, proxy_port: int | None) -> dict[str, list[str]]:
    """Every page's list once its conversation is over (through the proxy on ``proxy_port``, or directly)."""
    proxy = {"server": f"http://127.0.0.1:{proxy_port}"} if proxy_port else None
    context = browser.new_context(proxy=proxy)  # type: ignore[arg-type]
    try:
        page = context.new_page()
        seen = {}
        for name in PAGES:
            page.goto(f"https://{HOST}/{name}.html")
            page.wait_for_selector("body[data-done]", state="attached", timeout=15_000)
            page.wait_for_timeout(300)  # anything that would come after the end comes now
            seen[name] = page.eval_on_selector_all("#log li", "els => els.map(e => e.textContent)")
        return seen
    finally:
        context.close()


def test_capture_keeps_every_message_next_to_its_handshake(snapshot: Path) -> None:
    records = _records(snapshot)
    manifest = json.loads((snapshot / "manifest.json").read_text())
    assert manifest["websockets"] == {"connections": 5, "messages": 5 + 5 + 4 + 4, "cut": 0}
    logs = {}
    for i, record in enumerate(records):
        if record.rec_type != "resource":
            continue
        handshake = records[i - 1]
        assert handshake.rec_type == "response" and handshake.status == 101
        assert record.warc_header_values("WARC-Concurrent-To") == [handshake.record_id]
        assert record.url == "wss://" + str(handshake.url).removeprefix("https://")
        log = read_websocket_messages(str(record.url), record.payload)
        logs.setdefault(str(record.url).rsplit("/", 1)[1], []).append(log)
    chat, ticker, binary = logs["chat"][0], logs["ticker"][0], logs["binary"][0]
    assert [(m.type, m.text) for m in chat.messages[:-1]] == [
        ("send", "hello"), ("receive", "welcome"), ("receive", "echo: hello"), ("send", "how are you?"),
        ("receive", "echo: how are you?"),
    ]  # fmt: skip
    assert (chat.messages[-1].type, chat.messages[-1].close_code, chat.messages[-1].close_reason) == (
        "send",
        4001,
        "bye",
    )
    assert (ticker.messages[-1].type, ticker.messages[-1].close_code) == ("receive", 4002)
    gaps = [b.ts - a.ts for a, b in zip(ticker.messages, ticker.messages[1:-1], strict=False)]
    assert all(g >= 0.09 for g in gaps), gaps  # the origin's 0.1 s between ticks
    assert [m.payload for m in binary.messages if m.opcode == 2] == [bytes([1, 2, 3, 250]), bytes([250, 3, 2, 1]),
                                                                       bytes([0, 128, 255])]  # fmt: skip
    assert [[m.text for m in log.sent] for log in logs["echo"]] == [["round 1"], ["round 2"]]
    check = subprocess.run([sys.executable, "-m", "warcio.cli", "check", *map(str, snapshot.glob("archive/*"))],
                           capture_output=True, text=True)  # fmt: skip
    assert check.returncode == 0, check.stdout + check.stderr


def test_replay_plays_each_conversation_directly_and_through_the_proxy(
    browser: Browser, served: dict[str, Any]
) -> None:
    direct = _conversations(browser, None)
    assert direct == EXPECTED
    assert _conversations(browser, None) == direct  # a second replay: the same lists
    assert _conversations(browser, served["proxy_port"]) == EXPECTED


def test_verify_lists_every_connection_with_its_messages(snapshot: Path) -> None:
    run = subprocess.run([sys.executable, "-m", "capreplay", "verify", str(snapshot), "--json", "--strict"],
                         capture_output=True, text=True, timeout=300)  # fmt: skip
    report = json.loads(run.stdout)
    assert run.returncode == 0, run.stderr[-2000:]
    assert report["misses"] == 0 and report["archived_misses"] == 0
    sockets = {p["url"].rsplit("/", 1)[1]: p.get("websockets") for p in report["pages"]}
    assert sockets["chat.html"] == [
        {"url": f"https://{HOST}/ws/chat", "handshake": "hit", "messages": 3, "served": 3, "missed": 0,
         "client_messages": 2, "client_misses": 0, "closed_by": "client"}
    ]  # fmt: skip
    assert [(c["messages"], c["served"], c["closed_by"]) for c in sockets["ticker.html"]] == [(5, 5, "server")]
    assert [(c["messages"], c["served"], c["client_misses"]) for c in sockets["reopen.html"]] == [(1, 1, 0), (1, 1, 0)]
    assert [(c["messages"], c["served"], c["missed"]) for c in sockets["binary.html"]] == [(3, 3, 0)]
    for page in report["pages"]:
        assert {"url", "status", "requests"} <= set(page)
        handshakes = [r for r in page["requests"] if "/ws/" in r["url"]]
        assert handshakes and all(r["result"] == "hit" for r in handshakes)
