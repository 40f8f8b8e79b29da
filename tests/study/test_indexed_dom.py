"""browser-use's indexed DOM through the adapter subprocess, attached over CDP to a replayed page, offline."""

from __future__ import annotations

import re
import shutil
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from playwright.async_api import BrowserContext, Page

from capreplay.browser.actions import load_page
from capreplay.browser.launch import BrowserSettings, cdp_url, open_browser, page_target_id
from capreplay.errors import BrowserError
from capreplay.replay.server import ReplayServer, ServeInfo
from capreplay.runs.adapters import ADAPTER_PROJECT, adapter_env
from capreplay.study.page.browser_use import BrowserUseAdapter
from tests.support.strace import off_machine_packets, traced_project

INDEX = re.compile(r"\[(\d+)\]<")


@dataclass
class Replayed:
    """A served snapshot, a browser on it with a CDP port, and every request any of its tabs made."""

    server: ReplayServer
    info: ServeInfo
    context: BrowserContext
    requests: list[str]

    async def open(self, url: str) -> tuple[Page, str]:
        """Load ``url`` in the first tab; the page and its CDP target id."""
        page = self.context.pages[0]
        await load_page(page, url, [])
        return page, await page_target_id(page)

    def assert_nothing_left_the_snapshot(self) -> None:
        """Every request went to a snapshot host and was answered from the archive."""
        outside = [url for url in self.requests if urlsplit(url).hostname not in self.info.hosts]
        assert outside == [], f"requests outside the snapshot: {outside}"
        assert not any("browser-use.com" in url for url in self.requests)
        misses = [s.url for s in self.server.served if s.result == "miss"]
        assert misses == []
        assert self.server.served, "the replay server saw no request: the check proves nothing"


@pytest.fixture
async def replayed(committed_snapshot: Path) -> AsyncIterator[Replayed]:
    server = ReplayServer(committed_snapshot)
    info = await server.start()
    manifest = server.store.manifest
    try:
        settings = BrowserSettings(info.chromium_args, manifest.frozen_time, manifest.random_seed, cdp_port=0)
        async with open_browser(settings) as context:
            requests: list[str] = []
            context.on("request", lambda request: requests.append(request.url))
            yield Replayed(server, info, context, requests)
    finally:
        await server.stop()


@pytest.fixture
async def adapter(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[BrowserUseAdapter]:
    # A key in the caller's environment must not reach the adapter.
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-not-a-real-key")
    async with BrowserUseAdapter() as running:
        yield running


@pytest.fixture
def traced_adapter(tmp_path: Path) -> tuple[Path, Path]:
    """The adapter project, its interpreter run under ``strace -f``; the project and the log."""
    return traced_project(ADAPTER_PROJECT, tmp_path)


async def _describe(context: BrowserContext, page: Page, backend_node_id: int) -> tuple[str, dict[str, str]]:
    """CDP's own view of a node: its name and attributes."""
    cdp = await context.new_cdp_session(page)
    try:
        node = (await cdp.send("DOM.describeNode", {"backendNodeId": backend_node_id}))["node"]
    finally:
        await cdp.detach()
    flat = node.get("attributes", [])
    return node["nodeName"], dict(zip(flat[::2], flat[1::2], strict=True))


@pytest.mark.browser
async def test_indexed_dom_of_a_replayed_page(replayed: Replayed, adapter: BrowserUseAdapter) -> None:
    assert adapter.info is not None
    assert adapter.info.browser_use == "0.13.14"
    assert {"hello", "indexed_dom", "shutdown"} <= set(adapter.info.commands)
    assert adapter.pid is not None
    environ = Path(f"/proc/{adapter.pid}/environ").read_bytes().split(b"\0")
    assert not any(var.startswith(b"ANTHROPIC_API_KEY=") for var in environ)
    assert b"ANONYMIZED_TELEMETRY=false" in environ

    page, target = await replayed.open("https://www.shop.test/form")
    # browser-use draws a logo from its CDN into about:blank tabs; with one open it would show up as a request.
    await replayed.context.new_page()
    # The page read is the front tab, as the page an agent works on is: a background tab may report an empty
    # viewport, and the agent-default text (cut at a viewport threshold) then came out empty once in CI.
    await page.bring_to_front()
    tabs = len(replayed.context.pages)
    before = await page.content()

    dom = await adapter.indexed_dom(cdp_url(replayed.context), target)

    assert "Order form" in dom.text
    name_input = re.search(r"\[(\d+)\]<input type=text name=name id=name", dom.text)
    submit = re.search(r"\[(\d+)\]<button type=submit />\s+Place order", dom.text)
    assert name_input and submit, dom.text
    assert {int(i) for i in INDEX.findall(dom.text)} == set(dom.selector_map)
    for match, tag, attribute in ((name_input, "INPUT", ("name", "name")), (submit, "BUTTON", ("type", "submit"))):
        entry = dom.selector_map[int(match.group(1))]
        assert entry.target_id == target
        node_name, attributes = await _describe(replayed.context, page, entry.backend_node_id)
        assert node_name == tag
        assert attributes[attribute[0]] == attribute[1]
    assert dom.agent_default is not None and "Place order" in dom.agent_default
    assert dom.agent_viewport_threshold == 1000
    assert dom.agent_char_limit == 40_000
    assert dom.agent_would_truncate is False

    # Detached: the same browser goes on working, with no tab added or closed, and can be attached again.
    assert len(replayed.context.pages) == tabs
    assert await page.content() == before  # serializing read the page and changed nothing in it
    assert await page.evaluate("() => document.querySelector('#name').name") == "name"
    page, target = await replayed.open("https://www.shop.test/")
    assert await page.title() == "Fixture Shop"
    again = await adapter.indexed_dom(cdp_url(replayed.context), target)
    assert re.search(r"\[\d+\]<a />\s+Redirect chain", again.text), again.text
    await page.wait_for_timeout(500)  # time for a stray request to be reported before the check
    replayed.assert_nothing_left_the_snapshot()


@pytest.mark.browser
async def test_agent_default_cuts_below_the_fold_and_truncation_is_flagged(
    replayed: Replayed, adapter: BrowserUseAdapter
) -> None:
    page, target = await replayed.open("https://www.shop.test/lazy")
    dom = await adapter.indexed_dom(cdp_url(replayed.context), target)
    # The page's last paragraph is far below the fold: only the agent default drops it.
    assert "Bottom of the page." in dom.text
    assert dom.agent_default is not None and "Bottom of the page." not in dom.agent_default
    assert "Lazy image" in dom.agent_default
    # Without the audit copy the same text comes back, and no agent-default text at all.
    lean = await adapter.indexed_dom(cdp_url(replayed.context), target, agent_default=False)
    assert lean.agent_default is None
    assert lean.text == dom.text

    # Enough buttons below the fold to pass the agent's 40,000 characters, added in the page: no request.
    await page.evaluate(
        """() => { const box = document.createElement('div'); box.style.marginTop = '3000px';
        for (let i = 0; i < 1500; i++) { const b = document.createElement('button');
          b.textContent = 'Offscreen button number ' + i; box.appendChild(b); }
        document.body.appendChild(box); }"""
    )
    big = await adapter.indexed_dom(cdp_url(replayed.context), target)
    assert len(big.text) > 40_000 and big.agent_would_truncate is True
    assert "Offscreen button number 1499" in big.text
    assert big.agent_default is not None and "Offscreen button" not in big.agent_default
    assert len(big.selector_map) >= 1500
    replayed.assert_nothing_left_the_snapshot()


@pytest.mark.browser
async def test_adapter_itself_sends_nothing_off_the_machine(
    replayed: Replayed, traced_adapter: tuple[Path, Path]
) -> None:
    project, log = traced_adapter
    _page, target = await replayed.open("https://www.shop.test/")
    async with BrowserUseAdapter(project) as traced:
        dom = await traced.indexed_dom(cdp_url(replayed.context), target)
    assert "Fixture Shop" in dom.text
    lines = log.read_text(errors="replace").splitlines()
    port = urlsplit(cdp_url(replayed.context)).port
    # The trace must show the adapter's own CDP connection, or it proves nothing.
    assert any("connect(" in line and f"htons({port})" in line for line in lines), f"{len(lines)} lines"
    assert off_machine_packets(lines) == []


@pytest.mark.browser
async def test_a_bad_request_is_an_error_and_the_adapter_stays_up(
    replayed: Replayed, adapter: BrowserUseAdapter
) -> None:
    _page, target = await replayed.open("https://www.shop.test/")
    with pytest.raises(BrowserError, match="no page target NOT-A-TARGET"):
        await adapter.indexed_dom(cdp_url(replayed.context), "NOT-A-TARGET")
    not_cdp = f"http://127.0.0.1:{replayed.info.http_port}"  # a live HTTP server, but no browser behind it
    with pytest.raises(BrowserError, match=f"cannot attach to {not_cdp}"):
        await adapter.indexed_dom(not_cdp, target)
    with pytest.raises(BrowserError, match="unknown cmd 'nope'"):
        await adapter.request("nope")
    dom = await adapter.indexed_dom(cdp_url(replayed.context), target)
    assert "Fixture Shop" in dom.text


async def test_a_missing_adapter_project_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(BrowserError, match="adapter project is missing") as missing:
        await BrowserUseAdapter(tmp_path / "browser_use").start()
    assert str(tmp_path / "browser_use") in missing.value.line()

    shutil.copy(ADAPTER_PROJECT / "pyproject.toml", tmp_path)
    with pytest.raises(BrowserError, match=r"adapter is not installed: run scripts/setup\.sh"):
        async with BrowserUseAdapter(tmp_path):
            pass


def _fake_interpreter(project: Path, script: str) -> None:
    (project / ".venv" / "bin").mkdir(parents=True)
    (project / "pyproject.toml").write_text('[project]\nname = "fake"\n')
    python = project / ".venv" / "bin" / "python"
    python.write_text("#!/bin/sh\n" + script)
    python.chmod(0o755)


async def test_an_adapter_that_dies_or_hangs_is_a_clear_error(tmp_path: Path) -> None:
    _fake_interpreter(tmp_path / "dies", "echo \"ModuleNotFoundError: No module named 'browser_use'\" >&2; exit 1\n")
    with pytest.raises(BrowserError, match=r"exited during 'hello', exit status 1; .*No module named .*setup\.sh"):
        async with BrowserUseAdapter(tmp_path / "dies"):
            pass

    _fake_interpreter(tmp_path / "hangs", "exec sleep 30\n")
    with pytest.raises(BrowserError, match=r"did not answer 'hello' within 0\.5 s"):
        async with BrowserUseAdapter(tmp_path / "hangs", timeout=0.5):
            pass


def test_the_adapter_environment_has_no_credentials() -> None:
    env = adapter_env(
        {"PATH": "/bin", "ANTHROPIC_API_KEY": "k", "OPENAI_API_KEY": "k", "ANTHROPIC_AUTH_TOKEN": "t",
         "PYTHONPATH": "/src", "VIRTUAL_ENV": "/core/.venv", "ANONYMIZED_TELEMETRY": "true"}
    )  # fmt: skip
    assert env == {
        "PATH": "/bin",
        "ANONYMIZED_TELEMETRY": "false",
        "BROWSER_USE_CLOUD_SYNC": "false",
        "BROWSER_USE_VERSION_CHECK": "false",
    }
