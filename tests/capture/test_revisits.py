"""A capture stores each payload once: a response whose payload an earlier record holds becomes a revisit.

The origin serves two stylesheets with the very same 4 KB body under two URLs, two short scripts with the same
body (too short to be worth a revisit), and a JSON document the page fetches twice without the cache. Captured,
the second stylesheet and the second JSON are revisit records that refer to the first, the file passes
``warcio check``, and replay answers every one of them with the bytes the origin sent.
"""

from __future__ import annotations

import functools
import gzip
import subprocess
import sys
from pathlib import Path

import pytest
from aiohttp import web
from warcio.archiveiterator import ArchiveIterator

from capreplay.capture.plan_file import parse_maps, parse_plan
from capreplay.capture.session import CaptureOptions, capture
from capreplay.capture.warc_writer import ARCHIVE_FILE, REVISIT_MIN_BYTES
from capreplay.replay.server import ReplayServer
from capreplay.util.local_server import LocalServer
from tests.support.raw_http import raw_get

pytestmark = pytest.mark.browser

HOST = "www.revisit.test"
STYLE = ("body { color: #123456; }\n" + "".join(f".rule-{n} {{ margin: {n}px; }}\n" for n in range(200))).encode()
SCRIPT = b"document.title += '.';\n"
DATA = ('{"rows": [' + ", ".join(f'{{"n": {n}, "square": {n * n}}}' for n in range(120)) + "]}").encode()
PAGE = """<!doctype html><html><head><title>revisits</title>
<link rel="stylesheet" href="/a.css"><link rel="stylesheet" href="/b.css">
<script src="/one.js"></script><script src="/two.js"></script></head>
<body><p id="out">loading</p><script>
(async () => {
  const first = await (await fetch("/data.json", {cache: "no-store"})).json();
  const second = await (await fetch("/data.json", {cache: "no-store"})).json();
  document.getElementById("out").textContent = first.rows.length + second.rows.length;
})();
</script></body></html>"""


class _Origin(LocalServer):
    def application(self) -> web.Application:
        async def answer(body: bytes, content_type: str, _: web.Request) -> web.Response:
            return web.Response(body=body, content_type=content_type, headers={"Cache-Control": "no-store"})

        routes = {"/": (PAGE.encode(), "text/html"), "/a.css": (STYLE, "text/css"), "/b.css": (STYLE, "text/css"),
                  "/one.js": (SCRIPT, "text/javascript"), "/two.js": (SCRIPT, "text/javascript"),
                  "/data.json": (DATA, "application/json")}  # fmt: skip
        app = web.Application()
        for path, (body, kind) in routes.items():
            app.router.add_get(path, functools.partial(answer, body, kind))
        return app


def _records(warc: Path) -> list[tuple[str, str, str | None, str | None]]:
    """(type, URL, record id, id it refers to) of each response or revisit record, in file order."""
    with warc.open("rb") as f:
        return [(r.rec_type, r.rec_headers.get_header("WARC-Target-URI"), r.rec_headers.get_header("WARC-Record-ID"),
                 r.rec_headers.get_header("WARC-Refers-To"))
                for r in ArchiveIterator(f) if r.rec_type in ("response", "revisit")]  # fmt: skip


async def test_identical_payloads_are_stored_once_and_replayed_in_full(tmp_path: Path) -> None:
    assert len(STYLE) > 4 * REVISIT_MIN_BYTES and len(DATA) > REVISIT_MIN_BYTES > len(SCRIPT)
    out = tmp_path / "snap"
    async with _Origin() as origin:
        plan = parse_plan({"pages": [{"url": f"http://{HOST}/", "actions": [{"type": "wait_for_network_idle"}]}]},
                          "plan")  # fmt: skip
        result = await capture(CaptureOptions(out=out, plan=plan, progress=False,
                                              maps=parse_maps([f"{HOST}=127.0.0.1:{origin.port}"])))  # fmt: skip
    assert result.failed == []
    records = _records(out / ARCHIVE_FILE)
    by_url: dict[str, list[tuple[str, str | None, str | None]]] = {}
    for kind, url, record_id, refers_to in records:
        by_url.setdefault(url.removeprefix(f"http://{HOST}"), []).append((kind, record_id, refers_to))
    css = by_url["/a.css"] + by_url["/b.css"]
    assert sorted(kind for kind, _, _ in css) == ["response", "revisit"]
    original = next(record_id for kind, record_id, _ in css if kind == "response")
    assert [refers for kind, _, refers in css if kind == "revisit"] == [original]
    assert [kind for kind, _, _ in by_url["/data.json"]] == ["response", "revisit"]
    assert by_url["/data.json"][1][2] == by_url["/data.json"][0][1]
    assert [kind for kind, _, _ in by_url["/one.js"] + by_url["/two.js"]] == ["response", "response"]
    check = subprocess.run([sys.executable, "-m", "warcio.cli", "check", str(out / ARCHIVE_FILE)],
                           capture_output=True, text=True, check=False)  # fmt: skip
    assert check.returncode == 0, check.stdout + check.stderr

    async with ReplayServer(out) as info:
        for path, body in (("/a.css", STYLE), ("/b.css", STYLE), ("/data.json", DATA), ("/two.js", SCRIPT)):
            got = await raw_get(info.http_port, f"http://{HOST}{path}", tls=False)
            head, _, payload = got.partition(b"\r\n\r\n")
            assert head.startswith(b"HTTP/1.1 200"), head
            if b"content-encoding: gzip" in head.lower():
                payload = gzip.decompress(payload)
            assert payload == body, path
