"""The report's plots, drawn with Pillow: pure functions from figures to PNG bytes.

- :func:`tokens_accuracy_png`: tokens (log scale) against accuracy, one point per page kind, one colour per
  representation;
- :func:`tokens_per_page_png`: tokens per page (log scale), bars grouped by page, one bar per representation;
- :func:`score_bars_png`: scores in [0, 1] as horizontal bars, grouped by row (a CAP code), one bar per series
  (an agent).

Each plot is laid out first and drawn second: :func:`tokens_accuracy_layout`, :func:`tokens_per_page_layout`
and :func:`score_bars_layout` say where every mark, tick, label and legend entry goes (a :class:`PlotLayout`,
pure data), and :func:`render` draws exactly that. So a test can check both that the layout puts each mark
where the data says and that the picture shows it there.

Token counts of the five representations span three orders of magnitude (a screenshot's ~1,300 visual
tokens against tens of thousands for raw HTML), so both token axes are logarithmic.
"""

from __future__ import annotations

import io
import math
from collections.abc import Mapping, Sequence
from typing import Literal

from PIL import Image, ImageDraw, ImageFont
from pydantic import BaseModel, ConfigDict, Field

WIDTH, HEIGHT = 1000, 640
"""Size of every plot in pixels."""
LEFT, RIGHT, TOP, BOTTOM = 90, 210, 50, 90
"""Margins around the plot area: axis labels left and below, the legend on the right."""
PALETTE = {
    "raw_html": (31, 119, 180),
    "markdown": (255, 127, 14),
    "accessibility_tree": (44, 160, 44),
    "screenshot": (214, 39, 40),
    "indexed_dom": (148, 103, 189),
    "aria_ai": (140, 86, 75),
    "stagehand_snapshot": (23, 190, 207),
}
"""Colours of the study's representations; others cycle through :data:`EXTRA`."""
EXTRA = [(227, 119, 194), (127, 127, 127), (188, 189, 34), (174, 199, 232)]
INK, GRID = (0, 0, 0), (225, 225, 225)
DOT_RADIUS = 5
"""Radius in pixels of a point of the scatter plot."""

Font = ImageFont.FreeTypeFont | ImageFont.ImageFont
RGB = tuple[int, int, int]
Box = tuple[float, float, float, float]
"""left, top, right, bottom in pixels."""


class PagePoint(BaseModel):
    """One representation of one page kind: what it cost and how often it was right."""

    model_config = ConfigDict(frozen=True)

    representation: str
    page: str
    tokens: float = Field(description="Mean representation tokens per call on this page.")
    accuracy: float | None = Field(description="Correct / calls on this page (READ and ACT); None without calls.")


class Text(BaseModel):
    """A piece of text: what it says, where it is anchored (Pillow's anchors), and the box it covers."""

    model_config = ConfigDict(frozen=True)

    text: str
    xy: tuple[float, float]
    size: int
    anchor: str = "la"
    fill: RGB = INK
    turned: bool = False
    """Turned upright (90 degrees anticlockwise); ``xy`` is then its top left."""
    box: Box = Field(description="The pixels the text's glyphs cover.")


class Mark(BaseModel):
    """One datum drawn: a dot or a bar of one series."""

    model_config = ConfigDict(frozen=True)

    series: str = Field(description="The representation or agent.")
    item: str = Field(description="The page kind or row it belongs to.")
    value: float = Field(description="The figure it shows: accuracy for a dot, tokens or a score for a bar.")
    shape: Literal["dot", "bar"]
    colour: RGB
    box: Box | None = Field(description="The dot's or bar's bounds; None when nothing is drawn (a score of 0).")
    label: Text | None = None
    """Text next to the mark: a dot's page kind, a bar's score."""


class LegendEntry(BaseModel):
    """A coloured square and the series' name."""

    model_config = ConfigDict(frozen=True)

    series: str
    colour: RGB
    box: Box
    label: Text


class PlotLayout(BaseModel):
    """Everything a plot shows and where; :func:`render` draws it."""

    model_config = ConfigDict(frozen=True)

    width: int = WIDTH
    height: int = HEIGHT
    area: Box = Field(description="The plot area's frame.")
    title: Text
    x_label: Text
    y_label: Text
    grid: list[Box] = Field(description="Grid lines, as (x0, y0, x1, y1).")
    ticks: list[Text] = Field(description="The axis' tick labels, at their grid lines.")
    categories: list[Text] = Field(description="The name of each group of bars (page kind or row).")
    marks: list[Mark] = Field(description="One per datum shown, in drawing order.")
    legend: list[LegendEntry]
    note: Text | None = None
    """A message in place of the marks (nothing to show)."""


def colours(names: Sequence[str]) -> dict[str, RGB]:
    """A colour per representation: the fixed one where there is one, else the next spare."""
    spare = iter(EXTRA * (len(names) // len(EXTRA) + 1))
    return {n: PALETTE[n] if n in PALETTE else next(spare) for n in names}


def _font(size: int) -> Font:
    return ImageFont.load_default(size=size)


def _text(xy: tuple[float, float], text: str, size: int, anchor: str = "la", fill: RGB = INK) -> Text:
    left, top, right, bottom = _font(size).getbbox(text, anchor=anchor)
    x, y = xy
    return Text(text=text, xy=xy, size=size, anchor=anchor, fill=fill, box=(x + left, y + top, x + right, y + bottom))


def _turned_label(text: str, size: int, y_middle: float) -> Text:
    """The y axis label, turned upright left of the plot area and centred on ``y_middle``."""
    left, top, right, bottom = _font(size).getbbox(text)
    # drawn into an image (width + 4) x (height + 8) that is then turned: its height becomes the width
    turned_width, turned_height = int(bottom - top) + 8, int(right - left) + 4
    x, y = 12, int(y_middle - turned_height / 2)
    return Text(text=text, xy=(x, y), size=size, turned=True, box=(x, y, x + turned_width, y + turned_height))


def _log_range(values: Sequence[float]) -> tuple[int, int]:
    """Whole decades that hold every positive value (at least one decade wide)."""
    logs = [math.log10(v) for v in values if v > 0] or [0.0]
    low, high = math.floor(min(logs)), math.ceil(max(logs))
    return low, high if high > low else low + 1


def _tick_label(decade: int) -> str:
    value = 10**decade
    return f"{value // 1_000_000}M" if value >= 1_000_000 else f"{value // 1000}k" if value >= 1000 else str(value)


_AREA: Box = (LEFT, TOP, WIDTH - RIGHT, HEIGHT - BOTTOM)


def _plot(title: str, x_label: str, y_label: str, *, grid: list[Box], ticks: list[Text], categories: list[Text],
          marks: list[Mark], legend: list[LegendEntry], note: Text | None = None) -> PlotLayout:  # fmt: skip
    """A layout with what every plot has: the area, the title above, the axis labels below and left."""
    x0, y0, x1, y1 = _AREA
    return PlotLayout(area=_AREA, title=_text((WIDTH // 2, TOP // 2), title, 18, "mm"),
                      x_label=_text(((x0 + x1) / 2, HEIGHT - 25), x_label, 15, "mm"),
                      y_label=_turned_label(y_label, 15, (y0 + y1) / 2),
                      grid=grid, ticks=ticks, categories=categories, marks=marks, legend=legend, note=note)  # fmt: skip


def _legend(names: Sequence[str], palette: Mapping[str, RGB]) -> list[LegendEntry]:
    """One coloured square and name per series, right of the plot area."""
    x1, y0 = _AREA[2], _AREA[1]
    entries = []
    for i, name in enumerate(names):
        y = y0 + 10 + i * 24
        entries.append(LegendEntry(series=name, colour=palette[name], box=(x1 + 15, y, x1 + 29, y + 14),
                                   label=_text((x1 + 36, y + 7), name, 14, "lm")))  # fmt: skip
    return entries


def tokens_accuracy_layout(points: Sequence[PagePoint], title: str = "Tokens against accuracy") -> PlotLayout:
    """The scatter plot's layout: x the tokens per call (log scale, whole decades), y the accuracy (0 to 1).

    One dot per point that has an accuracy and positive tokens, labelled with its page kind.
    """
    x0, y0, x1, y1 = _AREA
    shown = [p for p in points if p.accuracy is not None and p.tokens > 0]
    low, high = _log_range([p.tokens for p in shown])
    width, height = x1 - x0, y1 - y0

    def x_of(tokens: float) -> float:
        return x0 + (math.log10(tokens) - low) / (high - low) * width

    def y_of(accuracy: float) -> float:
        return y1 - accuracy * height

    grid: list[Box] = []
    ticks: list[Text] = []
    for decade in range(low, high + 1):
        x = x_of(10**decade)
        grid.append((x, y0, x, y1))
        ticks.append(_text((x, y1 + 8), _tick_label(decade), 12, "ma"))
    for tenth in range(0, 11, 2):
        y = y_of(tenth / 10)
        grid.append((x0, y, x1, y))
        ticks.append(_text((x0 - 8, y), f"{tenth / 10:.1f}", 12, "rm"))
    names = list(dict.fromkeys(p.representation for p in points))
    palette = colours(names)
    marks = []
    for p in shown:
        assert p.accuracy is not None
        x, y, r, colour = x_of(p.tokens), y_of(p.accuracy), DOT_RADIUS, palette[p.representation]
        label = _text((x + 7, y - 7), p.page, 10, fill=colour)
        marks.append(Mark(series=p.representation, item=p.page, value=p.accuracy, shape="dot", colour=colour,
                          box=(x - r, y - r, x + r, y + r), label=label))  # fmt: skip
    return _plot(title, "representation tokens per call (log scale)", "accuracy (READ and ACT)", grid=grid,
                 ticks=ticks, categories=[], marks=marks, legend=_legend(names, palette))  # fmt: skip


def tokens_per_page_layout(points: Sequence[PagePoint], title: str = "Tokens per page") -> PlotLayout:
    """The grouped bars' layout: a group per page kind (in order of first appearance), a bar per representation,
    its height the tokens on a log scale of whole decades from the plot area's bottom."""
    x0, y0, x1, y1 = _AREA
    pages = list(dict.fromkeys(p.page for p in points))
    names = list(dict.fromkeys(p.representation for p in points))
    tokens = {(p.page, p.representation): p.tokens for p in points}
    low, high = _log_range(list(tokens.values()))
    width, height = x1 - x0, y1 - y0

    def y_of(value: float) -> float:
        return y1 - (math.log10(value) - low) / (high - low) * height

    grid: list[Box] = []
    ticks: list[Text] = []
    for decade in range(low, high + 1):
        y = y_of(10**decade)
        grid.append((x0, y, x1, y))
        ticks.append(_text((x0 - 8, y), _tick_label(decade), 12, "rm"))
    palette = colours(names)
    group = width / max(len(pages), 1)
    bar = group * 0.8 / max(len(names), 1)
    marks, categories = [], []
    for g, page in enumerate(pages):
        left = x0 + g * group + group * 0.1
        for b, name in enumerate(names):
            value = tokens.get((page, name))
            if value is None or value <= 0:
                continue
            x = left + b * bar
            marks.append(Mark(series=name, item=page, value=value, shape="bar", colour=palette[name],
                              box=(x, y_of(value), x + bar - 1, y1)))  # fmt: skip
        categories.append(_text((x0 + (g + 0.5) * group, y1 + 8), page, 12, "ma"))
    return _plot(title, "page kind", "representation tokens per call (log scale)", grid=grid, ticks=ticks,
                 categories=categories, marks=marks, legend=_legend(names, palette))  # fmt: skip


def score_bars_layout(groups: Sequence[str], series: Sequence[str], scores: Mapping[tuple[str, str], float],
                      title: str, x_label: str = "score", y_label: str = "") -> PlotLayout:  # fmt: skip
    """The horizontal bars' layout: a group per ``groups`` entry (top to bottom), a bar per ``series`` entry, its
    length the score on a linear 0..1 axis (clipped to it). A score of 0 is a mark with no bar but its label."""
    x0, y0, x1, y1 = _AREA
    width, height = x1 - x0, y1 - y0

    def x_of(score: float) -> float:
        return x0 + min(max(score, 0.0), 1.0) * width

    grid: list[Box] = []
    ticks: list[Text] = []
    for tenth in range(0, 11, 2):
        x = x_of(tenth / 10)
        grid.append((x, y0, x, y1))
        ticks.append(_text((x, y1 + 8), f"{tenth / 10:.1f}", 12, "ma"))
    palette = colours(series)
    note = None if groups else _text(((x0 + x1) / 2, (y0 + y1) / 2), "nothing scored", 16, "mm")
    group = height / max(len(groups), 1)
    bar = group * 0.8 / max(len(series), 1)
    marks, categories = [], []
    for g, row in enumerate(groups):
        top = y0 + g * group + group * 0.1
        for b, name in enumerate(series):
            score = scores.get((row, name))
            if score is None:
                continue
            y = top + b * bar
            box = (x0 + 1, y, x_of(score), y + bar - 1) if score > 0 else None
            label = None
            if bar >= 10:  # a thinner bar cannot hold a readable label
                # Long bars carry their label inside, so it stays clear of the legend right of the plot area.
                if score > 0.9:
                    label = _text((x_of(score) - 4, y + bar / 2), f"{score:.2f}", 10, "rm")
                else:
                    label = _text((x_of(score) + 4, y + bar / 2), f"{score:.2f}", 10, "lm")
            marks.append(Mark(series=name, item=row, value=score, shape="bar", colour=palette[name], box=box,
                              label=label))  # fmt: skip
        categories.append(_text((x0 - 8, y0 + (g + 0.5) * group), row, 12, "rm"))
    return _plot(title, x_label, y_label, grid=grid, ticks=ticks, categories=categories, marks=marks,
                 legend=_legend(series, palette), note=note)  # fmt: skip


def _draw_text(image: Image.Image, draw: ImageDraw.ImageDraw, t: Text) -> None:
    font = _font(t.size)
    if not t.turned:
        draw.text(t.xy, t.text, fill=t.fill, font=font, anchor=t.anchor)
        return
    left, top, right, bottom = font.getbbox(t.text)
    label = Image.new("RGB", (int(right - left) + 4, int(bottom - top) + 8), "white")
    ImageDraw.Draw(label).text((2, 2 - top), t.text, fill=t.fill, font=font)
    image.paste(label.rotate(90, expand=True), (int(t.xy[0]), int(t.xy[1])))


def render(layout: PlotLayout) -> bytes:
    """Draw ``layout`` as PNG bytes: grid, ticks, frame, axis labels, marks with their labels, legend."""
    image = Image.new("RGB", (layout.width, layout.height), "white")
    draw = ImageDraw.Draw(image)
    _draw_text(image, draw, layout.title)
    for line in layout.grid:
        draw.line(line, fill=GRID)
    for tick in layout.ticks:
        _draw_text(image, draw, tick)
    draw.rectangle(layout.area, outline=INK)
    _draw_text(image, draw, layout.x_label)
    _draw_text(image, draw, layout.y_label)
    if layout.note is not None:
        _draw_text(image, draw, layout.note)
    for mark in layout.marks:
        if mark.box is not None:
            if mark.shape == "dot":
                draw.ellipse(mark.box, fill=mark.colour, outline=INK)
            else:
                draw.rectangle(mark.box, fill=mark.colour)
        if mark.label is not None:
            _draw_text(image, draw, mark.label)
    for category in layout.categories:
        _draw_text(image, draw, category)
    for entry in layout.legend:
        draw.rectangle(entry.box, fill=entry.colour)
        _draw_text(image, draw, entry.label)
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()


def tokens_accuracy_png(points: Sequence[PagePoint], title: str = "Tokens against accuracy") -> bytes:
    """A scatter plot: x the tokens per call (log scale), y the accuracy, one labelled point per page kind."""
    return render(tokens_accuracy_layout(points, title))


def tokens_per_page_png(points: Sequence[PagePoint], title: str = "Tokens per page") -> bytes:
    """Grouped bars: one group per page kind, one bar per representation, height the tokens (log scale)."""
    return render(tokens_per_page_layout(points, title))


def score_bars_png(groups: Sequence[str], series: Sequence[str], scores: Mapping[tuple[str, str], float],
                   title: str, x_label: str = "score", y_label: str = "") -> bytes:  # fmt: skip
    """Grouped horizontal bars: one group per ``groups`` entry (top to bottom), one bar per ``series`` entry.

    ``scores[group, name]`` is the bar's length on a linear 0..1 axis; a missing pair leaves a gap, so a
    series that measured nothing in a group is told apart from one that scored 0 (no bar, but labelled
    "0.00"). Without groups the plot says so instead of drawing bars.
    """
    return render(score_bars_layout(groups, series, scores, title, x_label, y_label))
