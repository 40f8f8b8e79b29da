"""Every place text can be on a loaded page: the top document, each iframe, each closed shadow root.

Each source holds the rendered text nodes in order (with the top of each, in its document's pixels), the
text a form control draws (a button's value, an empty field's placeholder), and the attribute and form
values. Open shadow roots are walked as part of their host's document; closed
ones cannot be reached from a page script and are collected through CDP. READ answers are located in
these sources by the pure functions of :mod:`capreplay.study.page.locations`.
"""

from __future__ import annotations

from typing import Any

from playwright.async_api import CDPSession, Error as PlaywrightError, Page

from capreplay.study.page.locations import Boundary, Segment, TextSource, frame_boundary

# Collects one document's or shadow root's rendered text (with the top of each text node, in page
# pixels) and its attribute and form values.
COLLECT_TEXT = """(scope) => {
  const doc = scope.ownerDocument || scope;
  const win = doc.defaultView;
  const SKIP = new Set(["SCRIPT", "STYLE", "NOSCRIPT", "TEMPLATE", "TEXTAREA", "SELECT", "OPTION", "OPTGROUP",
                        "HEAD", "TITLE"]);
  const segments = [];
  const values = [];
  // A button's value and an empty field's placeholder are drawn as text: visible, not attribute-only.
  const drawn = (el) => {
    const tag = el.tagName.toUpperCase();
    if (tag === "INPUT" && ["button", "submit", "reset"].includes(el.type)) return el.value;
    if ((tag === "INPUT" || tag === "TEXTAREA") && !el.value) return el.getAttribute("placeholder") || "";
    return "";
  };
  const visit = (root) => {
    for (const el of root.querySelectorAll("*")) {
      const text = drawn(el).trim();
      if (text) {
        const rect = el.getBoundingClientRect();
        if (rect.width > 0 && rect.height > 0 && win.getComputedStyle(el).visibility === "visible")
          segments.push([` ${text} `, rect.top + win.scrollY]);
      }
      for (const attr of el.attributes) values.push(attr.value);
      const tag = el.tagName.toUpperCase();
      if (tag === "INPUT" && el.type !== "password") values.push(el.value);
      else if (tag === "TEXTAREA") values.push(el.value);
      else if (tag === "SELECT") for (const option of el.selectedOptions) values.push(option.label, option.value);
      if (el.shadowRoot) visit(el.shadowRoot);
    }
    const walker = doc.createTreeWalker(root, NodeFilter.SHOW_ELEMENT | NodeFilter.SHOW_TEXT, {
      acceptNode: (n) => n.nodeType === 1 && SKIP.has(n.tagName.toUpperCase())
        ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT,
    });
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      if (node.nodeType !== 3 || !node.data.trim()) continue;
      const parent = node.parentElement;
      if (parent && win.getComputedStyle(parent).visibility !== "visible") continue;
      const range = doc.createRange();
      range.selectNodeContents(node);
      const rects = [...range.getClientRects()].filter((r) => r.width > 0 && r.height > 0);
      if (rects.length) segments.push([node.data, Math.min(...rects.map((r) => r.top)) + win.scrollY]);
    }
  };
  visit(scope);
  return { segments, values };
}"""


def _source(boundary: Boundary | None, raw: dict[str, Any]) -> TextSource:
    segments = [Segment(str(text), float(top)) for text, top in raw["segments"]]
    return TextSource(boundary, segments, [str(v) for v in raw["values"]])


async def _closed_roots(session: CDPSession, container: Boundary | None, top_url: str) -> list[TextSource]:
    """The text of every closed shadow root in the session's pierced tree.

    A root inside an iframe is labelled with the iframe's boundary: a frame outranks a shadow root, as
    it does for ACT targets.
    """
    doc = (await session.send("DOM.getDocument", {"depth": -1, "pierce": True}))["root"]
    found: list[TextSource] = []

    async def walk(node: dict[str, Any], inside: Boundary | None) -> None:
        for root in node.get("shadowRoots", []):
            if root.get("shadowRootType") == "closed":
                obj = (await session.send("DOM.resolveNode", {"nodeId": root["nodeId"]}))["object"]
                raw = await session.send("Runtime.callFunctionOn", {
                    "objectId": obj["objectId"], "returnByValue": True,
                    "functionDeclaration": f"function () {{ return ({COLLECT_TEXT})(this); }}",
                })
                found.append(_source(inside or "shadow_closed", raw["result"]["value"]))
            await walk(root, inside)
        for child in node.get("children", []):
            await walk(child, inside)
        if "contentDocument" in node:
            url = str(node["contentDocument"].get("documentURL", ""))
            await walk(node["contentDocument"], inside or frame_boundary(top_url, url))

    await walk(doc, container)
    return found


async def collect_sources(page: Page) -> list[TextSource]:
    """Every place text can be on the page: the top document, each iframe, each closed shadow root."""
    sources: list[TextSource] = []
    for frame in page.frames:
        if frame.is_detached():
            continue
        boundary = None if frame == page.main_frame else frame_boundary(page.url, frame.url)
        sources.append(_source(boundary, await frame.evaluate(f"({COLLECT_TEXT})(document)")))
    session = await page.context.new_cdp_session(page)
    try:
        sources += await _closed_roots(session, None, page.url)
    finally:
        await session.detach()
    for frame in page.frames[1:]:
        try:
            oop = await page.context.new_cdp_session(frame)
        except PlaywrightError:
            continue  # in process: its closed roots were in the page's own tree
        try:
            sources += await _closed_roots(oop, frame_boundary(page.url, frame.url), page.url)
        finally:
            await oop.detach()
    return sources
