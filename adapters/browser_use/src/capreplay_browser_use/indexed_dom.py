"""The ``indexed_dom`` command: browser-use's own serialization of a page in a browser someone else launched.

The text is ``SerializedDOMState.llm_representation()`` with the default attributes, the string browser-use's
Agent puts in its prompt, from the ``DomService`` its ``DOMWatchdog`` builds with the default ``BrowserProfile``
flags. One deliberate deviation, as in the study's protocol: ``viewport_threshold=None``, so elements far below
the fold are kept; the agent-default output is returned too, for audit only.
"""

from __future__ import annotations

import asyncio
import inspect
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from browser_use import BrowserSession
from browser_use.agent.views import AgentSettings
from browser_use.dom.service import DomService
from browser_use.dom.views import EnhancedDOMTreeNode, NodeType, SerializedDOMState
from capreplay_jsonlines.protocol import Emit, Json, RequestError, flag, param

# Read from browser-use itself rather than copied, so an upgrade that changes them cannot go unnoticed.
AGENT_VIEWPORT_THRESHOLD: int | None = inspect.signature(DomService).parameters["viewport_threshold"].default
"""The ``DomService`` default, which the agent's ``DOMWatchdog`` does not override (1000 px in 0.13.14)."""
AGENT_CHAR_LIMIT: int = AgentSettings.model_fields["max_clickable_elements_length"].default
"""The agent cuts the element text at this many characters (40,000 in 0.13.14, ``agent/prompts.py``)."""

CONNECT_TIMEOUT_S = 15.0

# browser-use's profile creates a downloads folder in the system temp dir for every session unless one is
# given; the adapter gives one folder of its own, removed when the process exits.
_DOWNLOADS = tempfile.TemporaryDirectory(prefix="capreplay-browser-use-")


@asynccontextmanager
async def attached(cdp_url: str, target_id: str) -> AsyncIterator[BrowserSession]:
    """A browser-use session attached over CDP and focused on ``target_id``; detached (browser kept) on exit.

    Only the CDP connection is made (``connect()``, not ``start()``): ``start()`` also attaches the agent's
    watchdogs, which grant permissions, redirect downloads and draw a logo fetched from browser-use's CDN into
    about:blank tabs. None of them takes part in serializing the DOM, and all of them would change the browser.
    """
    session = BrowserSession(cdp_url=cdp_url, permissions=[], downloads_path=_DOWNLOADS.name)
    try:
        try:
            await asyncio.wait_for(session.connect(), CONNECT_TIMEOUT_S)
        except Exception as e:
            # Whatever connect() raises (HTTP, JSON, WebSocket or timeout errors) means the same to the caller:
            # that URL is not a browser's CDP endpoint it can reach.
            raise RequestError(f"cannot attach to {cdp_url}: {type(e).__name__}: {e}") from e
        assert session.session_manager is not None  # set by connect()
        pages = [t.target_id for t in session.session_manager.get_all_page_targets()]
        if target_id not in pages:
            raise RequestError(f"no page target {target_id} in the browser at {cdp_url} ({len(pages)} pages)")
        await session.get_or_create_cdp_session(target_id, focus=True)
        yield session
    finally:
        # stop() closes browser-use's CDP connection and state; with no browser process of its own it kills none.
        await session.stop()


def _service(session: BrowserSession, viewport_threshold: int | None) -> DomService:
    profile = session.browser_profile
    return DomService(
        session,
        cross_origin_iframes=profile.cross_origin_iframes,
        paint_order_filtering=profile.paint_order_filtering,
        max_iframes=profile.max_iframes,
        max_iframe_depth=profile.max_iframe_depth,
        viewport_threshold=viewport_threshold,
    )


async def serialize(session: BrowserSession, viewport_threshold: int | None) -> SerializedDOMState:
    """The focused page's serialized DOM, as the agent's ``DOMWatchdog`` builds it, with the given threshold."""
    state, _tree, _timing = await _service(session, viewport_threshold).get_serialized_dom_tree()
    return state


def frame_depth(node: EnhancedDOMTreeNode) -> int:
    """How many iframes hold ``node``: browser-use's tree hangs an iframe's document under the iframe."""
    depth, parent = 0, node.parent_node
    while parent is not None:
        depth += parent.node_name.upper() in ("IFRAME", "FRAME")
        parent = parent.parent_node
    return depth


class XPaths:
    """``EnhancedDOMTreeNode.xpath`` for many nodes of one tree, each sibling list counted once.

    The property counts an element's same-tag siblings afresh for every ancestor of every node it is asked
    about: on a 10,000-row table that is some 10^8 steps (the adapter went past two minutes). The rules are
    the property's: lower-case tags, a 1-based position only among several same-tag element siblings,
    shadow roots passed through, a stop below an ``iframe``.
    """

    def __init__(self) -> None:
        self._positions: dict[int, dict[int, int]] = {}
        self._xpaths: dict[int, str] = {}

    def _position(self, node: EnhancedDOMTreeNode) -> int:
        parent = node.parent_node
        if parent is None or not parent.children_nodes:
            return 0
        table = self._positions.get(id(parent))
        if table is None:
            groups: dict[str, list[EnhancedDOMTreeNode]] = {}
            for child in parent.children_nodes:
                if child.node_type == NodeType.ELEMENT_NODE:
                    groups.setdefault(child.node_name.lower(), []).append(child)
            table = {id(c): (i + 1 if len(same) > 1 else 0) for same in groups.values() for i, c in enumerate(same)}
            self._positions[id(parent)] = table
        return table.get(id(node), 0)

    def __call__(self, node: EnhancedDOMTreeNode | None) -> str:
        if node is None or node.node_type not in (NodeType.ELEMENT_NODE, NodeType.DOCUMENT_FRAGMENT_NODE):
            return ""
        if node.node_type == NodeType.DOCUMENT_FRAGMENT_NODE:  # a shadow root adds no step
            return self(node.parent_node)
        parent = node.parent_node
        if parent is not None and parent.node_name.lower() == "iframe":
            return ""
        known = self._xpaths.get(id(node))
        if known is None:
            position = self._position(node)
            step = f"{node.node_name.lower()}[{position}]" if position > 0 else node.node_name.lower()
            above = self(parent)
            known = self._xpaths[id(node)] = f"{above}/{step}" if above else step
        return known


def selector_map(state: SerializedDOMState) -> dict[str, Json]:
    """Each index in the text to the element it stands for: its (out-of-process) frame's target and node, and
    browser-use's own XPath of it (within its document) with the number of iframes around it."""
    xpath = XPaths()
    return {
        str(index): {"target_id": node.target_id, "backend_node_id": node.backend_node_id, "xpath": xpath(node),
                     "frame_depth": frame_depth(node)}
        for index, node in sorted(state.selector_map.items())
    }


async def indexed_dom(request: Json, emit: Emit) -> Json:
    """Handle ``{"cmd": "indexed_dom", "cdp_url": .., "target_id": .., "agent_default"?: bool}``.

    The agent-default serialization builds browser-use's whole DOM tree a second time (the threshold is applied
    while the tree is built), so a caller that does not keep it for audit can leave it out and halve the time.
    """
    cdp_url, target_id = param(request, "cdp_url"), param(request, "target_id")
    with_agent_default = flag(request, "agent_default", True)
    async with attached(cdp_url, target_id) as session:
        full = await serialize(session, None)
        agent = await serialize(session, AGENT_VIEWPORT_THRESHOLD) if with_agent_default else None
    text = full.llm_representation()
    return {
        "text": text,
        "agent_default": agent.llm_representation() if agent is not None else None,
        "agent_would_truncate": len(text) > AGENT_CHAR_LIMIT,
        "agent_char_limit": AGENT_CHAR_LIMIT,
        "agent_viewport_threshold": AGENT_VIEWPORT_THRESHOLD,
        "selector_map": selector_map(full),
    }
