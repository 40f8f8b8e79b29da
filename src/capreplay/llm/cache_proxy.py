"""A caching Messages API proxy on 127.0.0.1, for model clients capreplay does not build itself.

An agent such as browser-use's brings its own SDK and builds every request itself, so the response cache of
:class:`capreplay.llm.cache.CachedClient` cannot sit inside it. Pointed at this proxy instead of the API
(``ANTHROPIC_BASE_URL``), such an agent's calls still go through capreplay's cache: the first run forwards
each call once to the upstream API and stores the answer, a re-run is answered from the cache folder and
makes no upstream call at all, so it costs nothing and gets the same answers, byte for byte.

The key of a call is the sha256 of the canonical JSON of its path (``/v1/messages``, with any query such as
``?beta=true``), its ``anthropic-version`` and ``anthropic-beta`` headers, and its whole body. The SDK puts
everything that decides the answer into the body (model, max_tokens, thinking, system, messages, tools), so
unlike :func:`capreplay.llm.cache.cache_key` there are no settings to pick out: the body is the question;
the two headers change how it is read. Other headers (user agent, timeouts, the key) are left out, so a
new key or SDK version answers from the same entries. ``volatile`` patterns name the parts of a body that
change from run to run without changing what is asked (an agent's wall-clock date, a browser's random tab
ids): each match counts as the same placeholder in the key, and is still sent upstream as it was.

Entries are JSON files ``<key>.json`` in the same folder :class:`capreplay.llm.cache.ResponseCache` uses, of
their own kind (:class:`ProxyEntry`, whose key material differs from the client cache's, so the two never
meet). Only a 200 answer that is a JSON object is stored; an error status is passed back as the upstream
sent it and not stored, so the next run asks again. Nothing is retried. Streaming requests are refused
(status 400): a cached answer is one whole response. The caller's headers go upstream as they came, less
the hop-by-hop ones; the proxy never reads, stores or logs the key in them.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Literal

import aiohttp
from aiohttp import web
from pydantic import ConfigDict

from capreplay.errors import InputError, os_reason
from capreplay.llm.cache import Keyed, ResponseCache
from capreplay.util.local_server import LocalServer

ProxyPath = Literal["/v1/messages", "/v1/messages/count_tokens"]
PATHS: tuple[ProxyPath, ...] = ("/v1/messages", "/v1/messages/count_tokens")
KEY_VERSION = 1
KEYED_HEADERS = ("anthropic-version", "anthropic-beta")
"""Headers that change how the API reads a body, so part of the key."""
VOLATILE_MARK = "\u2047volatile\u2047"
"""What every match of a volatile pattern is replaced with in the key's material."""
DEFAULT_TIMEOUT_S = 900.0
"""Longest wait for one upstream answer; the caller's SDK keeps its own, usually shorter, timeout."""

# RFC 9110 section 7.6.1's hop-by-hop headers, plus what the proxy's own HTTP client sets for its connection.
_NOT_FORWARDED = frozenset({
    "connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "proxy-connection", "te", "trailer",
    "trailers", "transfer-encoding", "upgrade", "host", "content-length", "accept-encoding",
})  # fmt: skip
_PASSED_BACK = ("content-type", "request-id", "retry-after")


class ProxyEntry(Keyed):
    """One stored answer of the proxy: the upstream's 200 JSON body, as it came."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["messages_http"] = "messages_http"
    path: str
    response: dict[str, Any]
    request_id: str | None = None
    latency_s: float
    """Wall time of the upstream call that made the entry."""


@dataclass(frozen=True)
class ProxyCall:
    """One call the proxy answered: from its cache or the upstream, with the tokens the answer reports."""

    path: str
    key: str
    status: int
    cached: bool
    latency_s: float
    """The upstream call's wall time (of the original call, for an answer from the cache)."""
    input_tokens: int = 0
    output_tokens: int = 0


def _masked(value: Any, patterns: Sequence[re.Pattern[str]]) -> Any:
    """``value`` with every match of ``patterns`` in any of its strings replaced by :data:`VOLATILE_MARK`."""
    if isinstance(value, str):
        for pattern in patterns:
            value = pattern.sub(VOLATILE_MARK, value)
        return value
    if isinstance(value, list):
        return [_masked(v, patterns) for v in value]
    if isinstance(value, dict):
        return {k: _masked(v, patterns) for k, v in value.items()}
    return value


def proxy_key(path: str, headers: Mapping[str, str], body: dict[str, Any],
              volatile: Sequence[re.Pattern[str]] = ()) -> str:  # fmt: skip
    """The hex sha256 naming the stored answer of one request (``headers`` with lower-case names)."""
    material = {
        "version": KEY_VERSION,
        "kind": "messages_http",
        "path": path,
        "headers": {name: headers[name] for name in KEYED_HEADERS if name in headers},
        "body": _masked(body, volatile),
    }
    canonical = json.dumps(material, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _tokens(response: Mapping[str, Any]) -> tuple[int, int]:
    """Input and output tokens of a Messages or count_tokens answer (0 where it states none)."""
    usage = response.get("usage")
    if isinstance(usage, dict):
        counts = (usage.get("input_tokens"), usage.get("output_tokens"))
    else:
        counts = (response.get("input_tokens"), None)
    return tuple(c if isinstance(c, int) else 0 for c in counts)  # type: ignore[return-value]


def _error(status: int, error_type: str, message: str) -> web.Response:
    """An answer in the Messages API's error shape, so the caller's SDK reads the reason."""
    return web.json_response({"type": "error", "error": {"type": error_type, "message": message}}, status=status)


def _answer(entry: ProxyEntry) -> web.Response:
    """A stored answer; the same bytes whether it was just fetched or read back from the cache."""
    headers = {"request-id": entry.request_id} if entry.request_id else {}
    text = json.dumps(entry.response, ensure_ascii=False, separators=(",", ":"))
    return web.Response(text=text, content_type="application/json", headers=headers)


class CachingProxy(LocalServer):
    """The running proxy: ``base_url`` is what the caller's SDK takes instead of the API's."""

    runner_options: ClassVar[dict[str, Any]] = {"handler_cancellation": True, "shutdown_timeout": 2.0}

    def __init__(self, upstream: str, cache_dir: Path, *, volatile: Sequence[re.Pattern[str]] = (),
                 timeout_s: float = DEFAULT_TIMEOUT_S) -> None:  # fmt: skip
        """Forward misses to ``upstream`` (an endpoint root such as ``https://api.anthropic.com``), keep answers in
        the cache folder ``cache_dir``; ``volatile``: see the module docstring."""
        super().__init__()
        self.upstream = upstream.rstrip("/")
        self.cache = ResponseCache(cache_dir)
        self.volatile = tuple(volatile)
        self.timeout_s = timeout_s
        self.calls: list[ProxyCall] = []
        """Every call answered with 200, in order: what the caller was billed for, and what the cache saved."""
        self._locks: dict[str, asyncio.Lock] = {}
        self._session: aiohttp.ClientSession | None = None

    @property
    def base_url(self) -> str:
        """The root the caller's SDK takes as its base URL (it adds ``/v1/messages``)."""
        return f"http://127.0.0.1:{self.port}"

    def application(self) -> web.Application:
        """The two routes of the Messages API that the proxy answers."""
        app = web.Application(client_max_size=64 * 1024 * 1024)  # a call carries screenshots
        for path in PATHS:
            app.router.add_post(path, self._handle)
        return app

    async def start(self) -> None:
        """Open the upstream client, then serve."""
        self._session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=self.timeout_s), auto_decompress=True)
        try:
            await super().start()
        except BaseException:
            await self._session.close()
            raise

    async def stop(self) -> None:
        """Stop serving and close the upstream client (idempotent)."""
        await super().stop()
        session, self._session = self._session, None
        if session is not None:
            await session.close()

    def read_entry(self, key: str) -> ProxyEntry | None:
        """The stored answer ``key``, or None; a damaged entry is an :class:`InputError` naming its file."""
        return self.cache.read(key, ProxyEntry, "proxy cache entry")

    def _record(self, entry: ProxyEntry, cached: bool) -> None:
        tokens_in, tokens_out = _tokens(entry.response)
        self.calls.append(ProxyCall(entry.path, entry.key, 200, cached, entry.latency_s, tokens_in, tokens_out))

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        raw = await request.read()
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        if not isinstance(body, dict):
            return _error(400, "invalid_request_error", "the caching proxy takes a JSON object as the body")
        if body.get("stream"):
            return _error(400, "invalid_request_error", 'the caching proxy answers whole responses only: send the '
                          'request without "stream": true')  # fmt: skip
        headers = {k.lower(): v for k, v in request.headers.items()}
        path = request.path_qs
        key = proxy_key(path, headers, body, self.volatile)
        async with self._locks.setdefault(key, asyncio.Lock()):
            try:
                entry = self.read_entry(key)
            except InputError as e:
                return _error(500, "api_error", f"the caching proxy cannot read its cache: {e.message}")
            if entry is not None:
                self._record(entry, cached=True)
                return _answer(entry)
            return await self._forward(request, path, key, raw)

    async def _forward(self, request: web.Request, path: str, key: str, raw: bytes) -> web.StreamResponse:
        """One upstream call: a 200 JSON object is stored and answered; anything else passed back, not stored."""
        assert self._session is not None, "the proxy is not running"
        headers = {k: v for k, v in request.headers.items() if k.lower() not in _NOT_FORWARDED}
        clock = time.monotonic()
        try:
            async with self._session.post(self.upstream + path, data=raw, headers=headers) as upstream:
                data = await upstream.read()
                status = upstream.status
                passed = {h: upstream.headers[h] for h in _PASSED_BACK if h in upstream.headers}
        except TimeoutError:
            return _error(
                504, "api_error", f"the caching proxy had no answer from the model API in {self.timeout_s:g} s"
            )
        except aiohttp.ClientError as e:
            return _error(502, "api_error", f"the caching proxy cannot reach the model API: {type(e).__name__}")
        latency = round(time.monotonic() - clock, 3)
        response: Any = None
        if status == 200:
            try:
                response = json.loads(data)
            except ValueError:
                response = None
        if not isinstance(response, dict):
            return web.Response(body=data, status=status, headers=passed)
        entry = ProxyEntry(
            key=key, path=path, response=response, request_id=passed.get("request-id"), latency_s=latency
        )
        try:
            self.cache.put(entry)
        except OSError as e:
            return _error(500, "api_error", f"the caching proxy cannot write its cache: {os_reason(e)}")
        self._record(entry, cached=False)
        return _answer(entry)
