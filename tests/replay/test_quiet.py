"""The replay server's in-flight count and quiet signal, over real aiohttp servers and real connections."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import aiohttp
from aiohttp import web

from capreplay.replay.quiet import TRAFFIC, Traffic, count_traffic
from capreplay.replay.server import ReplayServer
from tests.support.world_sample import FIXTURES

RELEASE = web.AppKey("release", asyncio.Event)
ENTERED = web.AppKey("entered", asyncio.Event)


async def _held(request: web.Request) -> web.Response:
    # Answers only once the test releases it, so the test sees the request in flight.
    request.app[ENTERED].set()
    await request.app[RELEASE].wait()
    return web.Response(text="late")


async def _quick(request: web.Request) -> web.Response:
    return web.Response(text="quick")


BIG = 32 * 1024 * 1024
"""More than the sockets' buffers hold: the response is written out only as the client reads it."""


async def _big(request: web.Request) -> web.Response:
    request.app[ENTERED].set()
    return web.Response(body=b"x" * BIG)


@asynccontextmanager
async def _server() -> AsyncIterator[tuple[web.Application, int, int]]:
    """An app counted as the replay app is, on two ports (two browsers)."""
    app = web.Application(middlewares=[count_traffic])
    app[TRAFFIC] = Traffic()
    app[RELEASE] = asyncio.Event()
    app[ENTERED] = asyncio.Event()
    app.router.add_get("/held", _held)
    app.router.add_get("/quick", _quick)
    app.router.add_get("/big", _big)
    runner = web.AppRunner(app, access_log=None, handle_signals=False)
    await runner.setup()
    one, two = web.TCPSite(runner, "127.0.0.1", 0), web.TCPSite(runner, "127.0.0.1", 0)
    await one.start()
    await two.start()
    try:
        yield app, one.port, two.port
    finally:
        await runner.cleanup()


def test_a_request_is_in_flight_on_its_own_port_until_its_response_is_written() -> None:
    async def scenario() -> None:
        async with _server() as (app, port, other), aiohttp.ClientSession() as client:
            traffic = app[TRAFFIC]
            assert traffic.inflight([port]) == 0
            pending = asyncio.create_task(client.get(f"http://127.0.0.1:{port}/held"))
            await asyncio.wait_for(app[ENTERED].wait(), 10)
            assert traffic.inflight([port]) == 1
            assert traffic.inflight([other]) == 0
            loop = asyncio.get_running_loop()
            # Not quiet while the request is in flight, however long the wait.
            assert not await traffic.quiet([port], since=loop.time(), quiet_ms=10, timeout_ms=200)
            # The other browser's ports are quiet meanwhile.
            assert await traffic.quiet([other], since=loop.time(), quiet_ms=10, timeout_ms=2_000)
            app[RELEASE].set()
            response = await pending
            assert await response.text() == "late"
            assert traffic.inflight([port]) == 0
            assert await traffic.quiet([port], since=loop.time(), quiet_ms=10, timeout_ms=2_000)

    asyncio.run(scenario())


def test_a_response_still_being_written_keeps_its_request_in_flight() -> None:
    async def scenario() -> None:
        async with _server() as (app, port, _):
            traffic = app[TRAFFIC]
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(b"GET /big HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            await writer.drain()
            try:
                await asyncio.wait_for(app[ENTERED].wait(), 10)
                # The handler has returned its response, but the client has read none of it yet.
                await asyncio.sleep(0.5)
                assert traffic.inflight([port]) == 1
                received = len(await asyncio.wait_for(reader.read(), 60))
                assert received > BIG
                loop = asyncio.get_running_loop()
                assert await traffic.quiet([port], since=loop.time(), quiet_ms=10, timeout_ms=10_000)
            finally:
                writer.close()
                await writer.wait_closed()

    asyncio.run(scenario())


def test_quiet_comes_only_a_whole_interval_after_the_last_request_ended() -> None:
    async def scenario() -> None:
        async with _server() as (app, port, _), aiohttp.ClientSession() as client:
            traffic = app[TRAFFIC]
            loop = asyncio.get_running_loop()
            since = loop.time()
            waiting = asyncio.create_task(traffic.quiet([port], since=since, quiet_ms=300, timeout_ms=10_000))
            await asyncio.sleep(0.1)
            # A request inside the window moves the window on: quiet is counted from when it ended.
            async with client.get(f"http://127.0.0.1:{port}/quick") as response:
                assert await response.text() == "quick"
            ended = traffic.changed([port])
            assert ended > since
            assert await waiting
            assert loop.time() >= ended + 0.3
            # Nothing after ``since``: the wait is what is left of the interval, counted from ``since``.
            since = loop.time()
            assert await traffic.quiet([port], since=since, quiet_ms=300, timeout_ms=10_000)
            assert loop.time() >= since + 0.3

    asyncio.run(scenario())


def test_a_request_the_client_gives_up_on_does_not_leave_the_count_stuck() -> None:
    async def scenario() -> None:
        async with _server() as (app, port, _):
            traffic = app[TRAFFIC]
            _reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(b"GET /held HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            await writer.drain()
            await asyncio.wait_for(app[ENTERED].wait(), 10)
            assert traffic.inflight([port]) == 1
            # The browser cancels: the connection goes away before the answer.
            writer.close()
            await writer.wait_closed()
            app[RELEASE].set()
            loop = asyncio.get_running_loop()
            assert await traffic.quiet([port], since=loop.time(), quiet_ms=10, timeout_ms=10_000)
            assert traffic.inflight([port]) == 0

    asyncio.run(scenario())


def test_the_replay_server_counts_each_browsers_ports_and_forgets_them_when_closed() -> None:
    async def scenario() -> None:
        server = ReplayServer(FIXTURES, keep_log=True)
        await server.start()
        try:
            info = await server.listen()
            async with aiohttp.ClientSession() as client:
                url = f"http://127.0.0.1:{info.http_port}/"
                async with client.get(url, headers={"Host": "www.shop.test"}) as response:
                    await response.read()
            traffic = server.app[TRAFFIC]
            ports = (info.http_port, info.https_port)
            assert traffic.changed(ports) > 0.0
            assert traffic.inflight(ports) == 0
            loop = asyncio.get_running_loop()
            assert await server.quiet(info, since=loop.time(), quiet_ms=10)
            assert [s.port for s in server.served] == [info.http_port]
            await server.unlisten(info)
            assert traffic.changed(ports) == 0.0
        finally:
            await server.stop()

    asyncio.run(scenario())
