"""Dense retrieval of related pages, GTA's way: every page embedded once, ranked by cosine similarity.

:class:`EmbeddingRetriever` is the other :class:`capreplay.tasks.multihop.pairs.Retriever`: it embeds each
page's title and the start of its text (:func:`embedding_text`, at most :data:`EMBED_CHARS` characters of
text) once, through :meth:`capreplay.tasks.meter.Meter.embed` (so the calls are cached and counted under the
stage ``retrieval``), and ranks the other pages by the cosine of their vectors with the seed's. The seed's
query is its own page embedded the same way, so it is the vector already made: ranking makes no call.
A page with no text at all gets no vector (the API refuses empty texts) and scores 0 against every page.

:class:`EmbeddingRetrieval` builds one for a batch (:func:`capreplay.tasks.multihop.files.multihop_batch`),
after the pages are read and before the pairs are chosen.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from capreplay.llm.embeddings import Embedder
from capreplay.tasks.meter import Meter
from capreplay.tasks.multihop.corpus import PageDoc
from capreplay.tasks.multihop.pairs import Retriever

EMBED_CHARS = 4000
"""How much of a page's text is embedded: its start, where its content is (and within any model's input)."""


def embedding_text(doc: PageDoc) -> str:
    """What is embedded of a page: its title, a line break, the first :data:`EMBED_CHARS` characters of its text."""
    return f"{doc.title}\n{doc.text[:EMBED_CHARS]}".strip()


def normalised(vector: Sequence[float]) -> list[float]:
    """``vector`` divided by its Euclidean length; empty for an empty or all-zero vector (it is like no page)."""
    norm = math.sqrt(sum(x * x for x in vector))
    return [x / norm for x in vector] if norm else []


def _dot(a: Sequence[float], b: Sequence[float]) -> float:
    """The dot product of two unit vectors (0 when either is empty): their cosine."""
    return sum(x * y for x, y in zip(a, b, strict=True)) if a and b else 0.0


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """The cosine of two vectors of one length; 0 when either is empty or all zeros."""
    return _dot(normalised(a), normalised(b))


class EmbeddingRetriever:
    """Pages ranked by the cosine similarity of their embeddings (made once, in :meth:`build`)."""

    def __init__(self, docs: Sequence[PageDoc], vectors: Sequence[Sequence[float]]) -> None:
        """Pair each of ``docs`` with its vector (empty for a page that has none)."""
        if len(docs) != len(vectors):
            raise ValueError(f"{len(docs)} pages but {len(vectors)} vectors")
        self.docs = list(docs)
        # normalised once, so that each cosine of a ranking is a dot product
        self.unit = [normalised(v) for v in vectors]

    @classmethod
    async def build(cls, docs: Sequence[PageDoc], meter: Meter, embedder: Embedder) -> EmbeddingRetriever:
        """Embed every page with text once (in batches of the embedder's size); a failed call is a ModelError."""
        texts = [embedding_text(doc) for doc in docs]
        sent = [i for i, text in enumerate(texts) if text]
        made = await meter.embed("retrieval", embedder, [texts[i] for i in sent])
        vectors: list[list[float]] = [[] for _ in docs]
        for i, vector in zip(sent, made, strict=True):
            vectors[i] = vector
        return cls(docs, vectors)

    def ranked(self, seed: PageDoc) -> list[tuple[PageDoc, float]]:
        """Every page but ``seed`` (one of the pages) and those of its final URL, by cosine, ties by final URL."""
        mine = self.unit[self.docs.index(seed)]
        others = [
            (doc, _dot(mine, unit))
            for doc, unit in zip(self.docs, self.unit, strict=True)
            if doc.final_url != seed.final_url
        ]
        return sorted(others, key=lambda item: (-item[1], item[0].final_url))


class RetrieverMaker(Protocol):
    """How a batch gets its retriever once the pages are read: a name for the batch's record, and a maker."""

    @property
    def name(self) -> str:
        """The retrieval as the batch records it."""
        ...

    async def __call__(self, docs: Sequence[PageDoc], meter: Meter) -> Retriever:
        """The retriever over ``docs``, its model calls made through ``meter``."""
        ...


@dataclass(frozen=True)
class EmbeddingRetrieval:
    """Makes an :class:`EmbeddingRetriever` with ``embedder`` (whose lifetime stays the caller's)."""

    embedder: Embedder

    @property
    def name(self) -> str:
        """``embeddings`` and the settings that change the vectors, as JSON."""
        return "embeddings " + json.dumps(self.embedder.settings.output_settings(), sort_keys=True)

    async def __call__(self, docs: Sequence[PageDoc], meter: Meter) -> Retriever:
        """The pages embedded once, through ``meter``."""
        return await EmbeddingRetriever.build(docs, meter, self.embedder)
