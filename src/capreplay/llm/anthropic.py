"""Calls to the Anthropic Messages API through the official SDK (``AsyncAnthropic``), never retried.

The key comes from ``ANTHROPIC_API_KEY`` unless given; the endpoint from the settings, else
``ANTHROPIC_BASE_URL`` (read by the SDK), else Anthropic's own. Setting a base URL is how tests send the
real SDK to :mod:`capreplay.testing.fake_llm` over real HTTP.
"""

from __future__ import annotations

import os
import time
from typing import cast

import anthropic
from anthropic.types import ImageBlockParam, Message, MessageParam, TextBlockParam, ThinkingConfigParam

from capreplay.errors import ModelError, ModelErrorKind, UsageError
from capreplay.llm.messages import ModelRequest, ModelResult, ModelSettings, TextBlock, Usage

KEY_VARIABLE = "ANTHROPIC_API_KEY"


def to_messages(request: ModelRequest) -> list[MessageParam]:
    """The Messages API ``messages`` for ``request``: one user turn holding its blocks in order."""
    blocks: list[TextBlockParam | ImageBlockParam] = []
    for block in request.content:
        if isinstance(block, TextBlock):
            blocks.append({"type": "text", "text": block.text})
        else:
            blocks.append(
                {"type": "image", "source": {"type": "base64", "media_type": block.media_type, "data": block.data}}
            )
    return [{"role": "user", "content": blocks}]


def to_result(message: Message, latency_s: float) -> ModelResult:
    """The provider-neutral result of a parsed ``Message``."""
    text = "".join(block.text for block in message.content if block.type == "text")
    usage = message.usage
    return ModelResult(
        text=text,
        usage=Usage(
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            # exclude_unset keeps exactly the fields the API sent, not the SDK's defaults for absent ones
            raw=usage.model_dump(mode="json", exclude_unset=True),
        ),
        stop_reason=message.stop_reason,
        model=message.model,
        latency_s=latency_s,
        request_id=message._request_id,
    )


def to_model_error(error: anthropic.APIError, where: str) -> ModelError:
    """The project error for an SDK error; the SDK's own message never holds the key, only the response."""
    if isinstance(error, anthropic.APITimeoutError):
        return ModelError("no answer within the timeout", "timeout", where=where)
    if isinstance(error, anthropic.APIStatusError):
        kind: ModelErrorKind = "rate_limit" if isinstance(error, anthropic.RateLimitError) else "api_status"
        detail = error.api_message or error.message
        return ModelError(
            f"status {error.status_code}: {detail}",
            kind,
            where=where,
            status=error.status_code,
            request_id=error.request_id,
        )
    if isinstance(error, anthropic.APIConnectionError):
        return ModelError(f"cannot reach the API: {error.message}", "connection", where=where)
    return ModelError(f"unexpected response: {error.message}", "bad_response", where=where)


class AnthropicClient:
    """An async Messages API client for one model and its settings."""

    def __init__(self, settings: ModelSettings, *, api_key: str | None = None) -> None:
        """Create the SDK client; raises :class:`UsageError` when no key is given and none is in the environment."""
        if settings.provider != "anthropic":
            raise UsageError(f"settings name provider {settings.provider!r}, not 'anthropic'")
        key = api_key if api_key is not None else os.environ.get(KEY_VARIABLE)
        if not key:
            raise UsageError(f"{KEY_VARIABLE} is not set; the anthropic provider needs an API key")
        self._settings = settings
        self._where = f"model {settings.model}"
        # max_retries=0: a run counts every failed call once, so the SDK must not hide failures by retrying.
        self._client = anthropic.AsyncAnthropic(
            api_key=key, base_url=settings.base_url, timeout=settings.timeout_s, max_retries=0
        )

    @property
    def settings(self) -> ModelSettings:
        """The settings every call of this client uses."""
        return self._settings

    async def complete(self, request: ModelRequest) -> ModelResult:
        """Send ``request`` once to ``POST /v1/messages``; a failure raises :class:`ModelError`."""
        s = self._settings
        started = time.monotonic()
        try:
            message = await self._client.messages.create(
                model=s.model,
                max_tokens=s.max_tokens,
                messages=to_messages(request),
                system=request.system or anthropic.omit,
                thinking=cast(ThinkingConfigParam, s.thinking) if s.thinking is not None else anthropic.omit,
                # this SDK version has no temperature parameter: send it as a body field, for models that take it
                extra_body={"temperature": s.temperature} if s.temperature is not None else None,
            )
        except anthropic.APIError as e:
            raise to_model_error(e, self._where) from e
        return to_result(message, time.monotonic() - started)

    async def count_tokens(self, request: ModelRequest) -> int:
        """Input tokens of ``request`` by ``POST /v1/messages/count_tokens``; no output is generated."""
        s = self._settings
        try:
            counted = await self._client.messages.count_tokens(
                model=s.model,
                messages=to_messages(request),
                system=request.system or anthropic.omit,
                thinking=cast(ThinkingConfigParam, s.thinking) if s.thinking is not None else anthropic.omit,
            )
        except anthropic.APIError as e:
            raise to_model_error(e, self._where) from e
        return counted.input_tokens

    async def aclose(self) -> None:
        """Close the SDK's connection pool."""
        await self._client.close()
