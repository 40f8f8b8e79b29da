"""Ground truth for ACT tasks: the one element a chain of CSS selectors names, found through CDP.

``DOM.getDocument`` with ``pierce`` reaches same-process iframe documents and every shadow root (closed
ones included); an out-of-process iframe has its own CDP target, reached through a session opened on
the Playwright ``Frame``. Each selector of the chain runs in the scope the previous one entered (an
iframe's document or a host's shadow root) and must match exactly one element there.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from playwright.async_api import CDPSession, Error as PlaywrightError, Page

from capreplay.errors import InputError
from capreplay.models.geometry import Box
from capreplay.study.page.elements import ElementRef
from capreplay.study.page.locations import Boundary, Location, act_location, frame_boundary

# What the page says about the target, read in the target's own document: the text a person sees that
# names it (its rendered text, else its labels, the elements that label it, a button's value or its
# placeholder; empty for an icon-only control), every string that could name it, and a CSS selector
# that matches it alone within its document or shadow root.
_DESCRIBE = """function () {
  const el = this;
  const root = el.getRootNode();
  const text = (node) => (node.innerText || "").trim();
  const labelledBy = (el.getAttribute("aria-labelledby") || "").split(/\\s+/).filter(Boolean)
    .map((id) => (root.getElementById ? root.getElementById(id) : null)).filter(Boolean).map(text);
  const labels = [...(el.labels || [])].map(text);
  const value = el.tagName === "INPUT" && ["button", "submit", "reset"].includes(el.type) ? el.value : "";
  const placeholder = el.getAttribute("placeholder") || "";
  const own = text(el);
  const visible = own || [...labels, ...labelledBy, value, placeholder].filter(Boolean).join(" ").trim();
  // A <select>'s own text is the list of its options, which is not a name a person would use for it.
  const names = [el.tagName === "SELECT" ? "" : own, ...labels, ...labelledBy, value, placeholder,
                 el.getAttribute("aria-label") || "", el.getAttribute("title") || ""]
    .map((s) => s.trim()).filter(Boolean);
  const only = (sel, node) => root.querySelectorAll(sel).length === 1 && root.querySelector(sel) === node;
  const byId = (node) => "#" + CSS.escape(node.id);
  let selector = el.id && only(byId(el), el) ? byId(el) : "";
  if (!selector) {
    const steps = [];
    for (let node = el; node && node.nodeType === 1; node = node.parentElement) {
      if (node !== el && node.id && only(byId(node), node)) { steps.unshift(byId(node)); break; }
      const tag = node.localName;
      const same = node.parentElement ? [...node.parentElement.children].filter((c) => c.localName === tag) : [node];
      steps.unshift(same.length > 1 ? `${tag}:nth-of-type(${same.indexOf(node) + 1})` : tag);
    }
    selector = steps.join(" > ");
  }
  // browser-use's XPath of an element (EnhancedDOMTreeNode.xpath): lower-case tags, a 1-based position only
  // among several same-tag siblings, through shadow roots to their hosts, up to the top of its document.
  const xpath = [];
  for (let node = el; node; ) {
    if (node instanceof ShadowRoot) { node = node.host; continue; }
    if (node.nodeType !== 1) break;
    const parent = node.parentNode;
    const same = parent ? [...parent.children].filter((c) => c.localName === node.localName) : [node];
    xpath.unshift(same.length > 1 ? `${node.localName}[${same.indexOf(node) + 1}]` : node.localName);
    node = parent;
  }
  return { visible, names: [...new Set(names)], selector: only(selector, el) ? selector : "", xpath: xpath.join("/") };
}"""


# Stagehand's XPath of a node within its document (the rules of its runtime's ``buildChildXPathSegments``):
# every step positional among siblings of the same node type and name, ``//`` into a shadow root.
_STAGEHAND_XPATH = """function () {
  const steps = [];
  for (let node = this; node; ) {
    if (node.nodeType === 11) { steps.unshift(""); node = node.host; continue; }
    if (node.nodeType === 9) break;
    const parent = node.parentNode;
    const name = node.nodeName.toLowerCase();
    let index = 0;
    for (const sibling of parent ? parent.childNodes : [node]) {
      if (sibling.nodeType === node.nodeType && sibling.nodeName.toLowerCase() === name) index++;
      if (sibling === node) break;
    }
    steps.unshift(node.nodeType === 3 ? `text()[${index}]` : node.nodeType === 8 ? `comment()[${index}]`
                  : name.includes(":") ? `*[name()='${name}'][${index}]` : `${name}[${index}]`);
    node = parent;
  }
  return "/" + steps.join("/");
}"""


@dataclass(frozen=True)
class ResolvedTarget:
    """Where an ACT chain led: the one element it names, how it was reached, and how the page names it."""

    boundaries: tuple[Boundary, ...]
    """The boundary each hop after the first crossed."""
    ref: ElementRef
    """The element's identity: its CDP target and backendNodeId."""
    document_url: str
    """URL of the document (top or iframe) that holds the element."""
    box: Box | None
    """None when the element has no layout box (not rendered)."""
    visible_name: str
    """The text a person sees that names the element; empty for an icon-only control."""
    names: tuple[str, ...] = ()
    """Every string that could name the element: its text, labels, value, placeholder, aria-label, title."""
    selector: str = ""
    """A CSS selector matching the element alone within its own document or shadow root ("" if none was found)."""
    ax_role: str = ""
    """The element's role as Chromium's accessibility tree computes it."""
    ax_name: str = ""
    """The element's accessible name as Chromium computes it."""
    xpath: str = ""
    """browser-use's form of the element's XPath within its own document (``html/body/div[2]/button``)."""
    stagehand_xpath: str = ""
    """Stagehand's form of its XPath from the top document: each iframe's, then its own within that frame."""

    @property
    def backend_node_id(self) -> int:
        """The element's CDP backend node id, in the id space of the CDP target that holds it."""
        return self.ref.backend_node_id

    @property
    def in_top_document(self) -> bool:
        """Whether the element is in the top document, outside any iframe and closed shadow root."""
        return all(b == "shadow_open" for b in self.boundaries)

    @property
    def location(self) -> Location | None:
        """The target's location tag; None for an unrendered target in the top document (it has no height)."""
        if self.box is None and not self.boundaries:
            return None
        return act_location(self.boundaries, self.visible_name, self.box.y if self.box else 0.0)


def _nodes(node: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """A pierced DOM tree, depth first: children, shadow roots and same-process frame documents."""
    yield node
    for key in ("children", "shadowRoots"):
        for child in node.get(key, []):
            yield from _nodes(child)
    if "contentDocument" in node:
        yield from _nodes(node["contentDocument"])


@dataclass
class _Scope:
    """Where the next selector of a chain runs."""

    session: CDPSession
    target_id: str
    node_id: int
    document_url: str
    offset: tuple[float, float]
    """Where the session's viewport sits in the top page (non-zero inside out-of-process frames)."""
    index: dict[int, dict[str, Any]]


async def _document_scope(session: CDPSession, offset: tuple[float, float]) -> _Scope:
    target_id = str((await session.send("Target.getTargetInfo"))["targetInfo"]["targetId"])
    doc = (await session.send("DOM.getDocument", {"depth": -1, "pierce": True}))["root"]
    index = {n["nodeId"]: n for n in _nodes(doc)}
    return _Scope(session, target_id, doc["nodeId"], str(doc.get("documentURL", "")), offset, index)


async def _border_box(session: CDPSession, node_id: int, offset: tuple[float, float]) -> Box | None:
    try:
        model = (await session.send("DOM.getBoxModel", {"nodeId": node_id}))["model"]
    except PlaywrightError:
        return None  # "Could not compute box model": the element is not rendered
    xs, ys = model["border"][0::2], model["border"][1::2]
    return Box(x=min(xs) + offset[0], y=min(ys) + offset[1], width=max(xs) - min(xs), height=max(ys) - min(ys))


async def _oopif_session(page: Page, frame_id: str) -> CDPSession:
    """The CDP session of the page's out-of-process frame whose CDP frame id is ``frame_id``."""
    for frame in page.frames[1:]:
        try:
            session = await page.context.new_cdp_session(frame)
        except PlaywrightError:
            continue  # an in-process frame: it has no session of its own
        tree = await session.send("Page.getFrameTree")
        if tree["frameTree"]["frame"]["id"] == frame_id:
            return session
        await session.detach()
    raise InputError("matched an iframe whose document is not loaded")


async def _enter(page: Page, scope: _Scope, node: dict[str, Any], opened: list[CDPSession]) -> tuple[_Scope, Boundary]:
    """The scope behind the iframe or shadow host ``node``, and the boundary crossed to get there."""
    if node["nodeName"] in ("IFRAME", "FRAME"):
        if "contentDocument" in node:  # same process: its document is in the pierced tree already
            doc = node["contentDocument"]
            url = str(doc.get("documentURL", ""))
            inner = _Scope(scope.session, scope.target_id, doc["nodeId"], url, scope.offset, scope.index)
            return inner, frame_boundary(page.url, url)
        session = await _oopif_session(page, str(node.get("frameId", "")))
        opened.append(session)
        # The frame's own coordinates start at the iframe's content box in the parent's coordinates.
        content = (await scope.session.send("DOM.getBoxModel", {"nodeId": node["nodeId"]}))["model"]["content"]
        inner = await _document_scope(session, (scope.offset[0] + content[0], scope.offset[1] + content[1]))
        return inner, frame_boundary(page.url, inner.document_url)
    roots = [r for r in node.get("shadowRoots", []) if r.get("shadowRootType") in ("open", "closed")]
    if roots:
        root = roots[0]
        boundary: Boundary = "shadow_closed" if root["shadowRootType"] == "closed" else "shadow_open"
        return _Scope(scope.session, scope.target_id, root["nodeId"], scope.document_url, scope.offset,
                      scope.index), boundary
    raise InputError(f"matched a <{node['nodeName'].lower()}>, which is neither an iframe nor a shadow host, "
                     "but the chain goes on")


async def _call(scope: _Scope, node_id: int, function: str) -> Any:
    """``function`` run with the node as ``this``, its result by value."""
    obj = (await scope.session.send("DOM.resolveNode", {"nodeId": node_id}))["object"]
    return (await scope.session.send(
        "Runtime.callFunctionOn", {"objectId": obj["objectId"], "functionDeclaration": function, "returnByValue": True},
    ))["result"]["value"]  # fmt: skip


async def _target(scope: _Scope, node_id: int, boundaries: list[Boundary], frames_xpath: str) -> ResolvedTarget:
    """The element ``node_id`` of ``scope``, described; ``frames_xpath`` is Stagehand's XPath of its iframes."""
    node = scope.index[node_id]
    box = await _border_box(scope.session, node_id, scope.offset)
    described = await _call(scope, node_id, _DESCRIBE)
    ax = (await scope.session.send(
        "Accessibility.getPartialAXTree", {"backendNodeId": node["backendNodeId"], "fetchRelatives": False}
    ))["nodes"]
    role = ax[0].get("role", {}).get("value", "") if ax else ""
    name = ax[0].get("name", {}).get("value", "") if ax else ""
    return ResolvedTarget(
        boundaries=tuple(boundaries),
        ref=ElementRef(target_id=scope.target_id, backend_node_id=int(node["backendNodeId"])),
        document_url=scope.document_url,
        box=box,
        visible_name=str(described["visible"]),
        names=tuple(str(n) for n in described["names"]),
        selector=str(described["selector"]),
        ax_role=str(role),
        ax_name=str(name),
        xpath=str(described["xpath"]),
        stagehand_xpath=frames_xpath + str(await _call(scope, node_id, _STAGEHAND_XPATH)),
    )


async def resolve_target(page: Page, chain: Sequence[str]) -> ResolvedTarget:
    """Follow ``chain`` hop by hop; each selector must match exactly one element in its scope.

    A selector that is invalid or matches 0 or several elements is an ``InputError`` naming the hop.
    Every CDP session opened here is detached before returning, so no node id outlives the call.
    """
    top = await page.context.new_cdp_session(page)
    opened = [top]
    try:
        scope = await _document_scope(top, (0.0, 0.0))
        boundaries: list[Boundary] = []
        frames_xpath = ""
        for hop, selector in enumerate(chain, start=1):
            where = f"selector {hop} of {len(chain)} {selector!r}"
            try:
                found = (await scope.session.send("DOM.querySelectorAll",
                                                  {"nodeId": scope.node_id, "selector": selector}))["nodeIds"]
            except PlaywrightError as e:
                raise InputError(f"{where} is not a valid selector: {e.message.splitlines()[0]}") from e
            if len(found) != 1:
                raise InputError(f"{where} matched {len(found)} elements, not exactly one")
            if hop == len(chain):
                return await _target(scope, found[0], boundaries, frames_xpath)
            if scope.index[found[0]]["nodeName"] in ("IFRAME", "FRAME"):
                frames_xpath += str(await _call(scope, found[0], _STAGEHAND_XPATH))
            try:
                scope, boundary = await _enter(page, scope, scope.index[found[0]], opened)
            except InputError as e:
                raise InputError(f"{where} {e.message}") from e
            boundaries.append(boundary)
        raise InputError("the target chain is empty")
    finally:
        for session in opened:
            with contextlib.suppress(PlaywrightError):
                await session.detach()
