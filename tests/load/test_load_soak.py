"""64 connections for 30 s against ``capreplay serve`` on ~2,000 responses: no errors, right bytes, flat memory.

The server runs as the real command in its own process so its resident set can be read from ``/proc``
every 2 s. The first third of the run is warm-up (the response cache fills, connection buffers grow);
after that a server that keeps nothing per request holds its memory flat, while one that keeps something
per request grows in proportion to the requests it served. The check compares the largest sample of the
last third with the largest of the middle third, which a single noisy sample cannot fail, and allows a
few MiB for the allocator; the failure message gives the growth per thousand requests.
"""

from __future__ import annotations

import asyncio
import threading
import time
from dataclasses import dataclass, field

import aiohttp
import pytest

from capreplay.testing.serve_process import capreplay_serve, read_memory
from tests.support.load import SynthSnapshot, client_session, fetch

pytestmark = pytest.mark.slow

SECONDS = 30.0
CONNECTIONS = 64
SAMPLE_EVERY = 2.0
RSS_SLACK_KIB = 4 * 1024
"""How much the largest RSS of the last third may exceed the middle third's: allocator noise, not a leak."""


@dataclass
class Soak:
    """What the run saw."""

    started: float = 0.0
    """``time.monotonic()`` when the load started."""
    requests: int = 0
    errors: list[str] = field(default_factory=list)
    wrong: list[str] = field(default_factory=list)
    rss: list[tuple[float, int]] = field(default_factory=list)
    """(seconds since the load started, VmRSS in KiB)."""
    done_at: list[float] = field(default_factory=list)
    """When each request finished, in seconds since the load started (to count requests per third)."""
    after: tuple[int, bytes] | None = None
    """A request made once the load was over: the server must still answer it."""


def _sample_rss(pid: int, started: float, stop: threading.Event, out: list[tuple[float, int]]) -> None:
    # A thread, not a task: 64 busy connections would delay a task's wake-ups and skew the sampling times.
    while not stop.wait(SAMPLE_EVERY):
        out.append((time.monotonic() - started, read_memory(pid).rss_kib))


async def _worker(session: aiohttp.ClientSession, port: int, snap: SynthSnapshot, n: int, soak: Soak) -> None:
    started = soak.started
    deadline = started + SECONDS
    urls = snap.urls
    k = n * (len(urls) // CONNECTIONS)  # each connection starts elsewhere in the list
    while time.monotonic() < deadline:
        url = urls[k % len(urls)]
        k += 1
        try:
            status, body = await fetch(session, port, url)
        except (aiohttp.ClientError, TimeoutError) as e:
            soak.errors.append(f"{url}: {type(e).__name__}: {e}")
            continue
        soak.requests += 1
        soak.done_at.append(time.monotonic() - started)
        expected = snap.responses[url]
        if (status, body) != (expected.status, expected.body):
            soak.wrong.append(f"{url}: status {status}, {len(body)} bytes; archived {expected.status}, "
                              f"{len(expected.body)} bytes")  # fmt: skip


async def _load(port: int, pid: int, snap: SynthSnapshot) -> Soak:
    soak = Soak(started=time.monotonic())
    stop = threading.Event()
    sampler = threading.Thread(target=_sample_rss, args=(pid, soak.started, stop, soak.rss), daemon=True)
    sampler.start()
    try:
        async with client_session(CONNECTIONS) as session:
            await asyncio.gather(*(_worker(session, port, snap, n, soak) for n in range(CONNECTIONS)))
            soak.after = await fetch(session, port, snap.urls[0])
    finally:
        stop.set()
        sampler.join(SAMPLE_EVERY * 2)
    return soak


@pytest.fixture(scope="module")
def soak(synth_snapshot: SynthSnapshot) -> Soak:
    """One 30-second run, shared by the checks below."""
    with capreplay_serve(synth_snapshot.path) as server:
        info = server.start()
        return asyncio.run(_load(int(info["http_port"]), server.pid, synth_snapshot))


def test_no_request_failed_and_the_server_still_answers(soak: Soak, synth_snapshot: SynthSnapshot) -> None:
    assert soak.errors == [], f"{len(soak.errors)} failed requests, e.g. {soak.errors[:3]}"
    # Every URL at least once: a load this small would mean the server stalled.
    assert soak.requests >= len(synth_snapshot.urls), soak.requests
    first = synth_snapshot.responses[synth_snapshot.urls[0]]
    assert soak.after == (first.status, first.body)


def test_every_response_is_the_archived_one(soak: Soak) -> None:
    assert soak.wrong == [], f"{len(soak.wrong)} of {soak.requests} responses differ, e.g. {soak.wrong[:3]}"


def test_server_memory_stops_growing(soak: Soak) -> None:
    third = SECONDS / 3
    middle = [kib for t, kib in soak.rss if third <= t < 2 * third]
    last = [kib for t, kib in soak.rss if t >= 2 * third]
    assert len(middle) >= 3 and len(last) >= 3, soak.rss
    growth = max(last) - max(middle)
    served_last = sum(1 for t in soak.done_at if t >= 2 * third)
    per_thousand = growth / max(served_last, 1) * 1000
    assert growth <= RSS_SLACK_KIB, (
        f"RSS grew {growth} KiB from the middle third to the last ({per_thousand:.0f} KiB per 1,000 requests, "
        f"{served_last} requests in the last third); samples (s, KiB): {soak.rss}"
    )
