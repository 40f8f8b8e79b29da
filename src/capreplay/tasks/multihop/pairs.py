"""GTA's seed and partner pages: retrieve the pages related to a seed, pick one of the closest. Pure.

A :class:`Retriever` ranks every other page of the snapshot for a seed page. :class:`BM25Retriever` does it
offline, from the pages' captured text, with the seed page's own title and most particular terms as the
query, leaving out its site template's words (those on most pages of its host), so that the names a page
shares with the pages about the same thing weigh more than the words it shares with its siblings (lexical
retrieval still favours pages of the same template; choosing among the top few helps). GTA ranks by dense
embeddings instead: :class:`capreplay.tasks.multihop.embed.EmbeddingRetriever` does that with an embedding
model through ``capreplay.llm``, behind the same ``ranked`` method.

:func:`choose_pairs` draws the seeds with ``random.Random(seed)``, so the same seed gives the same pairs,
and picks each partner at random among the seed's ``top_k`` (GTA samples its secondary page from the
retrieved set rather than always the nearest, for variety). Pages that no path of the crawl graph reaches
are neither seeds nor partners while the graph has pages with text: their tasks could have no gold path.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from typing import Protocol

from capreplay.tasks.generation import PagePair
from capreplay.tasks.multihop.bm25 import BM25, tokenize
from capreplay.tasks.multihop.corpus import PageDoc

QUERY_TERMS = 16
"""How many of the seed page's most particular terms join its title's words in the query."""
TEMPLATE_SHARE = 0.5
"""A term on more than this share of a host's pages (of three or more) is its template's, not a page's."""


class Retriever(Protocol):
    """Ranks the pages of a snapshot by how related they are to one of them."""

    def ranked(self, seed: PageDoc) -> list[tuple[PageDoc, float]]:
        """Every page other than ``seed`` (and other than pages with its final URL), most related first."""
        ...


class BM25Retriever:
    """BM25 over the pages' text; the query is the seed's title and its :data:`QUERY_TERMS` most particular terms."""

    def __init__(self, docs: Sequence[PageDoc]) -> None:
        self.docs = list(docs)
        tokens = [tokenize(doc.text) for doc in self.docs]
        self.index = BM25(tokens)
        self.template = _template_terms(self.docs, tokens)

    def query(self, seed: PageDoc) -> list[str]:
        """The query terms of ``seed``: its title's words, then its most particular terms, template words left out."""
        position = self.docs.index(seed)
        skip = self.template.get(seed.host, frozenset())
        title = [term for term in tokenize(seed.title) if term not in skip]
        return list(dict.fromkeys([*title, *self.index.salient_terms(position, QUERY_TERMS, skip)]))

    def ranked(self, seed: PageDoc) -> list[tuple[PageDoc, float]]:
        """Every other page by BM25 score for the seed's query, highest first, ties by final URL."""
        scores = self.index.scores(self.query(seed))
        others = [(doc, s) for doc, s in zip(self.docs, scores, strict=True) if doc.final_url != seed.final_url]
        return sorted(others, key=lambda item: (-item[1], item[0].final_url))


def _template_terms(docs: Sequence[PageDoc], tokens: Sequence[Sequence[str]]) -> dict[str, frozenset[str]]:
    """Each host's template words: the terms on more than :data:`TEMPLATE_SHARE` of its pages (three or more)."""
    by_host: dict[str, list[set[str]]] = {}
    for doc, words in zip(docs, tokens, strict=True):
        by_host.setdefault(doc.host, []).append(set(words))
    template: dict[str, frozenset[str]] = {}
    for host, pages in by_host.items():
        if len(pages) < 3:
            continue
        on_pages = Counter(term for page in pages for term in page)
        template[host] = frozenset(t for t, n in on_pages.items() if n > TEMPLATE_SHARE * len(pages))
    return template


def _usable(docs: Sequence[PageDoc]) -> list[PageDoc]:
    """Pages with text, those of the crawl graph only when there are any."""
    with_text = [doc for doc in docs if doc.text.strip()]
    in_graph = [doc for doc in with_text if doc.graph_url is not None]
    return in_graph or with_text


def choose_pairs(
    docs: Sequence[PageDoc], retriever: Retriever, *, count: int, seed: int = 0, top_k: int = 5
) -> list[PagePair]:
    """Up to ``count`` pairs of a seed page and a partner among its ``top_k`` related pages, the same for a seed.

    Seeds are taken in a shuffled order (``random.Random(seed)`` over the pages sorted by URL); a seed whose
    related pages all score 0 or already form a pair with it is passed over.
    """
    usable = _usable(docs)
    allowed = {doc.url for doc in usable}
    rng = random.Random(seed)
    order = sorted(usable, key=lambda doc: doc.url)
    rng.shuffle(order)
    pairs: list[PagePair] = []
    taken: set[frozenset[str]] = set()
    for first in order:
        if len(pairs) >= count:
            break
        near = [
            (doc, score)
            for doc, score in retriever.ranked(first)
            if score > 0 and doc.url in allowed and doc.url != first.url
            and frozenset((first.url, doc.url)) not in taken
        ][:top_k]  # fmt: skip
        if not near:
            continue
        partner, score = rng.choice(near)
        taken.add(frozenset((first.url, partner.url)))
        pairs.append(PagePair(seed=first.url, partner=partner.url, score=round(score, 4)))
    return pairs
