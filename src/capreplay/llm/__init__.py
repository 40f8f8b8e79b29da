"""The only boundary to model APIs: Anthropic Messages, OpenAI-compatible Chat Completions and embeddings.

Every call is made once: nothing here retries. A failed call raises :class:`capreplay.errors.ModelError`
whose ``kind`` (timeout, rate_limit, api_status, connection, bad_response) lets a run count failures
apart from wrong answers; each provider module maps its own transport's errors onto it
(:func:`capreplay.llm.anthropic.to_model_error` for the SDK, aiohttp's in :mod:`capreplay.llm.openai_compat`).
API keys are read from the environment when a client is made and are never logged, cached or raised.
Embeddings come from OpenAI-compatible endpoints only (:mod:`capreplay.llm.embeddings`; Anthropic has none),
made by :func:`make_embedder`.
"""

from __future__ import annotations

from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING, Any

from capreplay.errors import ModelError, ModelErrorKind
from capreplay.llm.messages import (
    Embeddings,
    EmbeddingSettings,
    ImageBlock,
    ModelRequest,
    ModelResult,
    ModelSettings,
    Provider,
    TextBlock,
    Usage,
)

if TYPE_CHECKING:
    from capreplay.llm.anthropic import AnthropicClient
    from capreplay.llm.cache import CachedClient, CachedEmbedder, ResponseCache, cache_key, embedding_key
    from capreplay.llm.client import ModelClient
    from capreplay.llm.embeddings import Embedder, OpenAIEmbedder, embed_all
    from capreplay.llm.openai_compat import OpenAICompatClient

# The clients import their SDKs (the anthropic SDK alone takes seconds to import on a slow machine); the
# models above are all that task files, run records and agents need, so the clients load on first use.
_LAZY = {
    "AnthropicClient": "capreplay.llm.anthropic",
    "CachedClient": "capreplay.llm.cache",
    "CachedEmbedder": "capreplay.llm.cache",
    "ResponseCache": "capreplay.llm.cache",
    "cache_key": "capreplay.llm.cache",
    "embedding_key": "capreplay.llm.cache",
    "ModelClient": "capreplay.llm.client",
    "Embedder": "capreplay.llm.embeddings",
    "OpenAIEmbedder": "capreplay.llm.embeddings",
    "embed_all": "capreplay.llm.embeddings",
    "OpenAICompatClient": "capreplay.llm.openai_compat",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(module), name)


__all__ = [
    "AnthropicClient",
    "CachedClient",
    "CachedEmbedder",
    "Embedder",
    "EmbeddingSettings",
    "Embeddings",
    "ImageBlock",
    "ModelClient",
    "ModelError",
    "ModelErrorKind",
    "ModelRequest",
    "ModelResult",
    "ModelSettings",
    "OpenAICompatClient",
    "OpenAIEmbedder",
    "Provider",
    "ResponseCache",
    "TextBlock",
    "Usage",
    "cache_key",
    "embed_all",
    "embedding_key",
    "make_client",
    "make_embedder",
]


def make_client(settings: ModelSettings, *, cache_dir: Path | None = None, api_key: str | None = None) -> ModelClient:
    """The client for ``settings.provider``, answering from a response cache in ``cache_dir`` when given.

    ``api_key`` overrides the provider's environment variable (``ANTHROPIC_API_KEY`` or ``OPENAI_API_KEY``).
    A missing Anthropic key raises :class:`capreplay.errors.UsageError`.
    """
    from capreplay.llm.anthropic import AnthropicClient
    from capreplay.llm.cache import CachedClient
    from capreplay.llm.openai_compat import OpenAICompatClient

    client: ModelClient
    if settings.provider == "anthropic":
        client = AnthropicClient(settings, api_key=api_key)
    else:
        client = OpenAICompatClient(settings, api_key=api_key)
    return CachedClient(client, cache_dir) if cache_dir is not None else client


def make_embedder(
    settings: EmbeddingSettings, *, cache_dir: Path | None = None, api_key: str | None = None
) -> Embedder:
    """The embeddings client of ``settings``, answering from a response cache in ``cache_dir`` when given.

    ``api_key`` overrides ``OPENAI_API_KEY``; without either no key is sent (local servers need none).
    """
    from capreplay.llm.cache import CachedEmbedder
    from capreplay.llm.embeddings import OpenAIEmbedder

    embedder = OpenAIEmbedder(settings, api_key=api_key)
    return CachedEmbedder(embedder, cache_dir) if cache_dir is not None else embedder
