"""Model calls of the generation stages: each through ``capreplay.llm`` (so cached), each one counted.

:class:`Meter` is the one way a stage calls a model: it sends the request once (nothing retries, as everywhere
in capreplay), reads the reply's JSON, and adds the call's tokens and latency to its stage's
:class:`capreplay.tasks.generation.StageCost`. A failed call is a :class:`capreplay.errors.ModelError`, left
to the caller, which records the candidate as rejected or stops the stage.

Embeddings calls go through it too (:meth:`Meter.embed`), counted the same way with no output tokens.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from capreplay.llm.client import ModelClient
from capreplay.llm.embeddings import Embedder, embed_all
from capreplay.llm.messages import Embeddings, ModelRequest, ModelResult
from capreplay.llm.reply import json_object
from capreplay.tasks.generation import CallCost, Stage, StageCost


class Meter:
    """A model client and the cost of every call made through it, by stage."""

    def __init__(self, client: ModelClient) -> None:
        self.client = client
        self.calls: list[CallCost] = []

    async def ask(self, stage: Stage, request: ModelRequest) -> ModelResult:
        """One call, counted under ``stage``."""
        result = await self.client.complete(request)
        self.calls.append(
            CallCost(
                stage=stage,
                input_tokens=result.usage.input_tokens,
                output_tokens=result.usage.output_tokens,
                seconds=round(result.latency_s, 3),
                cached=result.cached,
            )
        )
        return result

    async def ask_json(self, stage: Stage, request: ModelRequest) -> tuple[dict[str, Any] | str, ModelResult]:
        """One call and the JSON object of its reply, or why the reply holds none."""
        result = await self.ask(stage, request)
        data = json_object(result.text)
        if isinstance(data, str) and result.stop_reason == "max_tokens":
            data = f"the reply was cut off at the output token limit ({data})"
        return data, result

    async def embed(self, stage: Stage, embedder: Embedder, texts: Sequence[str]) -> list[list[float]]:
        """The vectors of ``texts`` in order, in calls of the embedder's batch size, each counted under ``stage``."""

        def count(result: Embeddings) -> None:
            self.calls.append(
                CallCost(
                    stage=stage,
                    input_tokens=result.input_tokens or 0,
                    output_tokens=0,
                    seconds=round(result.latency_s, 3),
                    cached=result.cached,
                )
            )

        return await embed_all(embedder, texts, on_call=count)

    def cached(self) -> int:
        """Calls the response cache answered."""
        return sum(call.cached for call in self.calls)

    def cost(self) -> dict[str, StageCost]:
        """The calls so far, summed by stage."""
        total: dict[str, StageCost] = {}
        for call in self.calls:
            total[call.stage] = total.get(call.stage, StageCost()).plus(call)
        return dict(sorted(total.items()))
