"""``capreplay verify`` on a page whose WebSocket handshakes are answered without their messages: one whose archive
holds no messages record, and one whose page closes the connection before the server's first message is due.
Neither is a hit: each is a miss of something archived, and verify exits 1 (the issue's rule: a handshake answered
without its messages is not a hit).

The snapshot is a real one, imported from a WARC written byte by byte in capreplay's own layout (handshakes under
https://, the messages record right after its response); verify drives a real Chromium against it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli import cli
from tests.support.foreign_warc import gz, http, page, record, request, rid, warcinfo

pytestmark = pytest.mark.browser

HOST = "ws.unplayed.test"
PAGE = f"https://{HOST}/hasty.html"
HTML = b"""<!doctype html><html><head><meta charset=utf-8><title>hasty</title></head><body><script>
const hasty = new WebSocket("wss://" + location.host + "/ws/slow");
hasty.onopen = () => setTimeout(() => hasty.close(1000, "in a hurry"), 50);
const bare = new WebSocket("wss://" + location.host + "/ws/bare");
</script></body></html>"""
SLOW = [  # the server's first message came 0.9 s after the handshake: the page has left by then
    {"ts": 0.9, "type": "receive", "opcode": 1, "payloadData": "late news"},
    {"ts": 1.0, "type": "receive", "opcode": 1, "payloadData": "later news"},
]


def _handshake(n: int, path: str) -> list[bytes]:
    head = [
        ("Upgrade", "websocket"),
        ("Connection", "Upgrade"),
        ("Sec-WebSocket-Accept", "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="),
    ]
    upgrade = http(f"GET {path} HTTP/1.1", [("Host", HOST), ("Upgrade", "websocket"), ("Connection", "Upgrade")])
    return [
        page(n, f"https://{HOST}{path}", b"", headers=head, status="101 Switching Protocols"),
        record("request", f"https://{HOST}{path}", upgrade, n=n + 1, headers=[("WARC-Concurrent-To", rid(n))]),
    ]


@pytest.fixture(scope="module")
def snapshot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The page and its two handshakes, only ``/ws/slow`` with a messages record, imported."""
    folder = tmp_path_factory.mktemp("ws-unplayed")
    slow, bare = _handshake(4, "/ws/slow"), _handshake(7, "/ws/bare")
    messages = b"".join(json.dumps(line).encode() + b"\n" for line in SLOW)
    warc = folder / "hasty.warc.gz"
    warc.write_bytes(gz(
        warcinfo(1, "software: capreplay\r\n"), page(2, PAGE, HTML), request(3, PAGE, of=2),
        slow[0],
        record("resource", f"wss://{HOST}/ws/slow", messages, n=6, content_type="application/jsonl",
               headers=[("WARC-Concurrent-To", rid(4)), ("WARC-Resource-Type", "websocket")]),
        slow[1], *bare,
    ))  # fmt: skip
    out = folder / "snap"
    run = cli("import", str(warc), "-o", str(out), "--page", PAGE)
    assert run.returncode == 0, run.stderr
    return out


def test_verify_fails_a_page_whose_handshakes_got_none_of_their_messages(snapshot: Path) -> None:
    run = cli("verify", str(snapshot), "--json")
    assert run.returncode == 1, run.stdout[-2000:] + run.stderr[-2000:]
    report = json.loads(run.stdout)
    (page_report,) = report["pages"]
    handshakes = {r["url"].rsplit("/", 1)[1]: r for r in page_report["requests"] if "/ws/" in r["url"]}
    assert {name: (r["result"], r["rule"], r["archived"]) for name, r in handshakes.items()} == {
        "slow": ("miss", "websocket-messages-not-played", True),
        "bare": ("miss", "websocket-without-messages", True),
    }
    assert report["archived_misses"] >= 2
    sockets = {c["url"].rsplit("/", 1)[1]: c for c in page_report["websockets"]}
    slow, bare = sockets["slow"], sockets["bare"]
    assert (slow["handshake"], slow["messages"], slow["served"], slow["missed"], slow["closed_by"]) == (
        "hit",
        2,
        0,
        2,
        "client",
    )
    assert (bare["handshake"], bare["messages"], bare["served"]) == ("miss", 0, 0)
