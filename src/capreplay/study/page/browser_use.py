"""The study's client for the browser-use adapter: browser-use's indexed DOM of a page in capreplay's browser.

The adapter attaches over CDP to a browser launched with ``BrowserSettings.cdp_port`` and serializes the
page as browser-use's Agent would; the process itself is :class:`capreplay.runs.adapters.AdapterProcess`.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from capreplay.runs.adapters import AdapterProcess

MODULE = "capreplay_browser_use"


class SelectorEntry(BaseModel):
    """The element an index of the indexed DOM stands for."""

    target_id: str = Field(description="CDP target of the element: its page, or an out-of-process iframe.")
    backend_node_id: int = Field(description="CDP backendNodeId of the element in that target.")
    xpath: str = Field(description="browser-use's XPath of the element, within its own document.")
    frame_depth: int = Field(description="How many iframes hold the element.")


class IndexedDom(BaseModel):
    """browser-use's serialization of one page, as its Agent would put it in the prompt."""

    text: str = Field(description="llm_representation() with viewport_threshold=None: the whole page.")
    agent_default: str | None = Field(description="The same with the agent's default viewport threshold, for audit "
                                      "only; None when it was not asked for (it costs a second serialization).")
    agent_would_truncate: bool = Field(description="Whether the agent would cut `text` at its character limit.")
    agent_char_limit: int = Field(description="The agent's character limit for the element text.")
    agent_viewport_threshold: int | None = Field(description="The agent's default threshold below the fold, px.")
    selector_map: dict[int, SelectorEntry] = Field(description="Each index in `text` to its element.")


class BrowserUseAdapter(AdapterProcess):
    """The adapter subprocess. Use as ``async with BrowserUseAdapter() as adapter: await adapter.indexed_dom(..)``."""

    module = MODULE

    async def indexed_dom(self, cdp_url: str, target_id: str, *, agent_default: bool = True) -> IndexedDom:
        """browser-use's indexed DOM of the page ``target_id`` in the browser at ``cdp_url`` (with the agent-default
        serialization too, for audit, when ``agent_default``)."""
        return IndexedDom.model_validate(await self.request("indexed_dom", cdp_url=cdp_url, target_id=target_id,
                                                            agent_default=agent_default))  # fmt: skip
