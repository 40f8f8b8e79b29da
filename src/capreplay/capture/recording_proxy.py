"""The capture's proxy: mitmproxy in this loop with the recording addon and a throw-away CA."""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path

from capreplay.capture.addon import CaptureAddon
from capreplay.mitm.loop import RunningProxy, run_mitmproxy


@contextlib.asynccontextmanager
async def run_proxy(recorder: CaptureAddon, *, verify_upstream: bool = True) -> AsyncIterator[RunningProxy]:
    """Start mitmproxy on 127.0.0.1 (a free port) with ``recorder``; stop it when the block ends."""
    with tempfile.TemporaryDirectory(prefix="capreplay-mitm-") as confdir:
        async with run_mitmproxy([recorder], confdir=Path(confdir), ssl_insecure=not verify_upstream) as proxy:
            yield proxy
