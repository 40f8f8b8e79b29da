"""The study's client for the Stagehand adapter: Stagehand's own snapshot of a page, in Stagehand's own browser.

Stagehand's Runtime extension must be in the browser before a document is created, so the adapter launches
its own Chromium rather than attaching to capreplay's: the same binary, capreplay's offline flags, profile
preferences and init scripts (:func:`launch_request`), and one rule more, which lets that browser reach its
own CDP port (``adapters/README.md``). The process itself is :class:`capreplay.runs.adapters.AdapterProcess`.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from capreplay.browser.launch import BrowserSettings, launch_parts
from capreplay.models.geometry import Layout
from capreplay.runs.adapters import STAGEHAND_ADAPTER_PROJECT, STAGEHAND_ADAPTER_VARIABLE, AdapterProcess
from capreplay.study.page.load import SETTLE_MS

MODULE = "capreplay_stagehand"


class Opened(BaseModel):
    """A page loaded in a fresh Stagehand browser."""

    url: str = Field(description="The page's URL after redirects.")
    title: str
    page_id: str = Field(description="Stagehand's page id (the tab's CDP target id).")
    cdp_url: str = Field(description="The CDP endpoint of Stagehand's browser, on 127.0.0.1.")
    chromium_args: list[str] = Field(description="capreplay's flags as launched, with the CDP port's rule added.")
    layout: Layout = Field(description="The page's viewport as the page measures it, after the scroll to the top.")


class Snapshot(BaseModel):
    """``formatted_tree`` and its maps from Stagehand's ``page.snapshot()``."""

    formatted_tree: str = Field(description="The tree Stagehand's act/observe/extract send their model.")
    xpath_map: dict[str, str] = Field(description="Each element id (``<frame ordinal>-<backendNodeId>``) to its XPath.")
    url_map: dict[str, str] = Field(description="Each link's element id to its URL.")


class Resolved(BaseModel):
    """An element id of the last snapshot, through Stagehand's act path."""

    xpath: str | None = Field(description="``xpath_map[id]``; None for an id the snapshot does not have.")
    selector: str | None = Field(description="The locator act would use: ``xpath=`` and the XPath, text node trimmed.")
    matches: int = Field(description="How many elements Stagehand's locator matches; an answer needs exactly 1.")


class Located(BaseModel):
    """The element a ground-truth selector chain names, in Stagehand's terms."""

    xpath: str = Field(description="Stagehand's XPath of the element.")
    backend_node_id: int = Field(description="CDP backendNodeId of the element in Stagehand's browser.")
    frame_depth: int = Field(description="How many iframes hold the element.")
    candidates: list[str] | None = Field(description="Ids of the last snapshot with that XPath (None: no snapshot).")
    element_id: str | None = Field(description="The one of them that is the element itself: the ground truth's id.")


def launch_request(executable: str, settings: BrowserSettings) -> dict[str, Any]:
    """The launch part of ``open``: capreplay's binary, and the flags, viewport, profile preferences and init
    scripts every capreplay browser gets (:func:`capreplay.browser.launch.launch_parts`), so the page sees the
    snapshot's frozen clock and seeded randomness, settled rendering, and no network but the replay server."""
    parts = launch_parts(settings)
    return {
        "executable_path": executable,
        "args": parts.args,
        "width": settings.viewport["width"],
        "height": settings.viewport["height"],
        "preferences": parts.preferences,
        "init_scripts": parts.init_scripts,
    }


class StagehandAdapter(AdapterProcess):
    """The adapter subprocess. Use as ``async with StagehandAdapter() as adapter: await adapter.open(..)``."""

    module = MODULE
    label = "Stagehand adapter"
    default_project = STAGEHAND_ADAPTER_PROJECT
    project_variable = STAGEHAND_ADAPTER_VARIABLE

    async def open(self, url: str, launch: dict[str, Any], settle_ms: int = SETTLE_MS) -> Opened:
        """Load ``url`` in a fresh Stagehand browser launched as ``launch`` says (:func:`launch_request`), left
        ``settle_ms`` after network idle."""
        return Opened.model_validate(await self.request("open", url=url, settle_ms=settle_ms, **launch))

    async def snapshot(self) -> Snapshot:
        """Stagehand's snapshot of the open page; the adapter keeps its XPath map for ``resolve``."""
        return Snapshot.model_validate(await self.request("snapshot"))

    async def resolve(self, element_id: str) -> Resolved:
        """An element id of the last snapshot, resolved as Stagehand's act resolves it."""
        return Resolved.model_validate(await self.request("resolve", element_id=element_id))

    async def xpath_of(self, chain: list[str]) -> Located:
        """Stagehand's XPath, and id in the last snapshot, of the element a CSS selector chain names."""
        return Located.model_validate(await self.request("xpath_of", chain=chain))

    async def close_page(self) -> None:
        """Close the open page's browser (the adapter keeps running)."""
        await self.request("close")
