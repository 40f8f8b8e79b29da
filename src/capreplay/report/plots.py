"""The report's two plots, drawn with Pillow: pure functions from figures to PNG bytes.

- :func:`tokens_accuracy_png`: tokens (log scale) against accuracy, one point per page kind, one colour per
  representation;
- :func:`tokens_per_page_png`: tokens per page (log scale), bars grouped by page, one bar per representation;
- :func:`score_bars_png`: scores in [0, 1] as horizontal bars, grouped by row (a CAP code), one bar per series
  (an agent).

Token counts of the five representations span three orders of magnitude (a screenshot's ~1,300 visual
tokens against tens of thousands for raw HTML), so both token axes are logarithmic.
"""

from __future__ import annotations

import io
import math
from collections.abc import Mapping, Sequence

from PIL import Image, ImageDraw, ImageFont
from pydantic import BaseModel, ConfigDict, Field

WIDTH, HEIGHT = 1000, 640
"""Size of both plots in pixels."""
LEFT, RIGHT, TOP, BOTTOM = 90, 210, 50, 90
"""Margins around the plot area: axis labels left and below, the legend on the right."""
PALETTE = {
    "raw_html": (31, 119, 180),
    "markdown": (255, 127, 14),
    "accessibility_tree": (44, 160, 44),
    "screenshot": (214, 39, 40),
    "indexed_dom": (148, 103, 189),
}
"""Colours of the study's representations; others cycle through :data:`EXTRA`."""
EXTRA = [(140, 86, 75), (227, 119, 194), (127, 127, 127), (188, 189, 34), (23, 190, 207)]
INK, GRID = (0, 0, 0), (225, 225, 225)

Font = ImageFont.FreeTypeFont | ImageFont.ImageFont


class PagePoint(BaseModel):
    """One representation of one page kind: what it cost and how often it was right."""

    model_config = ConfigDict(frozen=True)

    representation: str
    page: str
    tokens: float = Field(description="Mean representation tokens per call on this page.")
    accuracy: float | None = Field(description="Correct / calls on this page (READ and ACT); None without calls.")


def colours(names: Sequence[str]) -> dict[str, tuple[int, int, int]]:
    """A colour per representation: the fixed one where there is one, else the next spare."""
    spare = iter(EXTRA * (len(names) // len(EXTRA) + 1))
    return {n: PALETTE[n] if n in PALETTE else next(spare) for n in names}


def _font(size: int) -> Font:
    return ImageFont.load_default(size=size)


def _log_range(values: Sequence[float]) -> tuple[int, int]:
    """Whole decades that hold every positive value (at least one decade wide)."""
    logs = [math.log10(v) for v in values if v > 0] or [0.0]
    low, high = math.floor(min(logs)), math.ceil(max(logs))
    return low, high if high > low else low + 1


def _tick_label(decade: int) -> str:
    value = 10**decade
    return f"{value // 1_000_000}M" if value >= 1_000_000 else f"{value // 1000}k" if value >= 1000 else str(value)


class _Canvas:
    """A white image with a plot area, and helpers to place text around it."""

    def __init__(self, title: str) -> None:
        self.image = Image.new("RGB", (WIDTH, HEIGHT), "white")
        self.draw = ImageDraw.Draw(self.image)
        self.x0, self.y0, self.x1, self.y1 = LEFT, TOP, WIDTH - RIGHT, HEIGHT - BOTTOM
        self.text((WIDTH // 2, TOP // 2), title, _font(18), anchor="mm")

    def text(self, xy: tuple[float, float], text: str, font: Font, anchor: str = "la",
             fill: tuple[int, int, int] = INK) -> None:  # fmt: skip
        """Draw ``text`` at ``xy``."""
        self.draw.text(xy, text, fill=fill, font=font, anchor=anchor)

    def axes(self, x_label: str, y_label: str) -> None:
        """The frame of the plot area and the two axis labels (the y label turned upright)."""
        self.draw.rectangle((self.x0, self.y0, self.x1, self.y1), outline=INK)
        self.text(((self.x0 + self.x1) / 2, HEIGHT - 25), x_label, _font(15), anchor="mm")
        font = _font(15)
        box = self.draw.textbbox((0, 0), y_label, font=font)
        label = Image.new("RGB", (int(box[2] - box[0]) + 4, int(box[3] - box[1]) + 8), "white")
        ImageDraw.Draw(label).text((2, 2 - box[1]), y_label, fill=INK, font=font)
        turned = label.rotate(90, expand=True)
        self.image.paste(turned, (12, int((self.y0 + self.y1) / 2 - turned.height / 2)))

    def legend(self, names: Sequence[str], palette: dict[str, tuple[int, int, int]]) -> None:
        """One coloured square and name per representation, right of the plot area."""
        font = _font(14)
        for i, name in enumerate(names):
            y = self.y0 + 10 + i * 24
            self.draw.rectangle((self.x1 + 15, y, self.x1 + 29, y + 14), fill=palette[name])
            self.text((self.x1 + 36, y + 7), name, font, anchor="lm")

    def png(self) -> bytes:
        """The image as PNG bytes."""
        out = io.BytesIO()
        self.image.save(out, format="PNG")
        return out.getvalue()


def tokens_accuracy_png(points: Sequence[PagePoint], title: str = "Tokens against accuracy") -> bytes:
    """A scatter plot: x the tokens per call (log scale), y the accuracy, one labelled point per page kind."""
    canvas = _Canvas(title)
    shown = [p for p in points if p.accuracy is not None and p.tokens > 0]
    low, high = _log_range([p.tokens for p in shown])
    width, height = canvas.x1 - canvas.x0, canvas.y1 - canvas.y0

    def x_of(tokens: float) -> float:
        return canvas.x0 + (math.log10(tokens) - low) / (high - low) * width

    def y_of(accuracy: float) -> float:
        return canvas.y1 - accuracy * height

    small = _font(12)
    for decade in range(low, high + 1):
        x = x_of(10**decade)
        canvas.draw.line((x, canvas.y0, x, canvas.y1), fill=GRID)
        canvas.text((x, canvas.y1 + 8), _tick_label(decade), small, anchor="ma")
    for tenth in range(0, 11, 2):
        y = y_of(tenth / 10)
        canvas.draw.line((canvas.x0, y, canvas.x1, y), fill=GRID)
        canvas.text((canvas.x0 - 8, y), f"{tenth / 10:.1f}", small, anchor="rm")
    canvas.axes("representation tokens per call (log scale)", "accuracy (READ and ACT)")
    names = list(dict.fromkeys(p.representation for p in points))
    palette = colours(names)
    tiny = _font(10)
    for p in shown:
        assert p.accuracy is not None
        x, y = x_of(p.tokens), y_of(p.accuracy)
        canvas.draw.ellipse((x - 5, y - 5, x + 5, y + 5), fill=palette[p.representation], outline=INK)
        canvas.text((x + 7, y - 7), p.page, tiny, fill=palette[p.representation])
    canvas.legend(names, palette)
    return canvas.png()


def tokens_per_page_png(points: Sequence[PagePoint], title: str = "Tokens per page") -> bytes:
    """Grouped bars: one group per page kind, one bar per representation, height the tokens (log scale)."""
    canvas = _Canvas(title)
    pages = list(dict.fromkeys(p.page for p in points))
    names = list(dict.fromkeys(p.representation for p in points))
    tokens = {(p.page, p.representation): p.tokens for p in points}
    low, high = _log_range(list(tokens.values()))
    width, height = canvas.x1 - canvas.x0, canvas.y1 - canvas.y0

    def y_of(value: float) -> float:
        return canvas.y1 - (math.log10(value) - low) / (high - low) * height

    small = _font(12)
    for decade in range(low, high + 1):
        y = y_of(10**decade)
        canvas.draw.line((canvas.x0, y, canvas.x1, y), fill=GRID)
        canvas.text((canvas.x0 - 8, y), _tick_label(decade), small, anchor="rm")
    canvas.axes("page kind", "representation tokens per call (log scale)")
    palette = colours(names)
    group = width / max(len(pages), 1)
    bar = group * 0.8 / max(len(names), 1)
    for g, page in enumerate(pages):
        left = canvas.x0 + g * group + group * 0.1
        for b, name in enumerate(names):
            value = tokens.get((page, name))
            if value is None or value <= 0:
                continue
            x = left + b * bar
            canvas.draw.rectangle((x, y_of(value), x + bar - 1, canvas.y1), fill=palette[name])
        canvas.text((canvas.x0 + (g + 0.5) * group, canvas.y1 + 8), page, small, anchor="ma")
    canvas.legend(names, palette)
    return canvas.png()


def score_bars_png(groups: Sequence[str], series: Sequence[str], scores: Mapping[tuple[str, str], float],
                   title: str, x_label: str = "score", y_label: str = "") -> bytes:  # fmt: skip
    """Grouped horizontal bars: one group per ``groups`` entry (top to bottom), one bar per ``series`` entry.

    ``scores[group, name]`` is the bar's length on a linear 0..1 axis; a missing pair leaves a gap, so a
    series that measured nothing in a group is told apart from one that scored 0 (no bar, but labelled
    "0.00"). Without groups the plot says so instead of drawing bars.
    """
    canvas = _Canvas(title)
    width, height = canvas.x1 - canvas.x0, canvas.y1 - canvas.y0

    def x_of(score: float) -> float:
        return canvas.x0 + min(max(score, 0.0), 1.0) * width

    small = _font(12)
    for tenth in range(0, 11, 2):
        x = x_of(tenth / 10)
        canvas.draw.line((x, canvas.y0, x, canvas.y1), fill=GRID)
        canvas.text((x, canvas.y1 + 8), f"{tenth / 10:.1f}", small, anchor="ma")
    canvas.axes(x_label, y_label)
    palette = colours(series)
    if not groups:
        canvas.text(
            ((canvas.x0 + canvas.x1) / 2, (canvas.y0 + canvas.y1) / 2), "nothing scored", _font(16), anchor="mm"
        )
    group = height / max(len(groups), 1)
    bar = group * 0.8 / max(len(series), 1)
    tiny = _font(10)
    for g, row in enumerate(groups):
        top = canvas.y0 + g * group + group * 0.1
        for b, name in enumerate(series):
            score = scores.get((row, name))
            if score is None:
                continue
            y = top + b * bar
            if score > 0:
                canvas.draw.rectangle((canvas.x0 + 1, y, x_of(score), y + bar - 1), fill=palette[name])
            if bar < 10:
                continue  # too thin to hold a readable label
            # Long bars carry their label inside, so it stays clear of the legend right of the plot area.
            if score > 0.9:
                canvas.text((x_of(score) - 4, y + bar / 2), f"{score:.2f}", tiny, anchor="rm")
            else:
                canvas.text((x_of(score) + 4, y + bar / 2), f"{score:.2f}", tiny, anchor="lm")
        canvas.text((canvas.x0 - 8, canvas.y0 + (g + 0.5) * group), row, small, anchor="rm")
    canvas.legend(series, palette)
    return canvas.png()
