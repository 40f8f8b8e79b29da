"""The interface every model client offers, whatever the provider behind it."""

from __future__ import annotations

from typing import Protocol

from capreplay.llm.messages import ModelRequest, ModelResult, ModelSettings


class ModelClient(Protocol):
    """An async client for one model: one call per :meth:`complete`, never retried.

    Failed calls raise :class:`capreplay.errors.ModelError` with its ``kind``; nothing else escapes
    for an API failure.
    """

    @property
    def settings(self) -> ModelSettings:
        """The settings every call of this client uses."""
        ...

    async def complete(self, request: ModelRequest) -> ModelResult:
        """Send ``request`` once and return the answer."""
        ...

    async def count_tokens(self, request: ModelRequest) -> int | None:
        """Input tokens of ``request`` by the provider's own count, or None if the provider has no such endpoint."""
        ...

    async def aclose(self) -> None:
        """Release connections; the client cannot be used afterwards."""
        ...
