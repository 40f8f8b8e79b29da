"""Okapi BM25 over the snapshot's page texts: GTA's retrieval of related pages, offline. Pure functions.

The score of a document ``D`` for a query ``Q`` (its distinct terms ``q``) is

    sum over q of  idf(q) * f(q, D) * (k1 + 1) / (f(q, D) + k1 * (1 - b + b * |D| / avgdl))

with ``f(q, D)`` the count of ``q`` in ``D``, ``|D|`` the document's length in tokens, ``avgdl`` the mean
length over the corpus, ``k1 = 1.5`` and ``b = 0.75`` (the usual Okapi values), and

    idf(q) = ln(1 + (N - n(q) + 0.5) / (n(q) + 0.5))

over ``N`` documents of which ``n(q)`` hold ``q``: Lucene's form of Robertson-Sparck Jones, which is never
negative, so a term on most pages (a site's header and footer) adds little but never subtracts. A term
counts once however often the query repeats it.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

K1 = 1.5
"""Term-frequency saturation: how quickly more occurrences of a term stop adding to the score."""
B = 0.75
"""Length normalisation: how much a long document is discounted."""

_WORD = re.compile(r"\d+(?:[.,]\d+)*|[^\W\d_]+|\w+")


def tokenize(text: str) -> list[str]:
    """The words of ``text``, case-folded, in order: numbers (with their separators: ``1,120``, ``18.4``) and words.

    Single characters are left out: they are mostly the pieces of numbers and the ``s`` of possessives, and
    they tie unrelated pages together.
    """
    return [w for w in _WORD.findall(text.casefold()) if len(w) > 1]


@dataclass(frozen=True)
class BM25:
    """A BM25 index over tokenised documents (indices into ``documents`` name them)."""

    documents: Sequence[Sequence[str]]
    k1: float = K1
    b: float = B
    _counts: list[Counter[str]] = field(init=False, repr=False)
    _frequency: Counter[str] = field(init=False, repr=False)
    _average: float = field(init=False, repr=False)

    def __post_init__(self) -> None:
        counts = [Counter(doc) for doc in self.documents]
        frequency: Counter[str] = Counter()
        for count in counts:
            frequency.update(count.keys())
        lengths = [len(doc) for doc in self.documents]
        object.__setattr__(self, "_counts", counts)
        object.__setattr__(self, "_frequency", frequency)
        object.__setattr__(self, "_average", sum(lengths) / len(lengths) if lengths else 0.0)

    def idf(self, term: str) -> float:
        """The inverse document frequency of ``term``, by the formula in the module's docstring."""
        n = self._frequency.get(term, 0)
        return math.log(1 + (len(self.documents) - n + 0.5) / (n + 0.5))

    def score(self, query: Sequence[str], doc: int) -> float:
        """The BM25 score of document ``doc`` for the distinct terms of ``query``."""
        count = self._counts[doc]
        length = len(self.documents[doc])
        norm = self.k1 * (1 - self.b + self.b * length / self._average) if self._average else self.k1
        total = 0.0
        for term in dict.fromkeys(query):
            f = count.get(term, 0)
            if f:
                total += self.idf(term) * f * (self.k1 + 1) / (f + norm)
        return total

    def scores(self, query: Sequence[str]) -> list[float]:
        """The score of every document, in document order."""
        return [self.score(query, i) for i in range(len(self.documents))]

    def salient_terms(self, doc: int, limit: int, skip: Collection[str] = ()) -> list[str]:
        """The ``limit`` terms of document ``doc`` most telling of a related document, ties alphabetical.

        They are its terms that some other document holds too (a term of this document alone finds
        nothing), the rarest first, then the most frequent in it: a page's names (a trail, a hut, a
        product) are what it shares with the few pages about the same thing, while its template's words
        are shared with all its siblings. Terms in ``skip`` are left out.
        """
        count = self._counts[doc]
        shared = [term for term in count if self._frequency[term] > 1 and term not in skip]
        ranked = sorted(shared, key=lambda term: (-self.idf(term), -count[term], term))
        return ranked[:limit]
