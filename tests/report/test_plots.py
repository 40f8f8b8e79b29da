"""The plots show what the data says: each mark where the axis puts it, one mark per datum, axes labelled.

The expected positions are worked out here from the data and the plot's geometry (a 1000 x 640 image whose
plot area spans x 90..790 and y 50..550), not taken from the code under test. The layout the drawing uses
(:func:`tokens_accuracy_layout` and its kin) is checked against them, and the decoded PNG is checked at them:
a mark's colour must be found where the mapping puts it, a bar must be as long as its value, text must be
drawn where each label is.
"""

from __future__ import annotations

import io
import math
from collections.abc import Iterable

import pytest
from PIL import Image

from capreplay.report.plots import (
    GRID,
    HEIGHT,
    WIDTH,
    PagePoint,
    PlotLayout,
    Text,
    colours,
    score_bars_layout,
    score_bars_png,
    tokens_accuracy_layout,
    tokens_accuracy_png,
    tokens_per_page_layout,
    tokens_per_page_png,
)

X0, Y0, X1, Y1 = 90, 50, 790, 550
"""The plot area, by the margins the report's plots are drawn with (90 left, 210 right, 50 top, 90 below)."""
RGB = tuple[int, int, int]
BLUE, ORANGE, RED = (31, 119, 180), (255, 127, 14), (214, 39, 40)
"""raw_html, markdown and screenshot, the study's fixed colours."""


def decode(data: bytes) -> Image.Image:
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    with Image.open(io.BytesIO(data)) as image:
        assert (image.format, image.size) == ("PNG", (WIDTH, HEIGHT))
        return image.convert("RGB")


def pixel(image: Image.Image, x: float, y: float) -> RGB:
    value = image.getpixel((round(x), round(y)))
    assert isinstance(value, tuple)
    return (value[0], value[1], value[2])


def blobs(image: Image.Image, colour: RGB, box: tuple[int, int, int, int] = (X0, Y0, X1, Y1)) -> list[list[int]]:
    """The 4-connected areas of exactly ``colour`` inside ``box``, each as [size, left, top, right, bottom]."""
    left, top, right, bottom = box
    px = image.load()
    assert px is not None
    todo = {(x, y) for x in range(left, right + 1) for y in range(top, bottom + 1) if px[x, y] == colour}
    found = []
    while todo:
        stack = [todo.pop()]
        area = [stack[0][0], stack[0][1], stack[0][0], stack[0][1]]
        size = 0
        while stack:
            x, y = stack.pop()
            size += 1
            area = [min(area[0], x), min(area[1], y), max(area[2], x), max(area[3], y)]
            for step in ((x + 1, y), (x - 1, y), (x, y + 1), (x, y - 1)):
                if step in todo:
                    todo.remove(step)
                    stack.append(step)
        found.append([size, *area])
    return found


def marks_of(image: Image.Image, colour: RGB, least: int) -> list[list[int]]:
    """The areas of ``colour`` in the plot area of at least ``least`` pixels: dots or bars, not text."""
    return sorted(b for b in blobs(image, colour) if b[0] >= least)


def inked(image: Image.Image, box: Iterable[float], near: RGB = (0, 0, 0)) -> int:
    """Pixels inside ``box`` closer to ``near`` than to white: how much text is drawn there."""
    left, top, right, bottom = (round(v) for v in box)
    count = 0
    for x in range(left, right + 1):
        for y in range(top, bottom + 1):
            p = pixel(image, x, y)
            to_ink = sum((a - b) ** 2 for a, b in zip(p, near, strict=True))
            to_white = sum((a - 255) ** 2 for a in p)
            count += to_ink < to_white
    return count


def assert_text_drawn(image: Image.Image, text: Text, near: RGB = (0, 0, 0)) -> None:
    """``text``'s box is inside the picture and holds ink, a few pixels per character."""
    left, top, right, bottom = text.box
    assert 0 <= left < right <= WIDTH and 0 <= top < bottom <= HEIGHT, text
    assert inked(image, text.box, near) >= 3 * len(text.text.replace(" ", "")), text


def assert_axes_labelled(image: Image.Image, layout: PlotLayout, x_label: str, y_label: str) -> None:
    assert (layout.x_label.text, layout.y_label.text) == (x_label, y_label)
    # the x label below the plot area, the y label left of it and turned upright (taller than wide)
    assert layout.x_label.box[1] > Y1 and layout.y_label.box[2] < X0
    assert_text_drawn(image, layout.x_label)
    y_box = layout.y_label.box
    if y_label:
        assert y_box[3] - y_box[1] > 3 * (y_box[2] - y_box[0])
        assert_text_drawn(image, layout.y_label)
    assert_text_drawn(image, layout.title)
    # the frame of the plot area
    assert pixel(image, X0, (Y0 + Y1) / 2) == pixel(image, (X0 + X1) / 2, Y1) == (0, 0, 0)


# ---------------------------------------------------------------------------------------------- scatter

POINTS = [
    PagePoint(representation="raw_html", page="login", tokens=10_000, accuracy=0.8),
    PagePoint(representation="raw_html", page="docs", tokens=50_000, accuracy=0.5),
    PagePoint(representation="markdown", page="login", tokens=1_000, accuracy=0.5),
    PagePoint(representation="markdown", page="docs", tokens=3_000, accuracy=None),  # no calls: not drawn
    PagePoint(representation="screenshot", page="login", tokens=200, accuracy=0.2),
    PagePoint(representation="screenshot", page="docs", tokens=200, accuracy=0.9),
]
# 200..50,000 tokens lie in the decades 10^2..10^5: 700 px for 3 decades, x = 90 + (log10(t) - 2) * 700 / 3;
# accuracy 0..1 over 500 px from the bottom, y = 550 - 500 * a
EXPECTED_DOTS = {
    ("raw_html", "login"): (556.67, 150.0),
    ("raw_html", "docs"): (90 + math.log10(500) * 700 / 3, 300.0),  # 719.76
    ("markdown", "login"): (323.33, 300.0),
    ("screenshot", "login"): (90 + math.log10(2) * 700 / 3, 450.0),  # 160.24
    ("screenshot", "docs"): (90 + math.log10(2) * 700 / 3, 100.0),
}


def assert_dots_where_expected(data: bytes, expected: dict[tuple[str, str], tuple[float, float]]) -> None:
    """Each expected dot's colour at its centre, and each series with exactly as many dots as it has points."""
    image = decode(data)
    palette = colours(["raw_html", "markdown", "screenshot"])
    for (name, page), (x, y) in expected.items():
        assert pixel(image, x, y) == palette[name], (name, page)
    for name, colour in palette.items():
        centres = sorted((x, y) for (n, _), (x, y) in expected.items() if n == name)
        dots = marks_of(image, colour, least=40)  # a dot of radius 5 fills ~60 px; a label's glyph far fewer
        assert len(dots) == len(centres), name
        found = sorted(((b[1] + b[3]) / 2, (b[2] + b[4]) / 2) for b in dots)
        for (fx, fy), (x, y) in zip(found, centres, strict=True):
            assert abs(fx - x) <= 1.5 and abs(fy - y) <= 1.5, (name, (fx, fy), (x, y))


def test_the_scatter_layout_puts_each_point_where_its_tokens_and_accuracy_say() -> None:
    layout = tokens_accuracy_layout(POINTS)
    at = {(m.series, m.item): m for m in layout.marks}
    assert set(at) == set(EXPECTED_DOTS)  # one mark per point with an accuracy, none for the point without
    for key, (x, y) in EXPECTED_DOTS.items():
        mark = at[key]
        assert mark.shape == "dot" and mark.box is not None and mark.colour == colours(["raw_html", "markdown",
                                                                                        "screenshot"])[key[0]]
        assert ((mark.box[0] + mark.box[2]) / 2, (mark.box[1] + mark.box[3]) / 2) == (
            pytest.approx(x, abs=0.01), pytest.approx(y, abs=0.01))  # fmt: skip
        assert mark.label is not None and mark.label.text == key[1]
    # ticks: the decades along x, tenths 0.0..1.0 up y
    ticks = {t.text: t.xy for t in layout.ticks}
    for text, x in {"100": 90.0, "1k": 323.33, "10k": 556.67, "100k": 790.0}.items():
        assert ticks[text][0] == pytest.approx(x, abs=0.01) and ticks[text][1] > Y1
    for text, y in {"0.0": 550.0, "0.4": 350.0, "1.0": 50.0}.items():
        assert ticks[text][1] == pytest.approx(y) and ticks[text][0] < X0
    assert [e.series for e in layout.legend] == ["raw_html", "markdown", "screenshot"]


def test_the_scatter_png_shows_each_point_at_its_place_once() -> None:
    data = tokens_accuracy_png(POINTS)
    assert_dots_where_expected(data, EXPECTED_DOTS)
    image = decode(data)
    layout = tokens_accuracy_layout(POINTS)
    assert_axes_labelled(image, layout, "representation tokens per call (log scale)", "accuracy (READ and ACT)")
    for tick in layout.ticks:
        assert_text_drawn(image, tick)
    # grid lines at the decades and the tenths, in grid grey where no dot covers them
    assert pixel(image, 323.33, 500) == pixel(image, 556.67, 250) == pixel(image, 400, 350) == GRID
    for mark in layout.marks:
        assert mark.label is not None
        assert_text_drawn(image, mark.label, near=mark.colour)  # the page kind next to its dot, in its colour
    for entry in layout.legend:
        assert pixel(image, (entry.box[0] + entry.box[2]) / 2, (entry.box[1] + entry.box[3]) / 2) == entry.colour
        assert_text_drawn(image, entry.label)


def test_the_scatter_checks_catch_a_plot_of_other_data() -> None:
    # the checks that pass on the right plot fail on a plot of slightly other data: raw_html's and markdown's
    # login accuracies swapped, one point's tokens ten times as many, one point left out, one point twice
    swapped = [p.model_copy(update={"accuracy": {0.8: 0.5, 0.5: 0.8}[p.accuracy]}) if p.page == "login"
               and p.representation in ("raw_html", "markdown") else p for p in POINTS]  # fmt: skip
    moved = [*POINTS[:4], POINTS[4].model_copy(update={"tokens": 2_000}), POINTS[5]]
    twice = [*POINTS, POINTS[0].model_copy(update={"page": "again", "accuracy": 0.3})]
    for wrong in (swapped, moved, POINTS[:-1], twice):
        with pytest.raises(AssertionError):
            assert_dots_where_expected(tokens_accuracy_png(wrong), EXPECTED_DOTS)


def test_a_scatter_without_any_accuracy_draws_no_dot_but_keeps_its_axes() -> None:
    points = [PagePoint(representation="raw_html", page="login", tokens=5_000, accuracy=None)]
    layout = tokens_accuracy_layout(points)
    assert layout.marks == []
    image = decode(tokens_accuracy_png(points))
    assert marks_of(image, BLUE, least=1) == []  # nothing of raw_html's colour inside the plot area
    assert_axes_labelled(image, layout, "representation tokens per call (log scale)", "accuracy (READ and ACT)")


# ---------------------------------------------------------------------------------------------- bars by page

PAGE_POINTS = [
    PagePoint(representation="raw_html", page="login", tokens=10_000, accuracy=0.5),
    PagePoint(representation="markdown", page="login", tokens=1_000, accuracy=0.5),
    PagePoint(representation="screenshot", page="login", tokens=300, accuracy=0.5),
    PagePoint(representation="raw_html", page="docs", tokens=30_000, accuracy=0.5),
    PagePoint(representation="markdown", page="docs", tokens=3_000, accuracy=0.5),
]
# 300..30,000 tokens: decades 10^2..10^5, 500 px for 3 decades, a bar's height (log10(t) - 2) * 500 / 3.
# Two groups of 350 px; in each, 10% margin (35 px) then three bars of 350 * 0.8 / 3 = 93.33 px.
BAR = 350 * 0.8 / 3
EXPECTED_BARS = {
    ("login", "raw_html"): (90 + 35, 333.33),
    ("login", "markdown"): (90 + 35 + BAR, 166.67),
    ("login", "screenshot"): (90 + 35 + 2 * BAR, math.log10(3) * 500 / 3),  # 79.52
    ("docs", "raw_html"): (90 + 350 + 35, (2 + math.log10(3)) * 500 / 3),  # 412.86
    ("docs", "markdown"): (90 + 350 + 35 + BAR, (1 + math.log10(3)) * 500 / 3),  # 246.19
}


def column_run(image: Image.Image, x: float, colour: RGB) -> int:
    """How many pixels of ``colour`` stand on the plot area's bottom edge in column ``x``."""
    height, y = 0, Y1 - 1
    while y > 0 and pixel(image, x, y) == colour:
        height, y = height + 1, y - 1
    return height


def test_the_bar_layout_gives_each_bar_its_slot_and_a_height_of_its_tokens() -> None:
    layout = tokens_per_page_layout(PAGE_POINTS)
    at = {(m.item, m.series): m for m in layout.marks}
    assert set(at) == set(EXPECTED_BARS)  # docs has no screenshot: no bar for it
    for key, (left, height) in EXPECTED_BARS.items():
        box = at[key].box
        assert box is not None and at[key].value == next(p.tokens for p in PAGE_POINTS if (p.page,
                                                         p.representation) == key)  # fmt: skip
        assert box[0] == pytest.approx(left, abs=0.01) and box[2] - box[0] == pytest.approx(BAR - 1, abs=0.01)
        assert box[3] == Y1 and box[3] - box[1] == pytest.approx(height, abs=0.01)
    assert [(c.text, c.xy[0]) for c in layout.categories] == [("login", 265.0), ("docs", 615.0)]
    assert {t.text: round(t.xy[1], 2) for t in layout.ticks} == {"100": 550, "1k": 383.33, "10k": 216.67,
                                                                 "100k": 50}  # fmt: skip


def test_the_bar_png_has_one_bar_per_value_as_tall_as_the_value_says() -> None:
    image = decode(tokens_per_page_png(PAGE_POINTS))
    palette = colours(["raw_html", "markdown", "screenshot"])
    heights = {}
    for (page, name), (left, height) in EXPECTED_BARS.items():
        measured = column_run(image, left + BAR / 2, palette[name])
        assert abs(measured - height) <= 1.5, (page, name, measured, height)
        heights[page, name] = measured
    # log scale: ten times the tokens is the same step up wherever it starts (1,000 -> 10,000, 3,000 -> 30,000)
    assert heights["login", "raw_html"] - heights["login", "markdown"] == pytest.approx(500 / 3, abs=2)
    assert heights["docs", "raw_html"] - heights["docs", "markdown"] == pytest.approx(500 / 3, abs=2)
    # the missing docs/screenshot slot is empty, and each series has one bar per page it was measured on
    assert column_run(image, 90 + 350 + 35 + 2.5 * BAR, palette["screenshot"]) == 0
    for name, count in {"raw_html": 2, "markdown": 2, "screenshot": 1}.items():
        bars = marks_of(image, palette[name], least=500)
        assert len(bars) == count, name
        assert all(abs((b[3] - b[1] + 1) - (BAR - 1)) <= 1.5 for b in bars)  # as wide as a bar slot

    layout = tokens_per_page_layout(PAGE_POINTS)
    assert_axes_labelled(image, layout, "page kind", "representation tokens per call (log scale)")
    for text in [*layout.ticks, *layout.categories]:
        assert_text_drawn(image, text)


def test_bar_heights_are_wrong_for_other_tokens() -> None:
    doubled = [p.model_copy(update={"tokens": p.tokens * 2}) for p in PAGE_POINTS]
    image = decode(tokens_per_page_png(doubled))
    left, height = EXPECTED_BARS["login", "markdown"]
    assert abs(column_run(image, left + BAR / 2, ORANGE) - height) > 40  # log10(2) * 500 / 3 = 50 px taller


# ---------------------------------------------------------------------------------------------- score bars

GROUPS = ["PT01", "AT03"]
SERIES = ["gold", "browser_use", "other"]
SCORES = {("PT01", "gold"): 1.0, ("PT01", "browser_use"): 0.25, ("PT01", "other"): 0.6,
          ("AT03", "gold"): 0.5, ("AT03", "browser_use"): 0.0}  # fmt: skip
# AT03/other is missing: a gap. AT03/browser_use scored 0: no bar, but its label "0.00".
# Two rows of 250 px; in each, 25 px margin then three bars of 250 * 0.8 / 3 = 66.67 px, top to bottom.
# A bar runs from x = 91 to 90 + 700 * score.
ROW_BAR = 250 * 0.8 / 3


def bar_top(group: int, slot: int) -> float:
    return 50 + group * 250 + 25 + slot * ROW_BAR


def row_run(image: Image.Image, y: float, colour: RGB) -> int:
    """How many pixels of ``colour`` run right from the plot area's left edge along row ``y``."""
    length, x = 0, X0 + 1
    while x < WIDTH and pixel(image, x, y) == colour:
        length, x = length + 1, x + 1
    return length


def test_the_score_layout_gives_each_score_a_bar_as_long_as_the_score() -> None:
    layout = score_bars_layout(GROUPS, SERIES, SCORES, "Scores", "mean leaf score", "CAP code")
    at = {(m.item, m.series): m for m in layout.marks}
    assert set(at) == set(SCORES)
    for (group, name), score in SCORES.items():
        mark = at[group, name]
        top = bar_top(GROUPS.index(group), SERIES.index(name))
        assert mark.value == score and mark.label is not None and mark.label.text == f"{score:.2f}"
        if score == 0:
            assert mark.box is None
            continue
        assert mark.box == (91, pytest.approx(top), pytest.approx(90 + 700 * score), pytest.approx(top + ROW_BAR - 1))
    assert [(c.text, c.xy[1]) for c in layout.categories] == [("PT01", 175.0), ("AT03", 425.0)]


def test_the_score_png_draws_each_bar_at_its_length_and_labels_it() -> None:
    data = score_bars_png(GROUPS, SERIES, SCORES, "Scores", "mean leaf score", "CAP code")
    image = decode(data)
    palette = colours(SERIES)
    for (group, name), score in SCORES.items():
        middle = bar_top(GROUPS.index(group), SERIES.index(name)) + ROW_BAR / 2
        # a score's label sits on its bar's middle row: measure a row above it, clear of the text
        assert abs(row_run(image, middle - 12, palette[name]) - 700 * score) <= 1.5, (group, name)
    assert row_run(image, bar_top(1, 2) + ROW_BAR / 2, palette["other"]) == 0  # the gap
    for name in SERIES:
        expected = sum(1 for (_, n), s in SCORES.items() if n == name and s > 0)
        assert len(marks_of(image, palette[name], least=300)) == expected, name

    layout = score_bars_layout(GROUPS, SERIES, SCORES, "Scores", "mean leaf score", "CAP code")
    assert_axes_labelled(image, layout, "mean leaf score", "CAP code")
    for text in [*layout.ticks, *layout.categories]:
        assert_text_drawn(image, text)
    labels = {(m.item, m.series): m.label for m in layout.marks}
    for label in labels.values():
        assert label is not None
        assert_text_drawn(image, label)
    # a long bar carries its label inside (ink on the bar), a short one just right of its end (on white)
    full = labels["PT01", "gold"]
    assert full is not None and full.box[2] <= X1 and full.box[0] > X0 + 600
    zero = labels["AT03", "browser_use"]
    assert zero is not None and X0 < zero.box[0] < X0 + 10


def test_a_score_plot_with_nothing_scored_says_so() -> None:
    layout = score_bars_layout([], ["gold"], {}, "Scores")
    assert layout.marks == [] and layout.note is not None and layout.note.text == "nothing scored"
    image = decode(score_bars_png([], ["gold"], {}, "Scores"))
    assert_text_drawn(image, layout.note)
    assert marks_of(image, colours(["gold"])["gold"], least=1) == []
