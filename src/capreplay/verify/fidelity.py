"""Comparing a replayed page with what the capture saw: pixels and visible text. Pure functions."""

from __future__ import annotations

import difflib
import io
from dataclasses import dataclass

from PIL import Image, ImageChops


@dataclass(frozen=True)
class PixelDiff:
    """How two screenshots differ."""

    identical: bool
    """Same size and every pixel equal."""
    changed_fraction: float
    """Share of pixels that differ in any channel (1.0 when the sizes differ)."""
    max_channel_delta: int
    """Largest difference in one colour channel, 0..255."""


@dataclass(frozen=True)
class TextDiff:
    """How two visible texts differ."""

    identical: bool
    similarity: float
    """difflib ratio over lines, 0..1."""
    first_difference: str | None
    """The first differing line pair, for the report."""


def compare_pixels(captured_png: bytes, replayed_png: bytes) -> PixelDiff:
    """Compare two PNG screenshots pixel by pixel."""
    if captured_png == replayed_png:
        return PixelDiff(True, 0.0, 0)
    a = Image.open(io.BytesIO(captured_png)).convert("RGB")
    b = Image.open(io.BytesIO(replayed_png)).convert("RGB")
    if a.size != b.size:
        return PixelDiff(False, 1.0, 255)
    diff = ImageChops.difference(a, b)
    if diff.getbbox() is None:
        return PixelDiff(True, 0.0, 0)
    gray = diff.convert("L").point(lambda v: 255 if v else 0)
    changed = sum(gray.histogram()[255:]) / (a.size[0] * a.size[1])
    extrema = diff.getextrema()
    max_delta = max(hi for _, hi in extrema) if isinstance(extrema[0], tuple) else int(extrema[1])
    return PixelDiff(False, changed, int(max_delta))


def compare_text(captured: str, replayed: str) -> TextDiff:
    """Compare two visible texts line by line."""
    if captured == replayed:
        return TextDiff(True, 1.0, None)
    a, b = captured.splitlines(), replayed.splitlines()
    ratio = difflib.SequenceMatcher(None, a, b, autojunk=False).ratio()
    first = next(
        (f"{x!r} != {y!r}" for x, y in zip(a + [""] * len(b), b + [""] * len(a), strict=False) if x != y), None
    )
    return TextDiff(False, ratio, first)
