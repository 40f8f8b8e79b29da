"""Ready responses are the general path's bytes: every archived URL of real snapshots, over HTTP and HTTPS.

Two replay servers on the same snapshot, one sending ready responses (:mod:`capreplay.replay.ready.send`) and one
answering everything through the general path, get the same raw requests; the bytes that come back must be
identical, status line and headers included. Both servers get the same requests in the same order (a URL
recorded several times is answered with each recording in turn). The only header allowed to differ is the
``Date`` aiohttp adds to a response whose archive has none (the servers' clock, a second apart at most).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from capreplay.replay.ready.responses import ReadyResponses
from capreplay.replay.server import ReplayServer
from tests.support.cli import cli
from tests.support.paths import ROOT
from tests.support.raw_http import clock_dates_masked, raw_get

INTEROP = ROOT.parent / "shared" / "interop"
FOREIGN = [
    INTEROP / "webrecorder+pywb" / "sample_archive" / "warcs" / "iana.warc.gz",
    INTEROP / "openzim+warc2zim" / "tests" / "data" / "http-return-codes.warc.gz",
    INTEROP / "servo+servo-warc-tests" / "collections" / "Baidu" / "archive" / "rec-20180221105728786818-PUCHE.warc.gz",
]


def _imported(source: Path, tmp_path: Path) -> Path:
    out = tmp_path / source.name.split(".")[0]
    done = cli("import", str(source), "-o", str(out))
    assert done.returncode == 0, done.stderr
    return out


async def _compare(snapshot: Path) -> tuple[int, int]:
    """Ask both servers for every archived URL (and a few that are not plain GETs of one); return how many
    URLs were compared and how many of them the ready server sent ready-made."""
    fast, general = ReplayServer(snapshot, keep_log=False), ReplayServer(snapshot, keep_log=False, ready=False)
    ready_made = fast.ready.wait(120)
    assert isinstance(ready_made, ReadyResponses) and general.ready.current is None
    fast_info, general_info = await fast.start(), await general.start()
    try:
        urls = sorted({entry.url for _, entry in fast.store.entries()})
        compared = ready = 0
        for url in urls:
            tls = url.startswith("https:")
            fast_port = fast_info.https_port if tls else fast_info.http_port
            general_port = general_info.https_port if tls else general_info.http_port
            asks = [("GET", ""), ("GET", "Range: bytes=0-9\r\n"), ("HEAD", ""), ("GET", "Connection: close\r\n")]
            for method, extra in asks:
                want = await raw_get(general_port, url, tls=tls, extra=extra, method=method)
                got = await raw_get(fast_port, url, tls=tls, extra=extra, method=method)
                if got != want:
                    shown = f"{method} {url} {extra!r}:\n{got[:600]!r}\nvs\n{want[:600]!r}"
                    assert clock_dates_masked(got) == clock_dates_masked(want), shown
            compared += 1
            ready += ready_made.find(url) is not None
        miss = "http://nowhere.example/not-archived"
        assert await raw_get(fast_info.http_port, miss, tls=False) == await raw_get(
            general_info.http_port, miss, tls=False
        ) or b" 404 " in await raw_get(fast_info.http_port, miss, tls=False)
        return compared, ready
    finally:
        await fast.stop()
        await general.stop()


def test_fixture_snapshot_ready_responses_are_the_general_paths() -> None:
    compared, ready = asyncio.run(_compare(ROOT / "snapshots" / "fixtures"))
    assert compared > 20
    assert ready > compared // 2  # most of a capture's URLs have one recording


@pytest.mark.parametrize("source", FOREIGN, ids=lambda p: p.name)
def test_imported_warcs_ready_responses_are_the_general_paths(source: Path, tmp_path: Path) -> None:
    assert source.is_file(), f"interop sample missing: {source}"
    compared, ready = asyncio.run(_compare(_imported(source, tmp_path)))
    assert compared > 0 and ready > 0
