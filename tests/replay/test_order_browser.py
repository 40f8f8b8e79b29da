"""A page's concurrent responses complete in the order the capture completed them, in a real Chromium.

The order origin answers four ``async`` scripts after growing delays, so its capture (real mitmproxy, real
Chromium) completes them a, b, c, d; the page names them the other way round, so at replay, where every
answer is ready at once, the browser asks for ``d`` first, and a server that sent each as soon as it was
ready would complete them about d, c, b, a. Each script appends its name to the page as it runs, so the
page shows the order its scripts arrived in.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path

import pytest
import pytest_asyncio
from playwright.async_api import BrowserContext, Route

from capreplay.browser.launch import BrowserSettings, open_browser
from capreplay.capture.plan_file import parse_maps, parse_plan
from capreplay.capture.session import CaptureOptions, capture
from capreplay.replay.page_order import ORDER
from capreplay.replay.proxy.serve import serve_proxy
from capreplay.replay.sequence import PageSequencer
from capreplay.replay.server import ReplayServer
from capreplay.replay.store import SnapshotStore
from capreplay.testing.fixtures.order.pages import SCRIPTS, WWW, script_url
from capreplay.testing.fixtures.order.sites import OrderSites

pytestmark = pytest.mark.browser

# The server and the browser are shared by the module's tests, so they share the module's event loop.
module_loop = pytest.mark.asyncio(loop_scope="module")

RACE = f"{WWW}/race"
PLAN = {"pages": [{"url": RACE, "actions": [{"type": "wait_for_network_idle"}]}]}
LOADS = 5
PROXY_ORDER = True
"""The proxy's page order (``serve_proxy(order=...)``); off, the proxy loads run the scripts in another order."""


@pytest.fixture(scope="module")
def snapshot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The race page captured once; the origin is stopped afterwards, so replay is offline."""
    out = tmp_path_factory.mktemp("order") / "snapshot"

    async def run() -> None:
        async with OrderSites() as sites:
            options = CaptureOptions(out=out, plan=parse_plan(PLAN, "order plan"), maps=parse_maps(sites.map_args()),
                                     progress=False)  # fmt: skip
            result = await capture(options)
        assert not result.failed, result.failed

    asyncio.run(run())
    return out


@dataclass
class Door:
    """A browser that reaches the replay one way, and the page order that releases its answers."""

    context: BrowserContext
    sequencer: PageSequencer


@pytest_asyncio.fixture(scope="module", loop_scope="module", params=["server", "proxy"])
async def door(snapshot: Path, request: pytest.FixtureRequest) -> AsyncIterator[Door]:
    """One replay server for the module, and a browser on it directly (resolver rules) or through its proxy."""
    async with AsyncExitStack() as stack:
        server = ReplayServer(snapshot)
        info = await server.start()
        stack.push_async_callback(server.stop)
        manifest = server.store.manifest
        if request.param == "server":
            args, ordering, key = info.chromium_args, server.app[ORDER], info.https_port
        else:
            proxy = await stack.enter_async_context(serve_proxy(server.store, order=PROXY_ORDER))
            assert proxy.ordering is not None
            args, ordering, key = proxy.chromium_args, proxy.ordering, proxy.proxy_port
        context = await stack.enter_async_context(
            open_browser(BrowserSettings(args, manifest.frozen_time, manifest.random_seed))
        )
        yield Door(context, ordering.browser(key).sequencer)


async def _load(context: BrowserContext, *, without: str | None = None) -> tuple[str, str]:
    """One load of the race page in a new tab (``without`` that script, which the browser never asks for):
    the order its scripts ran in and the times they read."""
    tab = await context.new_page()
    try:
        if without is not None:

            async def refuse(route: Route) -> None:
                await route.abort()

            await tab.route(script_url(without), refuse)
        await tab.goto(RACE, wait_until="load")
        ran = len(SCRIPTS) - (without is not None)
        await tab.wait_for_function(f"() => document.getElementById('order').textContent.length === {ran}")
        order = await tab.inner_text("#order")
        clock = await tab.inner_text("#clock")
        return order, clock
    finally:
        await tab.close()


def test_the_capture_completed_the_scripts_in_the_origins_order(snapshot: Path) -> None:
    store = SnapshotStore(snapshot)
    try:
        seqs = {e.url: e.seq for _, e in store.entries()}
    finally:
        store.close()
    assert sorted(SCRIPTS, key=lambda name: seqs[script_url(name)]) == list(SCRIPTS)
    assert seqs[RACE] < seqs[script_url("a")]


@module_loop
async def test_every_load_runs_the_scripts_in_the_captures_order(door: Door) -> None:
    loads = [await _load(door.context) for _ in range(LOADS)]
    assert [order for order, _ in loads] == ["".join(SCRIPTS)] * LOADS
    assert len({clock for _, clock in loads}) == 1  # each script read the clock as often as in every other load


@module_loop
async def test_a_page_that_asks_for_less_than_its_capture_is_released_by_the_bound(door: Door) -> None:
    sequencer = door.sequencer
    given_up = sequencer.given_up
    order, _ = await _load(door.context, without="a")
    assert order == "".join(SCRIPTS[1:])
    # The scripts captured after ``a`` stopped waiting for it once, by the bound, and in the captured order.
    assert sequencer.given_up == given_up + 1
