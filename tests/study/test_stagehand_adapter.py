"""Stagehand's snapshot through the adapter subprocess, in Stagehand's own Chromium on the served study snapshot,
offline: its tree, its act path for an id, and ground truth's id for targets behind iframes and a closed shadow
root."""

from __future__ import annotations

import re
import shutil
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from capreplay.browser.launch import BrowserSettings, find_chromium
from capreplay.errors import BrowserError
from capreplay.replay.server import ReplayServer
from capreplay.runs.adapters import STAGEHAND_ADAPTER_PROJECT
from capreplay.study.page.stagehand import StagehandAdapter, launch_request
from tests.support.paths import ROOT
from tests.support.strace import off_machine_packets, traced_project

SNAPSHOT = ROOT / "snapshots" / "study"
EMBED = "https://www.study.test/embed"
ARTICLE = "https://www.study.test/article"
# ACT targets of the study's tasks: a same-origin frame, a cross-site (out-of-process) frame, a closed shadow root.
EMBED_TARGETS = {
    "Report a hazard": ["iframe#conditions", "#report-hazard"],
    "Subscribe to alerts": ["iframe#forecast", "#subscribe"],
    "Apply code": ["member-offer", "button.apply"],
}
ID = r"\[(\d+-\d+)\]"


@dataclass
class Served:
    """The study snapshot served offline, and what ``open`` needs to launch Stagehand's browser on it."""

    server: ReplayServer
    https_port: int
    launch: dict[str, Any]

    def assert_nothing_missed(self) -> None:
        """The replay server answered every request from the archive, and did see requests."""
        assert self.server.served, "the replay server saw no request: the check proves nothing"
        assert [s.url for s in self.server.served if s.result == "miss"] == []


@pytest.fixture
async def served() -> AsyncIterator[Served]:
    server = ReplayServer(SNAPSHOT)
    info = await server.start()
    manifest = server.store.manifest
    chromium = find_chromium()
    assert chromium, "no Chromium: run scripts/setup.sh"
    try:
        launch = launch_request(chromium, BrowserSettings(info.chromium_args, manifest.frozen_time,
                                                          manifest.random_seed))  # fmt: skip
        yield Served(server, info.https_port, launch)
    finally:
        await server.stop()


@pytest.fixture
async def adapter(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[StagehandAdapter]:
    # A key in the caller's environment must not reach the adapter.
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-not-a-real-key")
    async with StagehandAdapter() as running:
        yield running


def _element_id(tree: str, line: str) -> str:
    """The id of the tree's line that reads ``line`` (after the id)."""
    found = re.findall(ID + " " + re.escape(line) + "$", tree, re.MULTILINE)
    assert len(found) == 1, f"{line!r}: {found}"
    return str(found[0])


@pytest.mark.browser
async def test_article_tree_and_an_id_through_the_act_path(served: Served, adapter: StagehandAdapter) -> None:
    assert adapter.info is not None
    assert adapter.info.stagehand == "4.3.0"
    assert {"hello", "open", "snapshot", "resolve", "xpath_of", "close", "shutdown"} <= set(adapter.info.commands)
    assert adapter.pid is not None
    environ = Path(f"/proc/{adapter.pid}/environ").read_bytes().split(b"\0")
    assert not any(var.startswith(b"ANTHROPIC_API_KEY=") for var in environ)

    opened = await adapter.open(ARTICLE, served.launch)
    assert opened.url == ARTICLE
    layout = opened.layout
    assert (layout.inner_width, layout.inner_height, layout.device_pixel_ratio) == (1280, 800, 1)
    assert (layout.scroll_x, layout.scroll_y) == (0, 0)
    rules = next(arg for arg in opened.chromium_args if arg.startswith("--host-resolver-rules="))
    port = opened.cdp_url.rsplit(":", 1)[1]
    assert rules.startswith(f"--host-resolver-rules=MAP 127.0.0.1:{port} 127.0.0.1:{port}, ")
    assert rules.endswith("MAP * 127.0.0.1:0")

    snapshot = await adapter.snapshot()
    assert "3 March 2026" in snapshot.formatted_tree
    assert "Marit Halvorsen" in snapshot.formatted_tree  # below the fold: the snapshot is the whole page
    assert "Unit 4" in snapshot.formatted_tree  # the cross-site map card's frame
    post = _element_id(snapshot.formatted_tree, "button: Post comment")
    resolved = await adapter.resolve(post)
    assert resolved.matches == 1
    assert resolved.xpath == snapshot.xpath_map[post] and resolved.selector == f"xpath={resolved.xpath}"
    located = await adapter.xpath_of(["#post-comment"])
    assert located.xpath == resolved.xpath and located.element_id == post

    missing = await adapter.resolve("9999-9999")
    assert (missing.xpath, missing.matches) == (None, 0)
    served.assert_nothing_missed()


@pytest.mark.browser
async def test_embed_frames_and_closed_shadow_root(served: Served, adapter: StagehandAdapter) -> None:
    await adapter.open(EMBED, served.launch)
    snapshot = await adapter.snapshot()
    tree = snapshot.formatted_tree
    for text in ("Rockfall below the col", "64 km/h", "FELLS15"):  # same-origin frame, cross-site frame, shadow
        assert text in tree, text
    assert "RootWebArea: Cloudline Weather widget" in tree  # the out-of-process frame's document, nested

    for name, chain in EMBED_TARGETS.items():
        truth = _element_id(tree, f"button: {name}")
        located = await adapter.xpath_of(chain)
        assert located.element_id == truth, (name, located)
        assert located.candidates == [truth]
        assert located.xpath == snapshot.xpath_map[truth]
        assert located.frame_depth == (0 if chain[0] == "member-offer" else 1)
        resolved = await adapter.resolve(truth)
        assert resolved.matches == 1 and resolved.xpath == located.xpath
    assert "//" in snapshot.xpath_map[_element_id(tree, "button: Apply code")]  # Stagehand's shadow hop
    served.assert_nothing_missed()


@pytest.mark.browser
async def test_bad_requests_are_errors_and_the_adapter_stays_up(served: Served, adapter: StagehandAdapter) -> None:
    with pytest.raises(BrowserError, match="no page is open: send 'open' first"):
        await adapter.snapshot()
    await adapter.open(EMBED, served.launch)
    with pytest.raises(BrowserError, match="no snapshot of this page yet"):
        await adapter.resolve("0-1")
    with pytest.raises(BrowserError, match=r"'button' matches \d+ elements in the top document, not 1"):
        await adapter.xpath_of(["button"])
    with pytest.raises(BrowserError, match="'h1' is neither a frame nor a shadow host"):
        await adapter.xpath_of(["h1", "a"])
    with pytest.raises(BrowserError, match="must not set what Stagehand sets itself"):
        await adapter.open(EMBED, {**served.launch, "args": ["--headless=new"]})
    with pytest.raises(BrowserError, match="unknown cmd 'nope'"):
        await adapter.request("nope")
    await adapter.open(EMBED, served.launch)
    assert "Apply code" in (await adapter.snapshot()).formatted_tree
    await adapter.close_page()
    with pytest.raises(BrowserError, match="no page is open"):
        await adapter.snapshot()


@pytest.fixture
def traced_adapter(tmp_path: Path) -> tuple[Path, Path]:
    """The adapter project, its interpreter run under ``strace -f``; the project and the log."""
    return traced_project(STAGEHAND_ADAPTER_PROJECT, tmp_path)


@pytest.mark.browser
async def test_neither_the_adapter_nor_its_browser_sends_anything_off_the_machine(
    served: Served, traced_adapter: tuple[Path, Path]
) -> None:
    project, log = traced_adapter
    async with StagehandAdapter(project) as traced:
        await traced.open(EMBED, served.launch)
        assert "64 km/h" in (await traced.snapshot()).formatted_tree
    lines = log.read_text(errors="replace").splitlines()
    # The trace must show the browser's own connections to the replay server, or it proves nothing.
    assert any("connect(" in line and f"htons({served.https_port})" in line for line in lines), f"{len(lines)} lines"
    assert off_machine_packets(lines) == []
    served.assert_nothing_missed()


async def test_a_missing_stagehand_adapter_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(BrowserError, match="the Stagehand adapter project is missing"):
        await StagehandAdapter(tmp_path / "stagehand").start()
    shutil.copy(STAGEHAND_ADAPTER_PROJECT / "pyproject.toml", tmp_path)
    with pytest.raises(BrowserError, match=r"the Stagehand adapter is not installed: run scripts/setup\.sh"):
        async with StagehandAdapter(tmp_path):
            pass
