"""A page captured before and after a form changed it is replayed in that order to every browser on one server.

A shop's product page fetched, then its basket form posted, then the page fetched again holds two recordings of
one URL. The repeat rule gives them in capture order; counted for the whole server, a second browser (another
episode of a run with ``--browsers 2``, or the next episode on the same server) would get the "after" page on its
first visit. Counted per browser (each browser has its own ports, :meth:`ReplayServer.listen`), every browser
sees the capture's order, and a browser that has gone leaves nothing behind.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import aiohttp

from capreplay.archive.importer.snapshot import ImportOptions, import_archives
from capreplay.capture.session import DEFAULT_SEED
from capreplay.replay.matching import Candidate, Matcher
from capreplay.replay.server import ReplayServer, ServeInfo
from tests.support.foreign_warc import gz, page, request

SITE = "http://www.basket.test"
PRODUCT = f"{SITE}/catalogue/japan/"
BEFORE = b"<!doctype html><title>Japan</title><p>Basket total: 0.00</p>"
AFTER = b"<!doctype html><title>Japan</title><p>Basket total: 4.80</p>"


def test_each_browser_gets_the_recordings_of_a_repeated_request_in_capture_order() -> None:
    m = Matcher([Candidate("GET", PRODUCT, None, 1, ref="before"), Candidate("GET", PRODUCT, None, 3, ref="after")])

    def visit(browser: int) -> str:
        found = m.match("GET", PRODUCT, None, browser=browser)
        assert found is not None
        return str(found.candidate.ref)

    assert [visit(1), visit(1), visit(1)] == ["before", "after", "after"]
    assert [visit(2), visit(2)] == ["before", "after"]
    m.forget(1)
    assert [visit(1), visit(2)] == ["before", "after"]


def _snapshot(folder: Path) -> Path:
    records = [
        page(1, PRODUCT, BEFORE),
        request(2, PRODUCT, 1),
        page(3, f"{SITE}/basket/add/", b"added"),
        request(4, f"{SITE}/basket/add/", 3, "POST", b"product=japan"),
        page(5, PRODUCT, AFTER),
        request(6, PRODUCT, 5),
    ]
    warc = folder / "basket.warc.gz"
    warc.write_bytes(gz(*records))
    out = folder / "snapshot"
    import_archives(ImportOptions(inputs=[warc], out=out, random_seed=DEFAULT_SEED, pages=[PRODUCT]))
    return out


async def _get(client: aiohttp.ClientSession, info: ServeInfo) -> bytes:
    url = f"http://127.0.0.1:{info.http_port}/catalogue/japan/"
    async with client.get(url, headers={"Host": "www.basket.test"}) as response:
        assert response.status == 200
        return await response.read()


def test_browsers_sharing_a_server_each_see_the_page_before_then_after(tmp_path: Path) -> None:
    snapshot = _snapshot(tmp_path)

    async def scenario() -> None:
        server = ReplayServer(snapshot, keep_log=True)
        await server.start()
        try:
            first, second = await server.listen(), await server.listen()
            async with aiohttp.ClientSession() as client:
                assert await _get(client, first) == BEFORE
                assert await _get(client, first) == AFTER
                # The second browser's first visit: the page as the capture first saw it, not the third recording.
                assert await _get(client, second) == BEFORE
                assert await _get(client, second) == AFTER
                assert await _get(client, first) == AFTER
                await server.unlisten(first)
                third = await server.listen()
                assert await _get(client, third) == BEFORE
        finally:
            await server.stop()

    asyncio.run(scenario())
