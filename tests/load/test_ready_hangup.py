"""A client that hangs up while a ready response is being sent (``sendfile`` on plain TCP, reads and writes
over TLS) leaves no traceback, and its request leaves the per-port count of requests in flight.

The client asks for an 8 MiB video with a 4 KiB receive buffer and reads only its first bytes, so the server
is still sending when the client goes (by a close or a reset). While the client holds the response unread,
the request must count as in flight on its port (on plain TCP: asyncio's TLS transport buffers a whole
response, whichever path made it); once the client is gone, the count must be back at zero, and the server
must answer the same URL in full afterwards.
"""

from __future__ import annotations

import asyncio
import logging

import pytest

from capreplay.replay.quiet import TRAFFIC
from capreplay.replay.server import ReplayServer
from tests.support.load import SynthSnapshot
from tests.support.raw_http import hang_up, raw_get, start_reading

pytestmark = pytest.mark.slow


async def _until(check: object, seconds: float) -> bool:
    for _ in range(int(seconds / 0.02)):  # bounded wait
        if check():  # type: ignore[operator]
            return True
        await asyncio.sleep(0.02)
    return False


async def test_hanging_up_mid_ready_response(synth_snapshot: SynthSnapshot, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    server = ReplayServer(synth_snapshot.path, keep_log=False)
    info = await server.start()
    try:
        ready = server.ready.wait(60)
        video = synth_snapshot.large[0]
        assert ready is not None and ready.find(video) is not None  # the ready path is what is tested
        traffic = server.app[TRAFFIC]
        for tls, reset in ((False, False), (False, True), (True, False), (True, True)):
            port = info.https_port if tls else info.http_port
            conn, got = await asyncio.to_thread(start_reading, port, video, tls=tls)
            assert got.startswith(b"HTTP/1.1 200 "), got[:100]
            if not tls:
                # asyncio's TLS transport takes a whole response into its own buffer at once (the general path's
                # too), so only on plain TCP is the request still being sent while the client reads nothing
                assert await _until(lambda port=port: traffic.inflight([port]) == 1, 5), "not counted while sent"
                await asyncio.sleep(0.2)
                assert traffic.inflight([port]) == 1  # still sending: the client reads nothing more
            hang_up(conn, reset=reset)
            assert await _until(lambda port=port: traffic.inflight([port]) == 0, 10), f"stuck (tls={tls})"
        archived = synth_snapshot.responses[video]
        for tls in (False, True):
            got = await raw_get(info.https_port if tls else info.http_port, video, tls=tls)
            assert got.startswith(b"HTTP/1.1 200 ") and got.endswith(b"\r\n\r\n" + archived.body)
        assert traffic.inflight([info.http_port, info.https_port]) == 0
    finally:
        await server.stop()
    noisy = [r for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR]
    assert noisy == [], [r.getMessage() for r in noisy]
