"""One aiohttp application on one 127.0.0.1 port, started and stopped cleanly: the base of the local
servers that stand in for the outside world (the fixture origins, the fake model API)."""

from __future__ import annotations

import ssl
from types import TracebackType
from typing import Any, ClassVar, Self

from aiohttp import web


class LocalServer:
    """Subclasses give the application (and a TLS context, for HTTPS); ``port=0`` picks a free port."""

    runner_options: ClassVar[dict[str, Any]] = {"shutdown_timeout": 2.0}
    """Passed to ``web.AppRunner``. A short shutdown: a browser may keep connections open, and neither
    tests nor scripts should hang on them."""

    def __init__(self, port: int = 0) -> None:
        self.port = port
        self._runner: web.AppRunner | None = None

    def application(self) -> web.Application:
        """The application to serve, made at each start."""
        raise NotImplementedError

    def tls(self) -> ssl.SSLContext | None:
        """The TLS context to serve with, made at each start; None serves plain HTTP."""
        return None

    async def start(self) -> None:
        """Bind 127.0.0.1 and start serving; sets ``port``."""
        if self._runner is not None:
            raise RuntimeError(f"{type(self).__name__} is already running")
        runner = web.AppRunner(self.application(), access_log=None, **self.runner_options)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", self.port, ssl_context=self.tls())
        try:
            await site.start()
        except BaseException:
            await runner.cleanup()
            raise
        self._runner = runner
        self.port = int(runner.addresses[0][1])

    async def stop(self) -> None:
        """Stop serving and release the port (idempotent)."""
        runner, self._runner = self._runner, None
        if runner is not None:
            await runner.cleanup()

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.stop()
