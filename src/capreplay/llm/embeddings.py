"""Text embeddings from any OpenAI-compatible ``POST {base_url}/embeddings`` endpoint, over aiohttp, never retried.

This is the embeddings API that most servers speak: vLLM, Ollama's OpenAI mode, Hugging Face's
text-embeddings-inference, llama.cpp's server and OpenAI itself. Anthropic offers no embeddings endpoint,
so there is no Anthropic embedder. The endpoint is the settings' base URL, else ``OPENAI_BASE_URL``, else
OpenAI's own; the key is the one given, else ``OPENAI_API_KEY``, else none (no ``Authorization`` header, as
local servers need none). Failures map onto :class:`capreplay.errors.ModelError` exactly as the Chat
Completions client's do (:mod:`capreplay.llm.openai_compat`).

One :meth:`OpenAIEmbedder.embed` is one HTTP call of at most ``settings.batch_size`` texts;
:func:`embed_all` splits any number of texts into such calls and joins the vectors in input order. The
vectors are matched to their texts by the response's ``index``, not by the order of its list.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from capreplay.errors import ModelError, UsageError
from capreplay.llm.messages import Embeddings, EmbeddingSettings
from capreplay.llm.openai_http import Endpoint


class Embedder(Protocol):
    """An async client for one embedding model: one call per :meth:`embed`, never retried."""

    @property
    def settings(self) -> EmbeddingSettings:
        """The settings every call of this client uses."""
        ...

    async def embed(self, texts: Sequence[str]) -> Embeddings:
        """The vectors of ``texts`` (1 to ``settings.batch_size`` of them) from one call, in their order."""
        ...

    async def aclose(self) -> None:
        """Release connections; the client cannot be used afterwards."""
        ...


def embeddings_body(settings: EmbeddingSettings, texts: Sequence[str]) -> dict[str, Any]:
    """The request body: the model and the texts (a list even for one), and the dimensions if asked for."""
    body: dict[str, Any] = {"model": settings.model, "input": list(texts)}
    if settings.dimensions is not None:
        body["dimensions"] = settings.dimensions
    return body


class _Vector(BaseModel):
    # strict: a string where a number belongs (a base64 encoding, a quoted float) is not silently converted
    model_config = ConfigDict(strict=True)

    index: int = Field(ge=0)
    embedding: list[float] = Field(min_length=1)


class _Usage(BaseModel):
    prompt_tokens: int = Field(ge=0)


class _EmbeddingsResponse(BaseModel):
    """The parts of an embeddings response that a result needs (extra fields are ignored)."""

    data: list[_Vector]
    model: str | None = None
    usage: _Usage | None = None


def to_embeddings(data: Any, count: int, *, model: str, request_id: str | None, latency_s: float) -> Embeddings:
    """The vectors of a decoded response to ``count`` texts, ordered by index; ValueError if they do not fit.

    Every index from 0 to ``count - 1`` must appear once, and every vector must have the same length.
    ``model`` names the answer when the response does not (some servers leave it out).
    """
    parsed = _EmbeddingsResponse.model_validate(data)
    indices = sorted(item.index for item in parsed.data)
    if indices != list(range(count)):
        raise ValueError(f"expected the indices 0 to {count - 1}, got {indices[:8]}")
    vectors = [item.embedding for item in sorted(parsed.data, key=lambda item: item.index)]
    if len({len(v) for v in vectors}) > 1:
        raise ValueError("the vectors differ in length")
    return Embeddings(
        vectors=vectors,
        model=parsed.model or model,
        input_tokens=parsed.usage.prompt_tokens if parsed.usage is not None else None,
        latency_s=latency_s,
        request_id=request_id,
    )


class OpenAIEmbedder:
    """An async client of one OpenAI-compatible embeddings endpoint and model."""

    def __init__(self, settings: EmbeddingSettings, *, api_key: str | None = None) -> None:
        """Prepare the client; the HTTP session is opened by the first call, inside the running event loop."""
        if settings.provider != "openai_compatible":
            raise UsageError(f"embedding settings name provider {settings.provider!r}, not 'openai_compatible'")
        self._settings = settings
        self._endpoint = Endpoint(settings.base_url, "embeddings", f"embedding model {settings.model}",
                                  settings.timeout_s, api_key)  # fmt: skip

    @property
    def settings(self) -> EmbeddingSettings:
        """The settings every call of this client uses."""
        return self._settings

    async def embed(self, texts: Sequence[str]) -> Embeddings:
        """Send ``texts`` once to ``POST {base_url}/embeddings``; a failure raises :class:`ModelError`.

        More texts than ``settings.batch_size``, or none, is a ValueError (a caller's mistake, not the API's).
        """
        if not 1 <= len(texts) <= self._settings.batch_size:
            raise ValueError(f"one call embeds 1 to {self._settings.batch_size} texts, not {len(texts)}")
        answered = await self._endpoint.post(embeddings_body(self._settings, texts))
        try:
            return to_embeddings(json.loads(answered.text), len(texts), model=self._settings.model,
                                 request_id=answered.request_id, latency_s=answered.latency_s)  # fmt: skip
        except (ValueError, ValidationError) as e:
            raise ModelError(f"not an embeddings response for {len(texts)} texts: {answered.text[:200]!r}",
                             "bad_response", where=self._endpoint.where, status=answered.status) from e  # fmt: skip

    async def aclose(self) -> None:
        """Close the HTTP session."""
        await self._endpoint.aclose()


def batches(texts: Sequence[str], size: int) -> list[list[str]]:
    """``texts`` cut into consecutive runs of at most ``size`` (the last may be shorter)."""
    return [list(texts[i : i + size]) for i in range(0, len(texts), size)]


async def embed_all(
    embedder: Embedder, texts: Sequence[str], *, on_call: Callable[[Embeddings], None] | None = None
) -> list[list[float]]:
    """The vector of every text, in order, from calls of ``embedder.settings.batch_size`` texts one after another.

    ``on_call`` sees each call's result (to count its cost); no texts make no call.
    """
    vectors: list[list[float]] = []
    for batch in batches(texts, embedder.settings.batch_size):
        result = await embedder.embed(batch)
        if on_call is not None:
            on_call(result)
        vectors += result.vectors
    return vectors
