"""Where two replays of one page differ: the first differing stretch of their DOMs, and the pixels. Pure.

Used to measure determinism (the same page replayed twice must give the same bytes) and to compare
capreplay's replay of a page with another replayer's: a verdict alone says nothing about the cause, so
each difference says where it is.
"""

from __future__ import annotations

import io
from dataclasses import dataclass

from PIL import Image, ImageChops

CONTEXT = 60
"""Characters of each DOM kept around the first difference, enough to recognise the element."""


@dataclass(frozen=True)
class DomDifference:
    """The first place two serialised DOMs differ."""

    offset: int
    """Index of the first differing character (the length of the common prefix)."""
    line: int
    """1-based line of that character in the first DOM."""
    first: str
    """The first DOM from a little before the difference to a little after it."""
    second: str
    """The same stretch of the second DOM."""
    length_delta: int
    """Length of the second DOM minus length of the first."""


def first_dom_difference(first: str, second: str, context: int = CONTEXT) -> DomDifference | None:
    """None when the DOMs are equal, else where they start to differ, with ``context`` characters around it."""
    if first == second:
        return None
    limit = min(len(first), len(second))
    offset = next((i for i in range(limit) if first[i] != second[i]), limit)
    start = max(0, offset - context)
    return DomDifference(
        offset=offset,
        line=first.count("\n", 0, offset) + 1,
        first=first[start : offset + context],
        second=second[start : offset + context],
        length_delta=len(second) - len(first),
    )


@dataclass(frozen=True)
class PixelRegion:
    """How many pixels of two screenshots differ, and the box that holds them all."""

    changed: int
    """Pixels that differ in any channel (every pixel of the larger image when the sizes differ)."""
    fraction: float
    """``changed`` over the pixels of the larger image."""
    box: tuple[int, int, int, int] | None
    """``(left, top, right, bottom)``, right and bottom exclusive; None when nothing differs."""
    sizes_differ: bool = False


def pixel_region(first_png: bytes, second_png: bytes) -> PixelRegion:
    """Compare two PNG screenshots pixel by pixel."""
    if first_png == second_png:
        return PixelRegion(0, 0.0, None)
    a = Image.open(io.BytesIO(first_png)).convert("RGB")
    b = Image.open(io.BytesIO(second_png)).convert("RGB")
    if a.size != b.size:
        width, height = max(a.width, b.width), max(a.height, b.height)
        return PixelRegion(width * height, 1.0, (0, 0, width, height), sizes_differ=True)
    # The largest channel difference, not a grey conversion: that rounds a change of 1 in red to 0.
    red, green, blue = ImageChops.difference(a, b).split()
    diff = ImageChops.lighter(ImageChops.lighter(red, green), blue).point(lambda v: 255 if v else 0)
    box = diff.getbbox()
    if box is None:
        return PixelRegion(0, 0.0, None)
    changed = diff.histogram()[255]
    return PixelRegion(changed, changed / (a.width * a.height), box)


def union_box(boxes: list[tuple[int, int, int, int] | None]) -> tuple[int, int, int, int] | None:
    """The smallest box holding every given box (None entries are ignored; None if nothing is left)."""
    present = [b for b in boxes if b is not None]
    if not present:
        return None
    return (min(b[0] for b in present), min(b[1] for b in present),
            max(b[2] for b in present), max(b[3] for b in present))  # fmt: skip
