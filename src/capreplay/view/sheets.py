"""Review sheets in the viewer: each sheet's page, and the decision route that writes a decision back to it."""

from __future__ import annotations

from pathlib import Path

from aiohttp import web

from capreplay.tasks.review.parse import MARKER, read_sheet
from capreplay.view.contents import Contents, Listed, safe
from capreplay.view.html import esc, page

SHEET_GLOB = "*.md"
"""Files under the results folder that may be review sheets; those whose first line is not the marker are not."""


def is_sheet(path: Path) -> bool:
    """Whether ``path``'s first line is the review sheet's marker."""
    try:
        with open(path, encoding="utf-8-sig") as f:
            return f.readline().strip() == MARKER
    except (OSError, UnicodeDecodeError):
        return False


def add_sheet(contents: Contents, path: Path) -> None:
    """The sheet's page (a file that is not a review sheet is passed over)."""
    if not is_sheet(path):
        return
    reviewed = read_sheet(path)
    site_path = f"sheets/{safe(reviewed.sheet.batch)}/index.html"
    decided = sum(1 for t in reviewed.sheet.tasks if t.verdict is not None)
    contents.site.page(site_path, lambda: page(site_path, f"Review of {reviewed.sheet.batch}", f"<p>{esc(path)}</p>"))
    contents.listed.append(Listed("Review sheets", path.name, site_path,
                                  [esc(reviewed.sheet.batch), f"{decided}/{len(reviewed.sheet.tasks)}"]))  # fmt: skip


async def _decide(request: web.Request) -> web.StreamResponse:
    raise web.HTTPNotImplemented(text="deciding in the page is not built yet\n")


def decide_route() -> web.RouteDef:
    """``POST /sheets/<name>/decide``."""
    return web.post("/sheets/{name}/decide", _decide)
