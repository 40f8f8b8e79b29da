"""The crawl graph drawn as SVG: a column per depth, a node per page, its canonical parent's link drawn bold and
every other link faint. Pure: a graph and a page-to-anchor map in, SVG text out.

A node is named by its host and path (the query cut to 24 characters), and links to the page's row on the
snapshot's page (``anchors``), so the drawing is also a map of the table below it.
"""

from __future__ import annotations

from collections import defaultdict
from urllib.parse import urlsplit

from capreplay.tasks.graph import SiteGraph
from capreplay.view.html import esc

COLUMN = 300
"""Horizontal distance between two depths, in pixels."""
ROW = 26
NODE_W, NODE_H = 270, 20
LABEL_CHARS = 38
"""The longest label that fits a node in the style sheet's 11 px monospace font (6.6 px a character)."""
MARGIN = 12


def node_label(url: str) -> str:
    """``host/path?query`` with the scheme left out and a long query cut."""
    parts = urlsplit(url)
    query = f"?{parts.query}" if parts.query else ""
    if len(query) > 24:
        query = query[:23] + "…"
    label = f"{parts.netloc}{parts.path}{query}"
    return label if len(label) <= LABEL_CHARS else label[: LABEL_CHARS - 1] + "…"


def positions(graph: SiteGraph) -> dict[str, tuple[int, int]]:
    """Each page's top-left corner: depth gives the column, order of appearance the row within it."""
    rows: dict[int, int] = defaultdict(int)
    placed: dict[str, tuple[int, int]] = {}
    for page in graph.pages:
        row = rows[page.depth]
        rows[page.depth] += 1
        placed[page.url] = (MARGIN + page.depth * COLUMN, MARGIN + row * ROW)
    return placed


def graph_svg(graph: SiteGraph, anchors: dict[str, str]) -> str:
    """The drawing; ``anchors`` maps a page URL to the link its node leads to (pages without one are plain)."""
    at = positions(graph)
    width = max((x for x, _ in at.values()), default=0) + NODE_W + MARGIN
    height = max((y for _, y in at.values()), default=0) + NODE_H + MARGIN
    parents = {(p.parent, p.url) for p in graph.pages if p.parent is not None}
    lines = []
    for source, target in graph.links:
        if source == target or source not in at or target not in at:
            continue
        (x1, y1), (x2, y2) = at[source], at[target]
        cls = "tree" if (source, target) in parents else "link"
        lines.append(f'<line class="{cls}" x1="{x1 + NODE_W}" y1="{y1 + NODE_H // 2}" '
                     f'x2="{x2}" y2="{y2 + NODE_H // 2}"/>')
    nodes = []
    seeds = set(graph.seeds)
    for page in graph.pages:
        x, y = at[page.url]
        cls = "node seed" if page.url in seeds else "node"
        box = (f'<rect class="{cls}" x="{x}" y="{y}" width="{NODE_W}" height="{NODE_H}" rx="4"/>'
               f'<text x="{x + 6}" y="{y + 14}">{esc(node_label(page.url))}</text>'
               f"<title>{esc(page.url)} (depth {page.depth})</title>")  # fmt: skip
        href = anchors.get(page.url)
        nodes.append(f'<a href="{esc(href)}">{box}</a>' if href else f"<g>{box}</g>")
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="graph" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="crawl graph: {len(graph.pages)} pages">'
        + "".join(lines) + "".join(nodes) + "</svg>"
    )
