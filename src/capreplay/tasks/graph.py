"""A snapshot's site graph (``graph.json``: the crawl's pages with depth and first parent, and its links) and
paths through it: GTA's minimal executable path through the crawl. Pure.

Links are directed, as the crawl saw them. A page no link of the crawl reaches from a start is reached from
the seed of its own site (a new ``goto``), so a path may span sites the way a person opens another site.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from capreplay.tasks.sites import site_of_url


class GraphPage(BaseModel):
    """A crawled page: its depth from a seed and the parent that reached it first (GTA's canonical parent)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    url: str
    depth: int = Field(ge=0)
    parent: str | None


class SiteGraph(BaseModel):
    """The crawl: its seeds, the pages it captured and every link seen between them."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    seeds: list[str]
    pages: list[GraphPage]
    links: list[tuple[str, str]] = Field(description="Every link from one captured page to another, sorted.")


def neighbours(graph: SiteGraph) -> dict[str, list[str]]:
    """Each page's outgoing links, sorted, self-links left out."""
    out: dict[str, set[str]] = {p.url: set() for p in graph.pages}
    for a, b in graph.links:
        if a != b:
            out.setdefault(a, set()).add(b)
    return {url: sorted(targets) for url, targets in out.items()}


def shortest_path(links: dict[str, list[str]], start: str, goal: str) -> list[str] | None:
    """The shortest list of pages from ``start`` to ``goal`` (both included) along links; None if none.

    Ties go to the path whose pages come first in sorted order, so the path is the same on every run.
    """
    if start == goal:
        return [start]
    parents: dict[str, str] = {}
    queue = deque([start])
    seen = {start}
    while queue:
        page = queue.popleft()
        for nxt in links.get(page, []):
            if nxt in seen:
                continue
            seen.add(nxt)
            parents[nxt] = page
            if nxt == goal:
                path = [goal]
                while path[-1] != start:
                    path.append(parents[path[-1]])
                return path[::-1]
            queue.append(nxt)
    return None


def start_page(graph: SiteGraph, page: str) -> str | None:
    """The seed of ``page``'s site (the first seed on the same registrable domain); None if the crawl has none."""
    site = site_of_url(page)
    return next((seed for seed in graph.seeds if site_of_url(seed) == site), None)


def _reach(graph: SiteGraph, links: dict[str, list[str]], current: str, goal: str) -> list[str] | None:
    """Pages from ``current`` to ``goal``, going back to ``goal``'s site seed when no link path exists."""
    direct = shortest_path(links, current, goal)
    if direct is not None:
        return direct
    seed = start_page(graph, goal)
    if seed is None:
        return None
    via_seed = shortest_path(links, seed, goal)
    return [current, *via_seed] if via_seed is not None else None


def path_through(graph: SiteGraph, start: str, pages: Sequence[str]) -> list[str] | None:
    """The shortest walk from ``start`` that visits every one of ``pages``, in the best order; None if none.

    Every order of ``pages`` is tried (tasks name two or three pages), each leg a shortest path, a new site
    entered at its seed when no link leads there; the walk with the fewest pages wins, ties by order given.
    """
    from itertools import permutations

    links = neighbours(graph)
    best: list[str] | None = None
    for order in permutations(pages):
        walk = [start]
        for goal in order:
            leg = _reach(graph, links, walk[-1], goal)
            if leg is None:
                walk = []
                break
            walk += leg[1:]
        if walk and (best is None or len(walk) < len(best)):
            best = walk
    return best
