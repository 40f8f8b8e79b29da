"""Where an ACT answer landed, drawn over the screenshot the model was shown: an SVG laid on the ``<img>``.

Pure: the screenshot's size in pixels and the call's :class:`~capreplay.study.records.ActGeometry` in, SVG
text and a few sentences out. The geometry was measured in the screenshot's own layout (the scorer checks that
the page's layout never moves from it), so a CSS pixel ``(x, y)`` of the top page is the screenshot pixel
``((x - scroll_x) * ratio, (y - scroll_y) * ratio)``. A screenshot whose size is not its layout's is not drawn
on: the boxes would land somewhere else than they were measured.

The target's box is drawn green; the element the answer resolved to, when it is another one, red and dashed;
a screenshot answer's click point as a cross in a circle, green when it scored and red when not. Whatever lies
outside the screenshot gets a marker on the edge it lies beyond, and a sentence saying where it is.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from capreplay.models.geometry import Box, Layout
from capreplay.study.records import ActGeometry
from capreplay.view.html import esc

TARGET, ANSWER, HIT = "#1f7a3d", "#b42318", "#1f7a3d"
"""Colours of the target's box, of a resolved element or click point off the target, and of a point on it."""
STROKE = 3
FONT = 15


@dataclass(frozen=True)
class Overlay:
    """The drawing and what it could not show."""

    svg: str
    notes: list[str]
    """Sentences for the caption: what lies outside the screenshot, what was not measured."""


def png_size(head: bytes) -> tuple[int, int] | None:
    """Width and height from the first 24 bytes of a PNG, or None when they are not a PNG's."""
    if len(head) < 24 or head[:8] != b"\x89PNG\r\n\x1a\n" or head[12:16] != b"IHDR":
        return None
    width, height = struct.unpack(">II", head[16:24])
    return int(width), int(height)


def fits(layout: Layout, size: tuple[int, int]) -> bool:
    """Whether a screenshot of ``size`` pixels shows exactly the viewport of ``layout``."""
    ratio = layout.device_pixel_ratio
    return size == (round(layout.inner_width * ratio), round(layout.inner_height * ratio))


def _to_image(layout: Layout, x: float, y: float) -> tuple[float, float]:
    ratio = layout.device_pixel_ratio
    return (x - layout.scroll_x) * ratio, (y - layout.scroll_y) * ratio


def _image_box(layout: Layout, box: Box) -> Box:
    left, top = _to_image(layout, box.x, box.y)
    ratio = layout.device_pixel_ratio
    return Box(x=left, y=top, width=box.width * ratio, height=box.height * ratio)


def _label(x: float, y: float, text: str, colour: str, anchor: str = "start") -> str:
    return (f'<text x="{x:.1f}" y="{y:.1f}" fill="{colour}" font-size="{FONT}" font-weight="700" '
            f'text-anchor="{anchor}" class="halo">{esc(text)}</text>')  # fmt: skip


def _where(box: Box, width: int, height: int) -> str:
    """Which way a box lies outside the image, in words."""
    sides = []
    if box.y >= height:
        sides.append(f"{box.y - height:,.0f} px below")
    elif box.y + box.height <= 0:
        sides.append(f"{-(box.y + box.height):,.0f} px above")
    if box.x >= width:
        sides.append(f"{box.x - width:,.0f} px right of")
    elif box.x + box.width <= 0:
        sides.append(f"{-(box.x + box.width):,.0f} px left of")
    return " and ".join(sides) + " the screenshot"


def _edge_marker(box: Box, width: int, height: int, text: str, colour: str) -> str:
    """A triangle on the edge the box lies beyond, pointing at it, with its label."""
    cx = min(max(box.x + box.width / 2, 14.0), width - 14.0)
    cy = min(max(box.y + box.height / 2, 14.0), height - 14.0)
    below, above = box.y >= height, box.y + box.height <= 0
    if below:
        points, lx, ly = f"{cx - 12},{height - 18} {cx + 12},{height - 18} {cx},{height - 2}", cx, height - 24.0
    elif above:
        points, lx, ly = f"{cx - 12},18 {cx + 12},18 {cx},2", cx, 36.0
    elif box.x >= width:
        points, lx, ly = f"{width - 18},{cy - 12} {width - 18},{cy + 12} {width - 2},{cy}", width - 24.0, cy + 5
    else:
        points, lx, ly = f"18,{cy - 12} 18,{cy + 12} 2,{cy}", 24.0, cy + 5
    # The label stays inside the picture: right-aligned near the right edge, centred over a marker above or below.
    anchor = "end" if lx > width - 200 else "middle" if below or above else "start"
    if anchor == "middle" and lx < 200:
        anchor = "start"
    return f'<polygon points="{points}" fill="{colour}"/>' + _label(lx, ly, text, colour, anchor)


def _box(box: Box, width: int, height: int, colour: str, name: str, dashed: bool,
         notes: list[str]) -> str:  # fmt: skip
    """A box as a rectangle, or an edge marker when no part of it is inside the image."""
    inside = box.clip(width, height)
    if inside is None:
        notes.append(f"The {name} is {_where(box, width, height)}.")
        return _edge_marker(box, width, height, f"{name} {_where(box, width, height)}", colour)
    dash = ' stroke-dasharray="8 5"' if dashed else ""
    rect = (f'<rect x="{box.x:.1f}" y="{box.y:.1f}" width="{box.width:.1f}" height="{box.height:.1f}" '
            f'fill="{colour}" fill-opacity="0.12" stroke="{colour}" stroke-width="{STROKE}"{dash}/>')  # fmt: skip
    above = inside.y - 6 if inside.y > FONT + 4 else inside.y + inside.height + FONT + 2
    return rect + _label(inside.x, above, name, colour)


def _point(x: float, y: float, width: int, height: int, colour: str, notes: list[str]) -> str:
    if not (0 <= x < width and 0 <= y < height):
        notes.append(f"The click point ({x:g}, {y:g}) is outside the {width}x{height} screenshot.")
        return ""
    r = 11
    return (f'<g stroke="{colour}" stroke-width="{STROKE}" fill="none">'
            f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{r}"/>'
            f'<line x1="{x - 2 * r:.1f}" y1="{y:.1f}" x2="{x + 2 * r:.1f}" y2="{y:.1f}"/>'
            f'<line x1="{x:.1f}" y1="{y - 2 * r:.1f}" x2="{x:.1f}" y2="{y + 2 * r:.1f}"/></g>'
            + _label(x - r - 6 if x > width - 80 else x + r + 6, y - r - 4 if y > 30 else y + r + FONT + 4, "click",
                     colour, "end" if x > width - 80 else "start"))  # fmt: skip


def act_overlay(size: tuple[int, int], geometry: ActGeometry, *, correct: bool, resolved_expected: bool) -> Overlay:
    """The SVG to lay over a screenshot of ``size`` pixels. ``correct`` is the verdict (a click point is drawn green
    when it scored, red otherwise); ``resolved_expected`` says whether the answer's format names an element
    (every format but a screenshot's point), so a missing box is worth a sentence."""
    width, height = size
    layout = geometry.layout
    notes: list[str] = []
    parts = []
    target = _image_box(layout, geometry.target_box) if geometry.target_box else None
    if target is None:
        notes.append("The target has no box: it is not rendered.")
    else:
        parts.append(_box(target, width, height, TARGET, "target", False, notes))
    if geometry.resolved_box is not None:
        resolved = _image_box(layout, geometry.resolved_box)
        if resolved == target:
            notes.append("The answer resolved to the target itself.")
        else:
            parts.append(_box(resolved, width, height, ANSWER, "answer", True, notes))
    elif resolved_expected:
        notes.append("No element of the answer is drawn: it resolved to none, or to one whose box was not measured.")
    if geometry.point is not None:
        x, y = _to_image(layout, *geometry.point)
        parts.append(_point(x, y, width, height, HIT if correct else ANSWER, notes))
    svg = (f'<svg xmlns="http://www.w3.org/2000/svg" class="act-overlay" viewBox="0 0 {width} {height}" '
           f'preserveAspectRatio="none" role="img" aria-label="where the answer landed">{"".join(parts)}</svg>')
    return Overlay(svg, notes)
