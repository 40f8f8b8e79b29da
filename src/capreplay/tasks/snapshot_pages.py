"""What the generation stages read of a snapshot: its pages with their captured text, its graph, its sites.

:func:`open_snapshot` checks the snapshot against its manifest first, as everything that reads a snapshot
does; :func:`require_graph` refuses a snapshot without a crawl graph, which multi-hop tasks need.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from capreplay.archive.snapshot.manifest import checked_manifest
from capreplay.errors import InputError, os_reason, validation_reason
from capreplay.models.manifest import Manifest, PageEntry
from capreplay.tasks.graph import SiteGraph
from capreplay.tasks.sites import site_of_url, sites_of

GRAPH_NAME = "graph.json"


@dataclass(frozen=True)
class SnapshotPage:
    """A page of the snapshot: the URL it was asked for, where it ended, its title and captured text."""

    url: str
    final_url: str
    title: str
    text: str
    screenshot: Path | None

    @property
    def site(self) -> str:
        """The registrable domain of its final URL."""
        return site_of_url(self.final_url)


@dataclass(frozen=True)
class SnapshotView:
    """A checked snapshot, as the stages read it."""

    root: Path
    manifest: Manifest
    pages: list[SnapshotPage]
    graph: SiteGraph | None

    @property
    def snapshot_id(self) -> str:
        """The manifest's snapshot id."""
        return self.manifest.snapshot_id

    def sites(self) -> dict[str, list[str]]:
        """The snapshot's hosts by site."""
        return sites_of(self.manifest.hosts)

    def page(self, url: str) -> SnapshotPage | None:
        """The page whose URL or final URL is ``url``."""
        return next((p for p in self.pages if url in (p.url, p.final_url)), None)


def _text(root: Path, entry: PageEntry) -> str:
    if entry.text is None:
        return ""
    try:
        return (root / entry.text).read_text(encoding="utf-8", errors="replace")
    except OSError as e:
        raise InputError(f"cannot read the page text: {os_reason(e)}", root / entry.text) from e


def read_graph(root: Path) -> SiteGraph | None:
    """``graph.json`` of the snapshot, or None when it has none; an invalid one is an InputError."""
    path = root / GRAPH_NAME
    if not path.is_file():
        return None
    try:
        return SiteGraph.model_validate(json.loads(path.read_bytes()))
    except (OSError, json.JSONDecodeError) as e:
        raise InputError(f"cannot read the crawl graph: {e}", path) from e
    except ValidationError as e:
        raise InputError(f"not a crawl graph: {validation_reason(e)}", path) from e


def open_snapshot(root: Path) -> SnapshotView:
    """The snapshot at ``root``, checked against its manifest, with every page's captured text."""
    manifest = checked_manifest(root)
    pages = [
        SnapshotPage(
            url=e.url,
            final_url=e.final_url,
            title=e.title,
            text=_text(root, e),
            screenshot=root / e.screenshot if e.screenshot else None,
        )
        for e in manifest.pages
        if e.status is not None and e.status < 400
    ]
    return SnapshotView(root, manifest, pages, read_graph(root))


def require_graph(view: SnapshotView) -> SiteGraph:
    """The snapshot's crawl graph; an InputError naming the snapshot when it has none."""
    if view.graph is None:
        raise InputError(
            f"has no crawl graph ({GRAPH_NAME}); capture it with --depth to crawl, or give a snapshot that has one",
            view.root,
        )
    return view.graph
