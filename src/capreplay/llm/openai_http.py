"""One POST to an OpenAI-compatible endpoint over aiohttp, never retried: the transport both the Chat
Completions client and the embeddings client use, with one mapping of failures onto ModelError.

The endpoint is a path under the base URL (the settings' own, else ``OPENAI_BASE_URL``, else OpenAI's); the key
is the one given, else ``OPENAI_API_KEY``, else none, and then no ``Authorization`` header is sent (local servers
need none). The key is never put into an error.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from typing import Any

import aiohttp

from capreplay.errors import ModelError, ModelErrorKind

KEY_VARIABLE = "OPENAI_API_KEY"
BASE_URL_VARIABLE = "OPENAI_BASE_URL"
DEFAULT_BASE_URL = "https://api.openai.com/v1"


def error_detail(text: str) -> str:
    """The message of an error response: ``error.message`` of its JSON if there is one, else its start."""
    try:
        data = json.loads(text)
    except ValueError:
        return text[:200]
    error = data.get("error") if isinstance(data, dict) else None
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return str(error["message"])
    return text[:200]


@dataclass(frozen=True)
class Answered:
    """A response below status 400: its body, status, request id and how long the call took."""

    text: str
    status: int
    request_id: str | None
    latency_s: float


class Endpoint:
    """``POST {base}/{path}`` with the key's header; the HTTP session opens on the first call, in the running loop."""

    def __init__(self, base_url: str | None, path: str, where: str, timeout_s: float, api_key: str | None) -> None:
        base = base_url or os.environ.get(BASE_URL_VARIABLE) or DEFAULT_BASE_URL
        self.url = base.rstrip("/") + "/" + path
        self.where = where
        self._timeout = aiohttp.ClientTimeout(total=timeout_s)
        self._key = api_key if api_key is not None else os.environ.get(KEY_VARIABLE)
        self._session: aiohttp.ClientSession | None = None

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json"}
        if self._key:
            headers["Authorization"] = f"Bearer {self._key}"
        return headers

    async def post(self, body: dict[str, Any]) -> Answered:
        """Send ``body`` once; a timeout, a connection failure or a status of 400 or more raises ModelError."""
        if self._session is None:
            self._session = aiohttp.ClientSession()
        started = time.monotonic()
        try:
            async with self._session.post(self.url, json=body, headers=self._headers(), timeout=self._timeout) as r:
                text = await r.text()
                status = r.status
                request_id = r.headers.get("x-request-id")
        # aiohttp's timeouts are TimeoutError and some are ClientErrors too: test for the timeout first.
        except TimeoutError as e:
            raise ModelError("no answer within the timeout", "timeout", where=self.where) from e
        except aiohttp.ClientError as e:
            raise ModelError(f"cannot reach the API: {e}", "connection", where=self.where) from e
        if status >= 400:
            kind: ModelErrorKind = "rate_limit" if status == 429 else "api_status"
            raise ModelError(f"status {status}: {error_detail(text)}", kind, where=self.where, status=status,
                             request_id=request_id)  # fmt: skip
        return Answered(text, status, request_id, time.monotonic() - started)

    async def aclose(self) -> None:
        """Close the HTTP session."""
        if self._session is not None:
            await self._session.close()
            self._session = None
