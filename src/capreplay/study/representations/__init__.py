"""The registry of page representations: one module each, in the order the study reports them."""

from __future__ import annotations

from collections.abc import Sequence

from capreplay.errors import UsageError
from capreplay.study.representations import (
    accessibility_tree,
    aria_ai,
    indexed_dom,
    markdown,
    raw_html,
    screenshot,
    stagehand_snapshot,
)
from capreplay.study.representations.base import AnswerFormat, Kind, Representation

REPRESENTATIONS: dict[str, Representation] = {
    module.REPRESENTATION.name: module.REPRESENTATION
    for module in (raw_html, markdown, accessibility_tree, screenshot, indexed_dom, aria_ai, stagehand_snapshot)
}


def uses_stagehand(representations: Sequence[Representation]) -> bool:
    """Whether any of ``representations`` needs Stagehand's snapshot (and so its browser, in every page session)."""
    return any(r.answer_format == "stagehand_id" for r in representations)


def get_representation(name: str) -> Representation:
    """The representation called ``name``; a UsageError listing the known ones otherwise."""
    try:
        return REPRESENTATIONS[name]
    except KeyError:
        known = ", ".join(REPRESENTATIONS)
        raise UsageError(f"unknown representation {name!r}; known: {known}") from None


__all__ = ["REPRESENTATIONS", "AnswerFormat", "Kind", "Representation", "get_representation", "uses_stagehand"]
