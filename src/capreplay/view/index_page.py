"""The viewer's front page: every run, snapshot, study result and review sheet it found, by section."""

from __future__ import annotations

from collections.abc import Sequence

from capreplay.view.contents import Listed
from capreplay.view.html import esc, link, page, table

INDEX = "index.html"

SECTIONS: dict[str, list[str]] = {
    "Benchmarks": ["benchmark", "contents"],
    "Agent runs": ["run", "status", "agents", "snapshot", "partial completion"],
    "Study runs": ["run", "status", "representations", "calls", "accuracy"],
    "Offline studies": ["results", "pages", "self-test"],
    "Snapshots": ["snapshot", "folder", "size"],
    "Review sheets": ["sheet", "batch", "decided"],
}
"""The front page's sections in order, with their columns (the first is the name, linked to its page)."""


def render_index(results: str, listed: Sequence[Listed]) -> str:
    """The front page of the viewer on the results folder ``results``."""
    parts = []
    for section, headers in SECTIONS.items():
        rows = [[link(INDEX, item.path, item.name) if item.path else esc(item.name), *item.cells]
                for item in listed if item.section == section]  # fmt: skip
        if not rows and section == "Benchmarks":
            continue  # shown only when asked for (--benchmark)
        if not rows:
            parts.append(f"<h2>{esc(section)}</h2><p class=muted>None found.</p>")
            continue
        width = max(len(r) for r in rows)
        parts.append(f"<h2>{esc(section)} ({len(rows)})</h2>" + table((headers + [""] * width)[:width], rows))
    intro = (f"<p>Results folder <code>{esc(results)}</code>. Everything here is read-only, except the decisions "
             "of a review sheet.</p>")
    return page(INDEX, "capreplay results", intro + "".join(parts))
