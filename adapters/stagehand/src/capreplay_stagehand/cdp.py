"""A minimal CDP client of the adapter's own, for what Stagehand's API does not expose: node identities.

Stagehand's page and locator API has no way to name an element by CSS across a closed shadow root or an
out-of-process iframe and get its XPath back. The adapter opens a second CDP connection to the browser it
launched (Chromium serves any number of clients) and reads DOM trees in sessions of its own, which leave
Stagehand's sessions alone.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import urllib.request
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from typing import Any

from websockets.asyncio.client import ClientConnection, connect

Json = dict[str, Any]
TIMEOUT_S = 30.0


class CdpError(Exception):
    """A CDP command answered with an error."""


def _browser_ws_url(port: int) -> str:
    # No proxy: the endpoint is the machine's own, and a proxy from the environment must never see it.
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(f"http://127.0.0.1:{port}/json/version", timeout=10) as response:
        return str(json.load(response)["webSocketDebuggerUrl"])


class Cdp:
    """One browser-level CDP connection; ``send`` waits for the answer, events are ignored."""

    def __init__(self, ws: ClientConnection) -> None:
        self._ws = ws
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[Json]] = {}
        self._reader = asyncio.create_task(self._read())

    @classmethod
    @asynccontextmanager
    async def connect(cls, port: int) -> AsyncIterator[Cdp]:
        """Connected to the browser whose CDP endpoint is on ``port`` of 127.0.0.1; closed on exit."""
        url = await asyncio.to_thread(_browser_ws_url, port)
        async with connect(url, max_size=None, proxy=None) as ws:
            client = cls(ws)
            try:
                yield client
            finally:
                client._reader.cancel()
                with suppress(asyncio.CancelledError):
                    await client._reader

    async def send(self, method: str, params: Json | None = None, session_id: str | None = None) -> Json:
        """The result of one command (in the given target session, or the browser's)."""
        rid = next(self._ids)
        future: asyncio.Future[Json] = asyncio.get_running_loop().create_future()
        self._pending[rid] = future
        message: Json = {"id": rid, "method": method, "params": params or {}}
        if session_id is not None:
            message["sessionId"] = session_id
        try:
            await self._ws.send(json.dumps(message))
            return await asyncio.wait_for(future, TIMEOUT_S)
        finally:
            self._pending.pop(rid, None)

    async def attach(self, target_id: str) -> str:
        """A session of our own on a target (a tab or an out-of-process iframe)."""
        attached = await self.send("Target.attachToTarget", {"targetId": target_id, "flatten": True})
        return str(attached["sessionId"])

    async def _read(self) -> None:
        async for raw in self._ws:
            message = json.loads(raw)
            future = self._pending.get(message.get("id")) if "id" in message else None
            if future is None or future.done():
                continue
            if "error" in message:
                future.set_exception(CdpError(f"{message['error'].get('message', message['error'])}"))
            else:
                future.set_result(message.get("result", {}))
        for future in self._pending.values():
            if not future.done():
                future.set_exception(CdpError("the browser closed the CDP connection"))
