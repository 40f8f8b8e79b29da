"""The ``xpath_of`` command: Stagehand's XPath (and node) of the element a CSS selector chain names.

The chain is a ground-truth target as capreplay's tasks give it: one CSS selector per scope, each hop an
iframe (same-process or out-of-process) or a shadow host (closed roots too), and each selector must match
exactly one element in its scope. The walk reads DOM trees in CDP sessions of the adapter's own
(:mod:`capreplay_stagehand.cdp`) and builds the XPath by Stagehand's rules (:mod:`capreplay_stagehand.xpath`).
The ground truth's Stagehand id is then the key of the last snapshot's ``xpath_map`` that holds that XPath and
ends in the element's backend node id (Stagehand's ids are ``<frame ordinal>-<backendNodeId>``). The response's
``id`` is the request's, so the element's is ``element_id``.
"""

from __future__ import annotations

from dataclasses import dataclass

from capreplay_jsonlines.protocol import Emit, Json, RequestError, str_list_param

from capreplay_stagehand.cdp import Cdp, CdpError
from capreplay_stagehand.session import current
from capreplay_stagehand.xpath import SHADOW_HOP, DomTree, extend, join_xpath

_FRAME_OWNERS = ("IFRAME", "FRAME")


@dataclass
class Scope:
    """Where the next selector of the chain is matched: a document or shadow root in one CDP session."""

    session: str
    tree: DomTree
    node: int
    xpath: str
    """Stagehand's XPath of the scope, which the steps inside it extend."""
    frame_depth: int
    label: str


@dataclass(frozen=True)
class Located:
    """The element a chain names, as Stagehand would name it."""

    xpath: str
    backend_node_id: int
    frame_depth: int


async def _document(cdp: Cdp, target_id: str, xpath: str, depth: int, label: str) -> Scope:
    session = await cdp.attach(target_id)
    await cdp.send("DOM.enable", session_id=session)
    root = (await cdp.send("DOM.getDocument", {"depth": -1, "pierce": True}, session))["root"]
    return Scope(session, DomTree(root), root["nodeId"], xpath, depth, label)


async def _only_match(cdp: Cdp, scope: Scope, selector: str) -> Json:
    found = await cdp.send("DOM.querySelectorAll", {"nodeId": scope.node, "selector": selector}, scope.session)
    ids = found["nodeIds"]
    if len(ids) != 1:
        raise RequestError(f"{selector!r} matches {len(ids)} elements in {scope.label}, not 1")
    return scope.tree.nodes[ids[0]]


async def _hop(cdp: Cdp, scope: Scope, host: Json, xpath: str, selector: str) -> Scope:
    """The scope inside ``host``: its frame's document, or its shadow root."""
    depth, label = scope.frame_depth + 1, f"the frame of {selector!r}"
    if "contentDocument" in host:
        return Scope(scope.session, scope.tree, host["contentDocument"]["nodeId"], xpath, depth, label)
    if host.get("nodeName") in _FRAME_OWNERS and host.get("frameId"):
        # An out-of-process frame is a target of its own, named by its frame id.
        return await _document(cdp, host["frameId"], xpath, depth, label)
    if host.get("shadowRoots"):
        shadow = host["shadowRoots"][0]["nodeId"]
        return Scope(scope.session, scope.tree, shadow, join_xpath(xpath, SHADOW_HOP), scope.frame_depth,
                     f"the shadow root of {selector!r}")  # fmt: skip
    raise RequestError(f"{selector!r} is neither a frame nor a shadow host, so the chain cannot go on")


async def locate(cdp: Cdp, page_target: str, chain: list[str]) -> Located:
    """Follow ``chain`` from the top document of ``page_target``."""
    scope = await _document(cdp, page_target, "", 0, "the top document")
    for position, selector in enumerate(chain):
        node = await _only_match(cdp, scope, selector)
        xpath = extend(scope.xpath, scope.tree.steps_between(scope.node, node["nodeId"]))
        if position == len(chain) - 1:
            return Located(xpath or "/", int(node["backendNodeId"]), scope.frame_depth)
        scope = await _hop(cdp, scope, node, xpath, selector)
    raise RequestError("'chain' must hold at least one selector")


def snapshot_ids(xpath_map: dict[str, str] | None, located: Located) -> tuple[list[str] | None, str | None]:
    """The snapshot's ids with the element's XPath, and the one of them that is the element itself."""
    if xpath_map is None:
        return None, None
    ids = sorted(key for key, value in xpath_map.items() if value == located.xpath)
    own = [key for key in ids if key.rsplit("-", 1)[-1] == str(located.backend_node_id)]
    return ids, own[0] if len(own) == 1 else None


async def xpath_of(request: Json, emit: Emit) -> Json:
    """Handle ``{"cmd": "xpath_of", "chain": ["iframe#forecast", "#subscribe"]}``."""
    chain = str_list_param(request, "chain")
    if not chain:
        raise RequestError("'chain' must hold at least one selector")
    session = current()
    try:
        async with Cdp.connect(session.cdp_port) as cdp:
            located = await locate(cdp, session.page.page_id, chain)
    except CdpError as e:
        raise RequestError(f"cannot follow {chain}: {e}") from e
    ids, own = snapshot_ids(session.xpath_map, located)
    return {
        "xpath": located.xpath,
        "backend_node_id": located.backend_node_id,
        "frame_depth": located.frame_depth,
        "candidates": ids,
        "element_id": own,
    }
