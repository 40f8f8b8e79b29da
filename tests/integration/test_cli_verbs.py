"""The verbs end to end as a user runs them: crawl capture, verify's misses, open, --help."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest

from capreplay.archive.snapshot.manifest import checked_manifest
from capreplay.cli import VERBS
from capreplay.testing.fixtures.sites import FixtureSites
from tests.support.cli import cli


@pytest.mark.parametrize(
    "verb", [v.__name__.rsplit(".", 1)[1].replace("open_page", "open").replace("import_cmd", "import") for v in VERBS]
)
def test_every_verb_has_help(verb: str) -> None:
    out = cli(verb, "--help")
    assert out.returncode == 0 and "usage: capreplay" in out.stdout


@pytest.mark.browser
async def test_a_crawl_keeps_shortest_path_parents_in_graph_json(tmp_path: Path) -> None:
    out = tmp_path / "crawl"
    async with FixtureSites() as sites:
        maps = [arg for m in sites.map_args() for arg in ("--map", m)]
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "capreplay", "capture", "https://www.shop.test/", "-o", str(out),
            "--depth", "1", "--max-pages", "4", "--same-site", "--no-progress", *maps,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )
        stdout, stderr = await asyncio.wait_for(proc.communicate(), timeout=180)
    assert proc.returncode == 0, stderr.decode()
    assert "captured 4 pages" in stdout.decode()
    manifest = checked_manifest(out)
    assert manifest.complete and len(manifest.pages) == 4
    graph = json.loads((out / "graph.json").read_text())
    assert graph["seeds"] == ["https://www.shop.test/"]
    pages = {p["url"]: p for p in graph["pages"]}
    assert pages["https://www.shop.test/"] == {"url": "https://www.shop.test/", "depth": 0, "parent": None}
    children = [p for p in graph["pages"] if p["depth"] == 1]
    assert len(children) == 3 and all(p["parent"] == "https://www.shop.test/" for p in children)
    assert all(link[0] in pages and link[1] in pages for link in graph["links"])
    assert {p.url for p in manifest.pages} == set(pages)


@pytest.mark.browser
def test_verify_reports_a_miss_with_its_nearest_candidate_and_exits_1(committed_snapshot: Path) -> None:
    out = cli("verify", str(committed_snapshot), "--json", "--url", "https://www.shop.test/cloc")
    assert out.returncode == 1, out.stderr
    report = json.loads(out.stdout)
    # The 404 page makes Chromium ask for a favicon, which is not archived either.
    assert report["misses"] == 2
    assert report["pages"][0]["status"] == "failed"
    miss = report["pages"][0]["requests"][0]
    assert miss["result"] == "miss" and miss["nearest"] == "https://www.shop.test/clock"
    table = cli("verify", str(committed_snapshot), "--url", "https://www.shop.test/cloc")
    assert table.returncode == 1
    assert ("miss    GET https://www.shop.test/cloc  (never captured; nearest: https://www.shop.test/clock)"
            in table.stdout)
    assert miss["archived"] is False and report["archived_misses"] == 0  # the page failed: that alone is exit 1


@pytest.mark.browser
def test_open_saves_screenshot_html_and_accessibility_tree(committed_snapshot: Path, tmp_path: Path) -> None:
    png, html, aria = tmp_path / "p.png", tmp_path / "p.html", tmp_path / "p.yaml"
    out = cli("open", str(committed_snapshot), "https://www.shop.test/", "--screenshot", str(png),
              "--html", str(html), "--aria", str(aria))
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("200 https://www.shop.test/ 'Fixture Shop'")
    assert png.read_bytes().startswith(b"\x89PNG")
    assert "Replay Tee" in html.read_text()  # rendered by the page's script from the archived JSON
    assert "heading" in aria.read_text()
