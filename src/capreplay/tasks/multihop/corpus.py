"""The snapshot's pages as retrieval documents: one per final URL, with the graph URL a gold path visits. Pure.

A snapshot may hold one URL several times: loaded plainly by the crawl, and again by the capture plan with
clicks or hovers that changed what the page shows. A multi-hop gold path only loads pages (``goto``) and
reads them, so the document kept for a final URL is the plain load's: a load whose plan actions only waited
or scrolled (as the crawl's autoscroll does) first, then one of a page of the crawl graph, then the first in
the manifest. Its ``graph_url`` is the URL the
crawl graph knows it by, None when no path of the graph can reach it.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

from capreplay.tasks.graph import SiteGraph
from capreplay.tasks.snapshot_pages import SnapshotPage, SnapshotView

PASSIVE_ACTIONS = frozenset({"wait", "wait_for_network_idle", "scroll", "autoscroll"})
"""Plan actions that leave a page showing what a plain load shows (lazy content aside, which they load)."""


@dataclass(frozen=True)
class PageDoc:
    """One page of the snapshot as the multi-hop stage reads it."""

    final_url: str
    title: str
    text: str
    graph_url: str | None

    @property
    def host(self) -> str:
        """The host of its final URL."""
        return urlsplit(self.final_url).hostname or ""

    @property
    def url(self) -> str:
        """The URL a gold path loads it by: its graph URL, else its final URL."""
        return self.graph_url or self.final_url


def _plain_loads(view: SnapshotView) -> list[bool]:
    """For each of ``view.pages``: whether the capture loaded it with passive plan actions only.

    The view keeps the manifest's answered pages in order, so its pages pair with those entries; should
    they ever not, every page counts as plain rather than guessing which is which.
    """
    entries = [e for e in view.manifest.pages if e.status is not None and e.status < 400]
    paired = len(entries) == len(view.pages) and all(
        (e.url, e.final_url) == (p.url, p.final_url) for e, p in zip(entries, view.pages, strict=True)
    )
    if not paired:
        return [True] * len(view.pages)
    return [all(a.get("type") in PASSIVE_ACTIONS for a in e.actions) for e in entries]


def _graph_url(page: SnapshotPage, plain: bool, graph_pages: set[str]) -> str | None:
    if plain and page.url in graph_pages:
        return page.url
    return page.final_url if page.final_url in graph_pages else None


def page_documents(view: SnapshotView, graph: SiteGraph) -> list[PageDoc]:
    """One document per final URL of the snapshot, in manifest order of first appearance."""
    graph_pages = {p.url for p in graph.pages}
    best: dict[str, tuple[tuple[bool, bool, int], PageDoc]] = {}
    for index, (page, plain) in enumerate(zip(view.pages, _plain_loads(view), strict=True)):
        graph_url = _graph_url(page, plain, graph_pages)
        rank = (not plain, graph_url is None, index)
        doc = PageDoc(final_url=page.final_url, title=page.title, text=page.text, graph_url=graph_url)
        have = best.get(page.final_url)
        if have is None or rank < have[0]:
            best[page.final_url] = (rank, doc)
    # a dict keeps each key where it was first inserted, so documents stay in order of first appearance
    return [doc for _, doc in best.values()]
