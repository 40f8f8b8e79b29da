"""POSTs from a page in a real Chromium, through the replay server and through ``serve --proxy-port``.

The page sends what pages send today: a ``sendBeacon`` to a path captured as an image GET, RPCs with a fresh
request counter and time, GraphQL with its keys in another order, a multipart form with its own boundary.
Each must get its recording, by the rule the server's log names, and the same one through either door.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import pytest_asyncio
from playwright.async_api import Page, async_playwright

from capreplay.browser.launch import find_chromium
from capreplay.replay.answer import Served
from capreplay.replay.proxy.serve import serve_proxy
from capreplay.replay.server import ReplayServer
from tests.replay.posts_snapshot import FORM, GEN_204, GRAPHQL, RPC, SITE, make_posts_snapshot

pytestmark = pytest.mark.browser

# The server and the browsers are shared by the module's tests, so they share the module's event loop.
module_loop = pytest.mark.asyncio(loop_scope="module")


@dataclass
class Doors:
    server: ReplayServer
    args: dict[str, list[str]]
    """Chromium's arguments for each way in: ``server`` (resolver rules) and ``proxy``."""
    proxy_port: int


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def doors(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Doors]:
    snapshot = make_posts_snapshot(tmp_path_factory.mktemp("posts"))
    server = ReplayServer(snapshot)
    info = await server.start()
    try:
        async with serve_proxy(server.store, served=server.served) as proxy:
            yield Doors(server, {"server": info.chromium_args, "proxy": proxy.chromium_args}, proxy.proxy_port)
    finally:
        await server.stop()


@pytest_asyncio.fixture(scope="module", loop_scope="module", params=["server", "proxy"])
async def page(doors: Doors, request: pytest.FixtureRequest) -> AsyncIterator[tuple[str, Page]]:
    chromium = find_chromium()
    assert chromium, "no Chromium found: scripts/setup.sh installs it"
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=chromium, args=doors.args[request.param])
        try:
            tab = await browser.new_page()
            response = await tab.goto(f"{SITE}/")
            assert response is not None and response.status == 200
            yield request.param, tab
        finally:
            await browser.close()


async def _logged(doors: Doors, door: str, method: str, url: str) -> Served:
    """The server's log entry for a request that came in through ``door`` (waiting for a beacon to arrive)."""
    for _ in range(100):
        for s in doors.server.served:
            by_proxy = s.port == doors.proxy_port
            if (s.method, s.url) == (method, url) and by_proxy == (door == "proxy"):
                return s
        await asyncio.sleep(0.05)
    raise AssertionError(f"{method} {url} never reached the server through the {door}")


async def _post(tab: Page, url: str, body: str, kind: str = "application/json") -> dict[str, object]:
    script = "([u, b, k]) => fetch(u, {method: 'POST', body: b, headers: {'Content-Type': k}}).then(r => r.json())"
    return await tab.evaluate(script, [url, body, kind])  # type: ignore[no-any-return]


@module_loop
async def test_a_beacon_to_a_path_captured_as_an_image_gets_the_image(doors: Doors, page: tuple[str, Page]) -> None:
    door, tab = page
    sent = GEN_204.replace("aft.291", "aft.24")
    assert await tab.evaluate("u => navigator.sendBeacon(u)", sent) is True
    logged = await _logged(doors, door, "POST", sent)
    assert (logged.result, logged.rule, logged.nearest, logged.status) == ("fuzzy", "beacon-get", GEN_204, 200)


@module_loop
async def test_a_script_reading_its_post_is_not_given_a_get(doors: Doors, page: tuple[str, Page]) -> None:
    door, tab = page
    url = GEN_204.replace("aft.291", "aft.7")
    status = await tab.evaluate("u => fetch(u, {method: 'POST', body: 'x'}).then(r => r.status)", url)
    assert status == 404
    assert (await _logged(doors, door, "POST", url)).result == "miss"


@module_loop
async def test_an_rpc_with_a_fresh_counter_and_time_gets_the_nearest_recording(
    doors: Doors, page: tuple[str, Page]
) -> None:
    door, tab = page
    url = f"{RPC}?_reqid=48213&rt=c"
    assert await _post(tab, url, json.dumps({"sent": 1764547200, "q": "stoves"})) == {"answer": "stoves"}
    logged = await _logged(doors, door, "POST", url)
    assert (logged.rule, logged.nearest) == ("nearest-body", f"{RPC}?_reqid=2001&rt=c")


@module_loop
async def test_graphql_by_operation_and_variables(doors: Doors, page: tuple[str, Page]) -> None:
    door, tab = page
    query = "query Reviews($id: ID) {\n  item(id: $id) { name }\n}"
    same = json.dumps({"query": query, "variables": {"id": "1"}, "operationName": "Reviews"})
    assert await _post(tab, GRAPHQL, same) == {"data": {"reviews": "for 1"}}
    assert (await _logged(doors, door, "POST", GRAPHQL)).rule == "post-body"
    # Product was recorded with id 2, but Reviews is what is asked: its recording for id 1 answers.
    other = json.dumps({"operationName": "Reviews", "variables": {"id": "2"}, "query": query})
    assert await _post(tab, GRAPHQL, other) == {"data": {"reviews": "for 1"}}
    by_door = [s for s in doors.server.served if (s.port == doors.proxy_port) == (door == "proxy")]
    rules = [s.rule for s in by_door if s.url == GRAPHQL]
    assert rules == ["post-body", "nearest-body"]


@module_loop
async def test_a_multipart_form_with_its_own_boundary(doors: Doors, page: tuple[str, Page]) -> None:
    door, tab = page
    script = "u => { const f = new FormData(); f.append('note', 'hello'); " \
             "return fetch(u, {method: 'POST', body: f}).then(r => r.json()); }"  # fmt: skip
    assert await tab.evaluate(script, FORM) == {"stored": "hello"}
    assert (await _logged(doors, door, "POST", FORM)).rule == "post-body"


def test_the_fixture_is_what_the_tests_say(tmp_path: Path) -> None:
    # The recordings the tests above expect exist as they say, read back from the WARC's index.
    snapshot = make_posts_snapshot(tmp_path)
    index = (snapshot / "index.cdxj").read_text()
    assert index.count('"method":"POST"') == 5 and index.count('"method":"GET"') == 2
