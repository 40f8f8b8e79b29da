"""Calls to any OpenAI-compatible Chat Completions endpoint over aiohttp, never retried.

Local servers (vLLM, llama.cpp, Ollama, ...) speak this API too, so the endpoint is the settings' base URL
(``.../v1``), else ``OPENAI_BASE_URL``, else OpenAI's own. The key comes from ``OPENAI_API_KEY`` and may be
absent: local servers often need none, and then no ``Authorization`` header is sent.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from capreplay.errors import ModelError, UsageError
from capreplay.llm.messages import ModelRequest, ModelResult, ModelSettings, TextBlock, Usage
from capreplay.llm.openai_http import Endpoint


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


class OpenAICompatClient:
    """An async Chat Completions client for one model and its settings."""

    def __init__(self, settings: ModelSettings, *, api_key: str | None = None) -> None:
        """Prepare the client; the HTTP session is opened by the first call, inside the running event loop."""
        if settings.provider != "openai_compatible":
            raise UsageError(f"settings name provider {settings.provider!r}, not 'openai_compatible'")
        self._settings = settings
        self._endpoint = Endpoint(settings.base_url, "chat/completions", f"model {settings.model}",
                                  settings.timeout_s, api_key)  # fmt: skip

    @property
    def settings(self) -> ModelSettings:
        """The settings every call of this client uses."""
        return self._settings

    async def complete(self, request: ModelRequest) -> ModelResult:
        """Send ``request`` once to ``POST {base_url}/chat/completions``; a failure raises :class:`ModelError`."""
        answered = await self._endpoint.post(to_chat_body(self._settings, request))
        try:
            return to_result(json.loads(answered.text), answered.request_id, answered.latency_s)
        except (ValueError, ValidationError) as e:
            raise ModelError(f"not a Chat Completions response: {answered.text[:200]!r}", "bad_response",
                             where=self._endpoint.where, status=answered.status) from e  # fmt: skip

    async def count_tokens(self, request: ModelRequest) -> None:
        """Chat Completions has no token-counting endpoint: always None."""
        return None

    async def aclose(self) -> None:
        """Close the HTTP session."""
        await self._endpoint.aclose()
