"""``capreplay verify`` fails a page whose replay differs from its capture beyond the fidelity threshold, even
when every request it made was answered.

The site: a front page that records the reader's consent in a cookie, and an article page whose text a
script fetches from an API only when that cookie is there (a consent wall, as news sites have). Captured in
that order, both pages replay as they were captured. The article replayed on its own, as an agent sent
straight to it would see it, gets every request it makes answered from the snapshot, and still shows only the
wall: nothing but the comparison with what the capture saw tells it from a correct replay.
"""

from __future__ import annotations

import asyncio
import json
import re
import ssl
from collections.abc import Iterator
from pathlib import Path

import pytest
from aiohttp import web

from capreplay.capture.session import CaptureOptions, capture
from capreplay.certs.hosts import key_pem, leaf_certificate, new_key, server_context
from capreplay.models.capture_plan import CapturePlan
from capreplay.util.local_server import LocalServer
from tests.support.cli import cli

pytestmark = pytest.mark.browser

HOST = "www.consent.test"
FRONT = f"https://{HOST}/"
ARTICLE = f"https://{HOST}/article"
PARAGRAPHS = [f"Paragraph {i}: the harbour council met on the {i}th and agreed the new ferry timetable." for i in
              range(1, 25)]  # fmt: skip

FRONT_HTML = """<!doctype html><html><head><title>Consent Daily</title></head>
<body style="font: 16px sans-serif; margin: 0">
<h1 style="background: #123; color: #fff; margin: 0; padding: 24px">Consent Daily</h1>
<p style="padding: 24px">You agreed to our cookies. <a href="/article">Read today's article</a>.</p>
<script>document.cookie = "consent=yes; path=/";</script></body></html>"""

ARTICLE_HTML = """<!doctype html><html><head><title>Ferry timetable</title></head>
<body style="font: 16px sans-serif; margin: 0">
<h1 style="background: #123; color: #fff; margin: 0; padding: 24px">Consent Daily</h1>
<main id="story" style="padding: 0 24px"><p>Please accept our cookies on the front page to read on.</p></main>
<script>
if (document.cookie.includes("consent=yes")) {
  fetch("/api/article.json").then((r) => r.json()).then((article) => {
    const story = document.getElementById("story");
    story.innerHTML = "";
    for (const text of article.paragraphs) {
      const p = document.createElement("p");
      p.textContent = text;
      p.style.cssText = "background: #fde; padding: 4px";
      story.append(p);
    }
  });
}
</script></body></html>"""


class ConsentSite(LocalServer):
    """The site's origin over HTTPS on 127.0.0.1."""

    def application(self) -> web.Application:
        async def front(_: web.Request) -> web.Response:
            return web.Response(text=FRONT_HTML, content_type="text/html")

        async def article(_: web.Request) -> web.Response:
            return web.Response(text=ARTICLE_HTML, content_type="text/html")

        async def api(_: web.Request) -> web.Response:
            return web.json_response({"paragraphs": PARAGRAPHS})

        app = web.Application()
        app.router.add_get("/", front)
        app.router.add_get("/article", article)
        app.router.add_get("/api/article.json", api)
        return app

    def tls(self) -> ssl.SSLContext:
        key = new_key()
        return server_context(leaf_certificate(key, [HOST]), key_pem(key))


async def _capture(out: Path) -> None:
    site = ConsentSite()
    await site.start()
    try:
        plan = CapturePlan.model_validate({"pages": [{"url": FRONT}, {"url": ARTICLE}]})
        # Screenshots as lossless WebP, so the comparisons below also show that verify reads them pixel for pixel.
        result = await capture(CaptureOptions(out=out, plan=plan, maps={HOST: ("127.0.0.1", site.port)},
                                              progress=False, screenshots="webp"))  # fmt: skip
    finally:
        await site.stop()
    assert not result.failed, result.failed


@pytest.fixture(scope="module")
def snapshot(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The site captured once, front page first; the origin is stopped before any replay."""
    out = tmp_path_factory.mktemp("consent") / "snapshot"
    asyncio.run(_capture(out))
    pages = json.loads((out / "manifest.json").read_text())["pages"]
    assert [p["screenshot"] for p in pages] == ["captures/0000.webp", "captures/0001.webp"]
    assert all((out / p["screenshot"]).read_bytes()[8:12] == b"WEBP" for p in pages)
    text = {p["url"]: (out / p["text"]).read_text() for p in pages}
    # The capture saw the article itself, not the wall: the reference verify compares with.
    assert PARAGRAPHS[-1] in text[ARTICLE], text[ARTICLE]
    yield out


def test_pages_replayed_as_captured_pass_the_threshold(snapshot: Path) -> None:
    out = cli("verify", str(snapshot), "--json")
    assert out.returncode == 0, out.stdout + out.stderr
    report = json.loads(out.stdout)
    assert [p["url"] for p in report["pages"]] == [FRONT, ARTICLE]
    for page in report["pages"]:
        assert page["fidelity"]["passed"] is True, page["fidelity"]
        assert page["fidelity"]["beyond_threshold"] == []
    assert (report["fidelity_compared"], report["fidelity_failures"]) == (2, 0)
    assert report["archived_misses"] == 0


def test_a_page_that_replays_as_an_empty_skeleton_fails_verify(snapshot: Path) -> None:
    out = cli("verify", str(snapshot), "--url", ARTICLE, "--json")
    assert out.returncode == 1, out.stdout + out.stderr
    report = json.loads(out.stdout)
    (page,) = report["pages"]
    # Every request the page made was answered: only the fidelity check fails it.
    assert page["status"] == "ok"
    assert report["misses"] == 0 and report["archived_misses"] == 0
    assert {r["result"] for r in page["requests"] if "favicon" not in r["url"]} <= {"hit", "fuzzy"}
    fidelity = page["fidelity"]
    assert fidelity["passed"] is False
    assert fidelity["text_similarity"] < 0.2, fidelity  # one line of the wall against 24 paragraphs
    assert fidelity["pixels_changed"] > 0.3, fidelity  # the pink paragraphs fill most of the viewport
    # Fonts move pixels but not words: the verdict on a skeleton is its text's.
    assert [r.split()[0] for r in fidelity["beyond_threshold"]] == ["text"], fidelity
    assert (report["fidelity_compared"], report["fidelity_failures"]) == (1, 1)
    limits = report["fidelity_threshold"]
    assert 0.2 < limits["min_text_similarity"] < 1 and 0 < limits["max_pixels_changed"] < 1


def test_the_table_names_the_page_and_by_how_much_it_differs(snapshot: Path) -> None:
    out = cli("verify", str(snapshot), "--url", ARTICLE)
    assert out.returncode == 1, out.stdout + out.stderr
    line = next((x for x in out.stdout.splitlines() if x.startswith("differs ")), None)
    assert line is not None, out.stdout
    found = re.fullmatch(rf"differs {re.escape(ARTICLE)}: text ([\d.]+)% alike \(limit ([\d.]+)%\)", line)
    assert found, line
    text, text_limit = (float(g) for g in found.groups())
    assert text < 20 and text < text_limit
    # The page's row keeps both figures.
    row = next(x for x in out.stdout.splitlines() if x.startswith(ARTICLE))
    assert re.search(r"pixels [\d.]+% differ, text [\d.]+% alike$", row), row
