"""Breadth-first crawl order and the site graph: pure, no browser.

Breadth-first order means the first time a page is reached is along a shortest path from a seed, so
the parent recorded then is a canonical shortest-path parent.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urldefrag, urlsplit, urlunsplit


def normalise_link(url: str) -> str | None:
    """The crawlable form of a link (fragment dropped), or None for non-http(s) links."""
    url, _ = urldefrag(url.strip())
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return None
    return urlunsplit((parts.scheme, parts.netloc.lower(), parts.path or "/", parts.query, ""))


@dataclass
class Frontier:
    """A breadth-first queue over pages with depth, page-count and same-site limits."""

    seeds: list[str]
    depth: int
    max_pages: int
    same_site: bool
    queue: deque[tuple[str, int]] = field(default_factory=deque)
    parents: dict[str, str | None] = field(default_factory=dict)
    depths: dict[str, int] = field(default_factory=dict)
    links: list[tuple[str, str]] = field(default_factory=list)
    visited: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.sites = {(urlsplit(s).hostname or "").lower() for s in self.seeds}
        for seed in self.seeds:
            url = normalise_link(seed)
            if url is not None and url not in self.depths:
                self.depths[url], self.parents[url] = 0, None
                self.queue.append((url, 0))

    def next(self) -> tuple[str, int] | None:
        """The next page to capture and its depth, or None when the crawl is done."""
        if len(self.visited) >= self.max_pages or not self.queue:
            return None
        url, depth = self.queue.popleft()
        self.visited.append(url)
        return url, depth

    def add_links(self, page: str, hrefs: list[str]) -> None:
        """Record the links found on ``page`` and queue the new ones within the limits."""
        depth = self.depths[page]
        for href in hrefs:
            url = normalise_link(href)
            if url is None:
                continue
            self.links.append((page, url))
            if url in self.depths or depth + 1 > self.depth:
                continue
            if self.same_site and (urlsplit(url).hostname or "").lower() not in self.sites:
                continue
            self.depths[url], self.parents[url] = depth + 1, page
            self.queue.append((url, depth + 1))

    def graph(self) -> dict[str, Any]:
        """The site graph: captured pages with depth and parent, and every link seen between pages."""
        captured = set(self.visited)
        return {
            "seeds": self.seeds,
            "pages": [{"url": u, "depth": self.depths[u], "parent": self.parents[u]} for u in self.visited],
            "links": sorted({(a, b) for a, b in self.links if b in captured}),
        }
