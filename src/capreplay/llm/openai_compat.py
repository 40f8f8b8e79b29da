"""Calls to any OpenAI-compatible Chat Completions endpoint over aiohttp, never retried.

Local servers (vLLM, llama.cpp, Ollama, ...) speak this API too, so the endpoint is the settings' base URL
(``.../v1``), else ``OPENAI_BASE_URL``, else OpenAI's own. The key comes from ``OPENAI_API_KEY`` and may be
absent: local servers often need none, and then no ``Authorization`` header is sent.
"""

from __future__ import annotations

import json
import os
import time
from typing import Any

import aiohttp
from pydantic import BaseModel, Field, ValidationError

from capreplay.errors import ModelError, ModelErrorKind, UsageError
from capreplay.llm.messages import ModelRequest, ModelResult, ModelSettings, TextBlock, Usage

KEY_VARIABLE = "OPENAI_API_KEY"
BASE_URL_VARIABLE = "OPENAI_BASE_URL"
DEFAULT_BASE_URL = "https://api.openai.com/v1"


def to_chat_body(settings: ModelSettings, request: ModelRequest) -> dict[str, Any]:
    """The Chat Completions request body: a system message (if any), then one user message with its parts."""
    parts: list[dict[str, Any]] = []
    for block in request.content:
        if isinstance(block, TextBlock):
            parts.append({"type": "text", "text": block.text})
        else:
            parts.append({"type": "image_url", "image_url": {"url": f"data:{block.media_type};base64,{block.data}"}})
    messages: list[dict[str, Any]] = []
    if request.system:
        messages.append({"role": "system", "content": request.system})
    messages.append({"role": "user", "content": parts})
    # max_tokens rather than OpenAI's newer max_completion_tokens: local servers know only the former.
    body: dict[str, Any] = {"model": settings.model, "messages": messages, "max_tokens": settings.max_tokens}
    if settings.temperature is not None:
        body["temperature"] = settings.temperature
    return body


class _ChatMessage(BaseModel):
    content: str | None = None


class _Choice(BaseModel):
    message: _ChatMessage
    finish_reason: str | None = None


class _ChatUsage(BaseModel):
    prompt_tokens: int
    completion_tokens: int


class _ChatResponse(BaseModel):
    """The parts of a Chat Completions response that a result needs (extra fields are ignored)."""

    id: str | None = None
    model: str
    choices: list[_Choice] = Field(min_length=1)
    usage: _ChatUsage


def to_result(data: Any, request_id: str | None, latency_s: float) -> ModelResult:
    """The provider-neutral result of a decoded Chat Completions response; raises ValidationError if malformed."""
    parsed = _ChatResponse.model_validate(data)
    choice = parsed.choices[0]
    return ModelResult(
        text=choice.message.content or "",
        usage=Usage(
            input_tokens=parsed.usage.prompt_tokens,
            output_tokens=parsed.usage.completion_tokens,
            raw=dict(data["usage"]),
        ),
        stop_reason=choice.finish_reason,
        model=parsed.model,
        latency_s=latency_s,
        request_id=request_id or parsed.id,
    )


def _error_detail(text: str) -> str:
    """The message of an error response: ``error.message`` of its JSON if there is one, else its start."""
    try:
        data = json.loads(text)
    except ValueError:
        return text[:200]
    error = data.get("error") if isinstance(data, dict) else None
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return str(error["message"])
    return text[:200]


class OpenAICompatClient:
    """An async Chat Completions client for one model and its settings."""

    def __init__(self, settings: ModelSettings, *, api_key: str | None = None) -> None:
        """Prepare the client; the HTTP session is opened by the first call, inside the running event loop."""
        if settings.provider != "openai_compatible":
            raise UsageError(f"settings name provider {settings.provider!r}, not 'openai_compatible'")
        self._settings = settings
        self._key = api_key if api_key is not None else os.environ.get(KEY_VARIABLE)
        base = settings.base_url or os.environ.get(BASE_URL_VARIABLE) or DEFAULT_BASE_URL
        self._url = base.rstrip("/") + "/chat/completions"
        self._where = f"model {settings.model}"
        self._session: aiohttp.ClientSession | None = None

    @property
    def settings(self) -> ModelSettings:
        """The settings every call of this client uses."""
        return self._settings

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json"}
        if self._key:
            headers["Authorization"] = f"Bearer {self._key}"
        return headers

    async def complete(self, request: ModelRequest) -> ModelResult:
        """Send ``request`` once to ``POST {base_url}/chat/completions``; a failure raises :class:`ModelError`."""
        if self._session is None:
            self._session = aiohttp.ClientSession()
        body = to_chat_body(self._settings, request)
        started = time.monotonic()
        try:
            async with self._session.post(
                self._url,
                json=body,
                headers=self._headers(),
                timeout=aiohttp.ClientTimeout(total=self._settings.timeout_s),
            ) as response:
                text = await response.text()
                status = response.status
                request_id = response.headers.get("x-request-id")
        # aiohttp's timeouts are TimeoutError and some are ClientErrors too: test for the timeout first.
        except TimeoutError as e:
            raise ModelError("no answer within the timeout", "timeout", where=self._where) from e
        except aiohttp.ClientError as e:
            raise ModelError(f"cannot reach the API: {e}", "connection", where=self._where) from e
        latency = time.monotonic() - started
        if status >= 400:
            kind: ModelErrorKind = "rate_limit" if status == 429 else "api_status"
            detail = _error_detail(text)
            raise ModelError(
                f"status {status}: {detail}", kind, where=self._where, status=status, request_id=request_id
            )
        try:
            return to_result(json.loads(text), request_id, latency)
        except (ValueError, ValidationError) as e:
            raise ModelError(
                f"not a Chat Completions response: {text[:200]!r}", "bad_response", where=self._where, status=status
            ) from e

    async def count_tokens(self, request: ModelRequest) -> None:
        """Chat Completions has no token-counting endpoint: always None."""
        return None

    async def aclose(self) -> None:
        """Close the HTTP session."""
        if self._session is not None:
            await self._session.close()
            self._session = None
