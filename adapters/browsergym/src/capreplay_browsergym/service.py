"""capreplay's asyncio side, run for a synchronous BrowserGym environment: the replay server and the judge.

BrowserGym drives Playwright's sync API on the caller's thread; capreplay's replay server (aiohttp) and judge
(:class:`capreplay.judge.ground.Grounding`, which renders cited pages in a browser of its own through Playwright's
async API) are asyncio. :class:`ReplayService` runs them on one event loop in a background thread that lives as
long as the environment, and the environment calls into it with :meth:`ReplayService.call`, which waits for the
result. Every touch of the server's state (its ports, its log of served requests) happens on that loop, so the
two threads never share a list.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

from capreplay.errors import ReplayError
from capreplay.judge.episode import Judge, judge_episode
from capreplay.judge.ground import Grounding
from capreplay.judge.run_verdicts import judge_client
from capreplay.judge.verdict import EpisodeVerdict
from capreplay.llm.access import model_key
from capreplay.llm.messages import ModelSettings
from capreplay.models.episode import EpisodeRecord, RequestRecord
from capreplay.models.workflow import WorkflowTask
from capreplay.replay.server import ReplayServer, ServeInfo

CALL_TIMEOUT_S = 300.0
"""The longest one call into the loop may take (a judge that renders several cited pages is the slowest)."""


class ReplayService:
    """One snapshot served on 127.0.0.1, and the judge on the same snapshot, on a loop in a background thread.

    :meth:`start` serves the snapshot; each episode then asks for ports of its own (:meth:`listen`), so the
    requests of its browser are told apart from any other's, as ``capreplay run`` tells its episodes apart.
    The judge (its own server and browser on the snapshot, and its model client) starts with the service, in the
    background, so that its browser launches while the episode's does; it is kept until :meth:`close`.
    """

    def __init__(self, snapshot: Path, judge_model: ModelSettings, judge_cache: Path) -> None:
        self.snapshot = snapshot
        self._judge_model = judge_model
        self._judge_cache = judge_cache
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="capreplay-replay", daemon=True)
        self._server: ReplayServer | None = None
        self._judge: asyncio.Task[Judge] | None = None

    def call[T](self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` on the service's loop and return its result (its exception is raised here)."""
        if not self._thread.is_alive():
            coro.close()
            raise ReplayError("the replay service is not running", self.snapshot)
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(CALL_TIMEOUT_S)

    @property
    def server(self) -> ReplayServer:
        """The running replay server."""
        if self._server is None:
            raise ReplayError("the replay service is not running", self.snapshot)
        return self._server

    def start(self) -> None:
        """Start the loop and serve the snapshot (checked against its manifest first)."""
        self._thread.start()

        async def serve() -> ReplayServer:
            server = ReplayServer(self.snapshot)
            await server.start()
            self._judge = asyncio.get_running_loop().create_task(self._open_judge())
            return server

        try:
            self._server = self.call(serve())
        except BaseException:
            self._stop_loop()
            raise

    async def _open_judge(self) -> Judge:
        grounding = Grounding(self.snapshot)
        await grounding.__aenter__()
        # Made on this loop: the client's connections belong to the loop that uses them. The key is the judge
        # role's, as `capreplay judge` reads it.
        key = model_key("judge", self._judge_model.provider, os.environ)
        return Judge(grounding, judge_client(self._judge_model, key, self._judge_cache))

    def listen(self) -> ServeInfo:
        """A pair of ports of one episode's own, and the Chromium arguments that browse the snapshot through them."""
        return self.call(self.server.listen())

    def take_requests(self, info: ServeInfo) -> list[RequestRecord]:
        """Every request served on ``info``'s ports so far, taken out of the server's log, then those ports closed."""

        async def take() -> list[RequestRecord]:
            server = self.server
            ports = (info.http_port, info.https_port)
            served = server.served
            mine = [s for s in served if s.port in ports]
            served[:] = [s for s in served if s.port not in ports]
            await server.unlisten(info)
            return [RequestRecord(method=s.method, url=s.url, result=s.result, rule=s.rule, status=s.status)
                    for s in mine]  # fmt: skip

        return self.call(take())

    def judge(self, record: EpisodeRecord, task: WorkflowTask) -> EpisodeVerdict:
        """capreplay's verdict on one episode, judged on the same snapshot, as ``capreplay judge`` judges it."""

        async def run() -> EpisodeVerdict:
            assert self._judge is not None
            return await judge_episode(record, task, await self._judge)

        return self.call(run())

    def close(self) -> None:
        """Stop the judge's browser, the server and the loop; safe to call twice."""
        if not self._thread.is_alive():
            return

        async def stop() -> None:
            try:
                if self._judge is not None:
                    judge, self._judge = await self._judge, None
                    try:
                        if judge.client is not None:
                            await judge.client.aclose()
                    finally:
                        await judge.grounding.__aexit__(None, None, None)
            finally:
                if self._server is not None:
                    await self._server.stop()
                    self._server = None

        try:
            self.call(stop())
        finally:
            self._stop_loop()

    def _stop_loop(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=30)
        if not self._thread.is_alive():
            self._loop.close()
