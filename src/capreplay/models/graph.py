"""The crawl's site graph (``graph.json`` of a snapshot): pages with depth and shortest-path parent, and links. Pure."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


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
