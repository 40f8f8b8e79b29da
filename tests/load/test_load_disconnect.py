"""Clients that hang up in the middle of a large response do not disturb anyone else.

Fifty times, a raw client (plain TCP or TLS, alternately) asks for an 8 MiB video, reads a few bytes and
goes away, half of the time with a reset (SO_LINGER 0) rather than a close. Its receive buffer is made
small before it connects, so the server is still writing when the client leaves, rather than having
handed the whole body to the kernel already. Meanwhile another client fetches ordinary and large
responses without pause: every one must arrive complete and byte-identical, and the server must go on
answering afterwards, without a traceback in its log.
"""

from __future__ import annotations

import asyncio
import time

import aiohttp
import pytest

from capreplay.testing.serve_process import capreplay_serve
from tests.support.load import SynthSnapshot, client_session, fetch
from tests.support.raw_http import hang_up, start_reading

pytestmark = pytest.mark.slow

QUITTERS = 50
READ_BEFORE_QUITTING = 4096


def _quit_midway(port: int, url: str, *, tls: bool, reset: bool) -> int:
    """Ask for ``url``, read a little, hang up; returns how many bytes were read before leaving."""
    conn, got = start_reading(port, url, tls=tls, read=READ_BEFORE_QUITTING)
    hang_up(conn, reset=reset)
    return len(got)


def _quitters(http_port: int, https_port: int, urls: list[str]) -> list[int]:
    read = []
    for n in range(QUITTERS):
        tls = n % 2 == 1
        read.append(_quit_midway(https_port if tls else http_port, urls[n % len(urls)], tls=tls, reset=n % 4 < 2))
    return read


async def _steady_client(port: int, snap: SynthSnapshot, stop: asyncio.Event) -> tuple[int, list[str]]:
    """Fetch ordinary responses, and a large one every so often, until ``stop``; count and collect problems."""
    problems: list[str] = []
    done = 0
    plan = [*snap.urls[:40], snap.large[0], *snap.urls[40:80], snap.large[1]]
    async with client_session(4) as session:
        # Bounded by the quitters finishing (stop) and, should they hang, by the pass limit.
        for n in range(100_000):
            if stop.is_set():
                break
            url = plan[n % len(plan)]
            try:
                status, body = await fetch(session, port, url)
            except (aiohttp.ClientError, TimeoutError) as e:
                problems.append(f"{url}: {type(e).__name__}: {e}")
                continue
            done += 1
            expected = snap.responses[url]
            if (status, body) != (expected.status, expected.body):
                problems.append(f"{url}: status {status} and {len(body)} bytes, archived {len(expected.body)}")
    return done, problems


async def test_clients_that_hang_up_midway_do_not_disturb_the_others(synth_snapshot: SynthSnapshot) -> None:
    with capreplay_serve(synth_snapshot.path) as server:
        info = server.start()
        http_port, https_port = int(info["http_port"]), int(info["https_port"])
        stop = asyncio.Event()
        steady = asyncio.create_task(_steady_client(http_port, synth_snapshot, stop))
        started = time.monotonic()
        try:
            read = await asyncio.to_thread(_quitters, http_port, https_port, synth_snapshot.large)
        finally:
            stop.set()
            done, problems = await steady
        assert problems == [], problems[:5]
        assert done >= QUITTERS, f"only {done} responses in {time.monotonic() - started:.1f} s"
        # Every quitter left in the middle: it got something, and far less than the 8 MiB body.
        assert all(0 < n <= READ_BEFORE_QUITTING for n in read), read
        async with client_session(1) as session:
            for url in (synth_snapshot.urls[0], synth_snapshot.large[0]):
                expected = synth_snapshot.responses[url]
                assert await fetch(session, http_port, url) == (expected.status, expected.body)
        assert server.running()
        assert "Traceback" not in server.stderr_text(), server.stderr_text()[-3000:]
