"""A response cache in front of any model client, so re-scoring a run is deterministic and free.

The key of a call is the sha256 of the canonical JSON of what decides its answer: the operation, the
settings that change output (:data:`capreplay.llm.messages.OUTPUT_FIELDS`; not the endpoint or the timeout)
and the whole request. Embeddings calls (operation ``embed``, :class:`CachedEmbedder`) are keyed the same
way, by their settings that change the vectors and the list of texts of the one call; their vectors are
stored as the API sent them, so a re-run gets the identical floats. Each answer is one JSON file
``<key>.json`` in the cache folder, replaced atomically, so an interrupted write never leaves half an entry.
A hit makes no HTTP call; failed calls are not cached.

Identical requests get the identical cached answer: a study that samples the same prompt several times
must not share one cache folder between its repeats.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from capreplay.errors import InputError, os_reason
from capreplay.llm.client import ModelClient
from capreplay.llm.messages import Embeddings, EmbeddingSettings, ModelRequest, ModelResult, ModelSettings
from capreplay.util.files import write_atomic

if TYPE_CHECKING:
    # only for annotations: the embeddings client loads aiohttp, which the cache of chat calls does not need
    from capreplay.llm.embeddings import Embedder

Operation = Literal["complete", "count_tokens", "embed"]

# Part of every key: changing how keys are made must not make old entries answer new questions.
KEY_VERSION = 1


def _key(operation: Operation, settings: dict[str, Any], request: dict[str, Any]) -> str:
    material = {"version": KEY_VERSION, "operation": operation, "settings": settings, "request": request}
    canonical = json.dumps(material, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def cache_key(operation: Operation, settings: ModelSettings, request: ModelRequest) -> str:
    """The hex sha256 that names the cached answer of ``request`` under ``settings``."""
    return _key(operation, settings.output_settings(), request.model_dump(mode="json"))


def embedding_key(settings: EmbeddingSettings, texts: Sequence[str]) -> str:
    """The hex sha256 that names the cached vectors of one embeddings call of ``texts`` under ``settings``."""
    return _key("embed", settings.output_settings(), {"input": list(texts)})


class Keyed(BaseModel):
    """What every kind of entry in a cache folder has: the key its file is named by."""

    key: str


class CacheEntry(Keyed):
    """One cached answer as stored on disk."""

    model_config = ConfigDict(extra="forbid")

    operation: Operation
    settings: dict[str, Any]
    result: ModelResult | None = None
    input_tokens: int | None = None
    embeddings: Embeddings | None = None


class ResponseCache:
    """The cache folder: reads and writes entries by key."""

    def __init__(self, folder: Path) -> None:
        """Use ``folder`` (created on the first write)."""
        self.folder = folder

    def path(self, key: str) -> Path:
        """The file of the entry ``key``."""
        return self.folder / f"{key}.json"

    def get(self, key: str) -> CacheEntry | None:
        """The entry ``key``, or None if there is none; a damaged entry is an :class:`InputError`."""
        return self.read(key, CacheEntry, "cache entry")

    def read[E: Keyed](self, key: str, model: type[E], what: str) -> E | None:
        """The entry ``key`` read as ``model`` (``what`` names its kind in errors), or None if there is none.

        An unreadable or invalid entry, or one holding another key than its file name's, is an InputError.
        """
        path = self.path(key)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as e:
            raise InputError(f"cannot read cache entry: {os_reason(e)}", where=path) from e
        try:
            entry = model.model_validate_json(data)
        except ValidationError as e:
            raise InputError(
                f"not a valid {what} ({e.error_count()} errors); delete it to call again", where=path
            ) from e
        if entry.key != key:
            raise InputError(f"cache entry holds key {entry.key}, not its file name's", where=path)
        return entry

    def put(self, entry: Keyed) -> None:
        """Write ``entry`` atomically, replacing any entry with its key; a failed write raises, never silent."""
        self.folder.mkdir(parents=True, exist_ok=True)
        write_atomic(self.path(entry.key), entry.model_dump_json(indent=1).encode("utf-8") + b"\n")


class CachedClient:
    """A :class:`ModelClient` that answers from a :class:`ResponseCache` and calls ``inner`` only on a miss.

    Concurrent calls with one key wait for the first, so a key is never asked of the API twice.
    """

    def __init__(self, inner: ModelClient, folder: Path) -> None:
        """Cache the answers of ``inner`` in ``folder``."""
        self.inner = inner
        self.cache = ResponseCache(folder)
        self._locks: dict[str, asyncio.Lock] = {}

    @property
    def settings(self) -> ModelSettings:
        """The inner client's settings."""
        return self.inner.settings

    def _lock(self, key: str) -> asyncio.Lock:
        # Locks are kept for the client's life: dropping one while a caller waits on it would let a
        # newcomer take a fresh lock and call the API beside the waiter.
        return self._locks.setdefault(key, asyncio.Lock())

    async def complete(self, request: ModelRequest) -> ModelResult:
        """The cached answer to ``request`` (``cached=True``), or the inner client's, which is then stored."""
        key = cache_key("complete", self.settings, request)
        async with self._lock(key):
            entry = self.cache.get(key)
            if entry is not None and entry.result is not None:
                return entry.result.model_copy(update={"cached": True})
            result = await self.inner.complete(request)
            self.cache.put(
                CacheEntry(key=key, operation="complete", settings=self.settings.output_settings(), result=result)
            )
        return result

    async def count_tokens(self, request: ModelRequest) -> int | None:
        """The cached token count of ``request``, or the inner client's, which is then stored (if not None)."""
        key = cache_key("count_tokens", self.settings, request)
        async with self._lock(key):
            entry = self.cache.get(key)
            if entry is not None and entry.input_tokens is not None:
                return entry.input_tokens
            counted = await self.inner.count_tokens(request)
            if counted is not None:
                self.cache.put(
                    CacheEntry(
                        key=key,
                        operation="count_tokens",
                        settings=self.settings.output_settings(),
                        input_tokens=counted,
                    )
                )
        return counted

    async def aclose(self) -> None:
        """Close the inner client."""
        await self.inner.aclose()


class CachedEmbedder:
    """An :class:`Embedder` that answers from a :class:`ResponseCache` and calls ``inner`` only on a miss.

    Each call is cached as a whole (its texts in their order), so a re-run that makes the same calls makes no
    HTTP call; concurrent calls with one key wait for the first, as in :class:`CachedClient`.
    """

    def __init__(self, inner: Embedder, folder: Path) -> None:
        """Cache the vectors of ``inner`` in ``folder``."""
        self.inner = inner
        self.cache = ResponseCache(folder)
        self._locks: dict[str, asyncio.Lock] = {}

    @property
    def settings(self) -> EmbeddingSettings:
        """The inner client's settings."""
        return self.inner.settings

    async def embed(self, texts: Sequence[str]) -> Embeddings:
        """The cached vectors of ``texts`` (``cached=True``), or the inner client's, which are then stored."""
        key = embedding_key(self.settings, texts)
        async with self._locks.setdefault(key, asyncio.Lock()):
            entry = self.cache.get(key)
            if entry is not None and entry.embeddings is not None:
                return entry.embeddings.model_copy(update={"cached": True})
            result = await self.inner.embed(texts)
            self.cache.put(
                CacheEntry(key=key, operation="embed", settings=self.settings.output_settings(), embeddings=result)
            )
        return result

    async def aclose(self) -> None:
        """Close the inner client."""
        await self.inner.aclose()
