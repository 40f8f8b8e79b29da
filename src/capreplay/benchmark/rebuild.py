"""Two builds of one application, captured with the same plan: do their pages say the same thing?

A rebuilt application gets new ids, new timestamps where it keeps them, another port; what a benchmark needs to
stay the same is what its pages say. Pages are paired by their URL and the plan's actions on them (the same
plan page captured twice), and each pair's visible texts are compared as ``verify`` compares a replay with its
capture (:func:`capreplay.verify.fidelity.compare_text`). Pure: the texts are read by the caller.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from capreplay.models.manifest import PageEntry
from capreplay.verify.fidelity import compare_text


@dataclass(frozen=True)
class PagePair:
    """One plan page in both builds."""

    url: str
    same: bool
    ratio: float
    """difflib's ratio over the texts' lines, 0..1 (1 when the same)."""
    first_difference: str | None


def page_key(page: PageEntry) -> tuple[str, str]:
    """A page by its URL and the actions run on it, the same in every capture of one plan."""
    return page.url, json.dumps(page.actions, sort_keys=True)


def pair_pages(first: Sequence[PageEntry], second: Sequence[PageEntry], texts: Mapping[str, str],
               other_texts: Mapping[str, str]) -> tuple[list[PagePair], list[str]]:  # fmt: skip
    """Each page of ``first`` paired with the same plan page of ``second`` (texts by the pages' text paths), and
    the URLs of pages only one build has."""
    theirs: dict[tuple[str, str], PageEntry] = {page_key(p): p for p in second}
    pairs: list[PagePair] = []
    alone: list[str] = []
    for page in first:
        other = theirs.pop(page_key(page), None)
        if other is None or page.text is None or other.text is None:
            alone.append(page.url)
            continue
        diff = compare_text(texts[page.text], other_texts[other.text])
        pairs.append(PagePair(page.url, diff.identical, diff.similarity, diff.first_difference))
    alone += [p.url for p in theirs.values()]
    return pairs, alone


def summary(pairs: Sequence[PagePair], alone: Sequence[str]) -> dict[str, Any]:
    """Counts for a report: pages paired, the same, their lowest ratio, pages only one build has."""
    return {"paired": len(pairs), "same_text": sum(p.same for p in pairs),
            "lowest_ratio": min((p.ratio for p in pairs), default=1.0), "unpaired": len(alone)}  # fmt: skip
