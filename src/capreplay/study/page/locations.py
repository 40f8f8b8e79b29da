"""Location tags from what was measured on a page: pure functions, no browser.

Every study task carries one of these tags, measured from page geometry, so that accuracy can be
reported by where the answer or target is.

A READ answer's location is decided by the first place it is found, in this order: the visible text of
the top document (tagged by its height on the page), the top document's attributes and form values,
then iframe documents and closed shadow roots. An ACT target's location is decided by the boundaries
its selector chain crosses, then by whether anything visible names it, then by its height.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal, get_args
from urllib.parse import urlsplit

from capreplay.models.task import Boundary as Boundary, Location as Location

LOCATIONS: tuple[Location, ...] = get_args(Location)

VIEWPORT_HEIGHT = 800
BELOW_FOLD_DEPTH = 1000
"""How far past the viewport ``below_fold`` reaches; anything lower is ``far_below_fold``."""


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def frame_boundary(top_url: str, frame_url: str) -> Boundary:
    """How an iframe document is reached from the top document: same origin or not."""
    # about:blank and about:srcdoc documents inherit their parent's origin.
    if frame_url.startswith("about:") or _origin(frame_url) == _origin(top_url):
        return "iframe_same_origin"
    return "iframe_cross_site"


_DASHES = re.compile(r"[\u2010-\u2015\u2212\ufe58\ufe63\uff0d]")
_SPACE = re.compile(r"\s+")


def match_form(text: str) -> str:
    """Page text for finding an answer in it: NFKC, every dash as ``-``, whitespace runs as one space, casefolded.

    Lighter than :func:`capreplay.util.answer_text.normalize_answer` on purpose: it keeps escapes and a
    final ``.`` and is not trimmed, because it is applied to a page's text, where a character removed
    would move every later position the measurement reports.
    """
    text = _DASHES.sub("-", unicodedata.normalize("NFKC", text))
    return _SPACE.sub(" ", text).casefold()


def fold_location(top: float) -> Location:
    """The tag of something whose top edge is ``top`` CSS pixels below the top of the page."""
    if top < VIEWPORT_HEIGHT:
        return "above_fold"
    if top < VIEWPORT_HEIGHT + BELOW_FOLD_DEPTH:
        return "below_fold"
    return "far_below_fold"


@dataclass(frozen=True)
class Segment:
    """One rendered text node and the top of its first line box, in page pixels."""

    text: str
    top: float


@dataclass
class TextSource:
    """All the text of one document or shadow root: rendered text in order, and attribute/form values."""

    boundary: Boundary | None
    """How the source is reached from the top document; None for the top document itself."""
    segments: list[Segment] = field(default_factory=list)
    values: list[str] = field(default_factory=list)
    """Attribute values and form state (input values, selected options)."""


def text_tops(segments: Sequence[Segment], needle: str) -> list[float]:
    """The top of every place ``needle`` occurs in the running text of ``segments`` (matches may span nodes)."""
    wanted = match_form(needle).strip()
    if not wanted:
        return []
    joined = ""
    starts: list[int] = []
    for seg in segments:
        piece = match_form(seg.text)
        # Inline boundaries are already in the text; a space on both sides of a boundary counts once.
        if joined.endswith(" ") and piece.startswith(" "):
            piece = piece[1:]
        starts.append(len(joined))
        joined += piece
    tops: list[float] = []
    at = joined.find(wanted)
    while at >= 0:
        tops.append(segments[bisect_right(starts, at) - 1].top)
        at = joined.find(wanted, at + 1)
    return tops


def in_values(values: Sequence[str], needle: str) -> bool:
    """Whether ``needle`` occurs in any attribute or form value."""
    wanted = match_form(needle).strip()
    return bool(wanted) and any(wanted in match_form(v) for v in values)


# The boundaries that are location tags (an open shadow root is part of its host's document), in the
# order they win when a chain crosses several.
_TaggedBoundary = Literal["iframe_cross_site", "iframe_same_origin", "shadow_closed"]
_BOUNDARY_ORDER: tuple[_TaggedBoundary, ...] = ("iframe_cross_site", "iframe_same_origin", "shadow_closed")


def read_location(sources: Sequence[TextSource], variants: Sequence[str]) -> Location | None:
    """Where the first of ``variants`` that occurs anywhere is (the answer, then its aliases), or None.

    An alias is only looked for when the answer itself is nowhere: a short alias ("38") could match
    unrelated text and move the tag.
    """
    for needle in variants:
        found = _locate_one(sources, needle)
        if found is not None:
            return found
    return None


def _locate_one(sources: Sequence[TextSource], needle: str) -> Location | None:
    top = [s for s in sources if s.boundary is None or s.boundary == "shadow_open"]
    tops = [t for s in top for t in text_tops(s.segments, needle)]
    if tops:
        return fold_location(min(tops))
    if any(in_values(s.values, needle) for s in top):
        return "attribute_only"
    for boundary in _BOUNDARY_ORDER:
        inside = [s for s in sources if s.boundary == boundary]
        if any(text_tops(s.segments, needle) or in_values(s.values, needle) for s in inside):
            return boundary
    return None


def act_location(boundaries: Sequence[Boundary], visible_name: str, top: float) -> Location:
    """The tag of an ACT target from the boundaries its chain crossed, its visible name and its top edge.

    A target behind a boundary is tagged by the boundary (a cross-site frame first); a target in the
    top document that no visible text names (an icon-only button named by ``aria-label``) is
    ``attribute_only``; any other by its height.
    """
    for boundary in _BOUNDARY_ORDER:
        if boundary in boundaries:
            return boundary
    if not visible_name.strip():
        return "attribute_only"
    return fold_location(top)
