"""Provider-neutral data of a model call: the settings, the request and the result. No I/O here."""

from __future__ import annotations

import base64
from typing import Annotated, Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

Provider = Literal["anthropic", "openai_compatible"]

# The base64 of the 8-byte PNG signature: checking this prefix rejects non-PNG data without decoding it.
_PNG_BASE64_PREFIX = "iVBORw0KGgo"

# Fields of ModelSettings that change what a model answers; the others (where to call it, how long to
# wait) do not, so a cached answer stays valid when they change.
OUTPUT_FIELDS: tuple[str, ...] = ("provider", "model", "max_tokens", "thinking", "temperature")


class ModelSettings(BaseModel):
    """Which model to call and how; read from the protocol of a tasks file or from the command line."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    provider: Provider = Field(
        default="anthropic", description="API family: Anthropic Messages or OpenAI Chat Completions."
    )
    model: str = Field(min_length=1, description="Model name as the provider spells it.")
    max_tokens: int = Field(gt=0, description="Most output tokens one call may produce.")
    thinking: dict[str, Any] | None = Field(
        default=None,
        description='Anthropic thinking configuration sent as is, e.g. {"type": "disabled"}; None sends none.',
    )
    timeout_s: float = Field(default=60.0, gt=0, description="Seconds one call may take before it fails as a timeout.")
    base_url: str | None = Field(
        default=None,
        description="Endpoint root; None uses ANTHROPIC_BASE_URL or OPENAI_BASE_URL, then the provider's own.",
    )
    temperature: float | None = Field(default=None, ge=0, description="Sampling temperature; None leaves the default.")

    @model_validator(mode="after")
    def _thinking_is_anthropic_only(self) -> Self:
        # Chat Completions has no thinking switch; accepting one silently would run another experiment
        # than the one the settings describe.
        if self.provider == "openai_compatible" and self.thinking not in (None, {"type": "disabled"}):
            raise ValueError("thinking is only supported by the anthropic provider")
        return self

    def output_settings(self) -> dict[str, Any]:
        """The settings that change the answer, as JSON data (the part of a cache key that comes from here)."""
        return self.model_dump(mode="json", include=set(OUTPUT_FIELDS))


class TextBlock(BaseModel):
    """A piece of text in the user turn."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    type: Literal["text"] = "text"
    text: str = Field(description="The text as sent.")


class ImageBlock(BaseModel):
    """A PNG image in the user turn, base64-encoded (how both APIs take inline images)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    type: Literal["image"] = "image"
    media_type: Literal["image/png"] = "image/png"
    data: str = Field(description="The PNG file, base64-encoded (standard alphabet, padded).")

    @field_validator("data")
    @classmethod
    def _is_png(cls, data: str) -> str:
        if not data.startswith(_PNG_BASE64_PREFIX):
            raise ValueError("image data is not a base64-encoded PNG")
        return data

    @classmethod
    def from_png(cls, png: bytes) -> ImageBlock:
        """The block holding the PNG file ``png``."""
        return cls(data=base64.b64encode(png).decode("ascii"))


ContentBlock = Annotated[TextBlock | ImageBlock, Field(discriminator="type")]


class ModelRequest(BaseModel):
    """One single-turn call: a system text and the blocks of one user message."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    system: str = Field(default="", description="System prompt; empty sends none.")
    content: list[ContentBlock] = Field(min_length=1, description="The user message, in order.")

    @classmethod
    def of(cls, *parts: str | bytes, system: str = "") -> ModelRequest:
        """A request from plain parts: ``str`` becomes a text block, ``bytes`` (a PNG file) an image block."""
        blocks: list[TextBlock | ImageBlock] = [
            TextBlock(text=p) if isinstance(p, str) else ImageBlock.from_png(p) for p in parts
        ]
        return cls(system=system, content=blocks)


class Usage(BaseModel):
    """Tokens one call consumed, as the provider reported them."""

    model_config = ConfigDict(frozen=True)

    input_tokens: int = Field(description="Prompt tokens billed (Anthropic input_tokens, OpenAI prompt_tokens).")
    output_tokens: int = Field(description="Generated tokens billed (output_tokens or completion_tokens).")
    raw: dict[str, Any] = Field(default_factory=dict, description="The usage object exactly as the API sent it.")


class ModelResult(BaseModel):
    """What one successful call returned."""

    model_config = ConfigDict(frozen=True)

    text: str = Field(description="The text blocks of the answer joined in order; thinking blocks are left out.")
    usage: Usage
    stop_reason: str | None = Field(description="Why generation stopped (end_turn, max_tokens, stop, length, ...).")
    model: str = Field(description="The model that answered, as the response names it.")
    latency_s: float = Field(description="Wall time of the HTTP call in seconds (of the original call if cached).")
    request_id: str | None = Field(description="The provider's id of the request, for support and audit.")
    cached: bool = Field(
        default=False, description="True when this result was read from the response cache, not the API."
    )


# ---------------------------------------------------------------------------------------------- embeddings

MAX_EMBEDDING_BATCH = 2048
"""The most texts one embeddings call may carry: OpenAI's limit, which local servers keep or lower."""

# Fields of EmbeddingSettings that change the vectors; the endpoint, timeout and batch size do not.
EMBEDDING_OUTPUT_FIELDS: tuple[str, ...] = ("provider", "model", "dimensions")


class EmbeddingSettings(BaseModel):
    """Which embedding model to call and how. Its own model: chat settings' output limit and thinking mean nothing
    to an embeddings call, and the batch size means nothing to a chat call."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    provider: Literal["openai_compatible"] = Field(
        default="openai_compatible", description="API family: the OpenAI-compatible embeddings endpoint (only one)."
    )
    model: str = Field(min_length=1, description="Embedding model name as the server spells it.")
    base_url: str | None = Field(
        default=None, description="Endpoint root (``.../v1``); None uses OPENAI_BASE_URL, then OpenAI's own."
    )
    timeout_s: float = Field(default=60.0, gt=0, description="Seconds one call may take before it fails as a timeout.")
    batch_size: int = Field(
        default=32, ge=1, le=MAX_EMBEDDING_BATCH, description="Most texts sent in one call; more make more calls."
    )
    dimensions: int | None = Field(
        default=None, gt=0, description="Length of the vectors asked for (of models that can shorten them)."
    )

    def output_settings(self) -> dict[str, Any]:
        """The settings that change the vectors, as JSON data (the part of a cache key that comes from here)."""
        return self.model_dump(mode="json", include=set(EMBEDDING_OUTPUT_FIELDS))


class Embeddings(BaseModel):
    """What one successful embeddings call returned: one vector per input text, in the inputs' order."""

    model_config = ConfigDict(frozen=True)

    vectors: list[list[float]] = Field(description="The vectors as the API sent them, the n-th for the n-th text.")
    model: str = Field(description="The model that answered, as the response names it (else the settings').")
    input_tokens: int | None = Field(description="Tokens billed (usage.prompt_tokens), None if the server sent none.")
    latency_s: float = Field(description="Wall time of the HTTP call in seconds (of the original call if cached).")
    request_id: str | None = Field(description="The provider's id of the request, for support and audit.")
    cached: bool = Field(default=False, description="True when these vectors were read from the response cache.")
