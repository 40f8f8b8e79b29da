"""The text a screenshot of the viewport shows, read from the page: every rendered text node whose box
meets the viewport, in the top document, in iframes (clipped to the iframe's box) and in shadow roots,
closed ones included (reached through CDP). It tells whether a READ answer is in the screenshot.
"""

from __future__ import annotations

from typing import Any

from playwright.async_api import CDPSession, Error as PlaywrightError, Frame, Page

Clip = tuple[float, float, float, float]
"""left, top, right, bottom, in the CSS pixels of one frame's own viewport."""

# The text nodes of a document or shadow root (open shadow roots included, in tree order) that are
# visible and whose boxes meet ``clip``: a line per block, the inline pieces of a block joined as they are.
_VIEWPORT_TEXT = """(scope, clip) => {
  const doc = scope.ownerDocument || scope;
  const win = doc.defaultView;
  const [left, top, right, bottom] = clip;
  const SKIP = new Set(["SCRIPT", "STYLE", "NOSCRIPT", "TEMPLATE", "HEAD", "TITLE"]);
  const out = [];
  const visit = (root) => {
    const walker = doc.createTreeWalker(root, NodeFilter.SHOW_ELEMENT | NodeFilter.SHOW_TEXT, {
      acceptNode: (n) => n.nodeType === 1 && SKIP.has(n.tagName.toUpperCase())
        ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT,
    });
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      if (node.nodeType === 1) {
        if (node.shadowRoot) visit(node.shadowRoot);
        const shown = controlText(node);
        if (shown && meets(node.getClientRects(), node)) { out.push("\\n", shown); lastBlock = null; }
        continue;
      }
      if (!node.data.trim()) continue;
      const parent = node.parentElement;
      if (parent && parent.closest("select, textarea")) continue;  // shown through the control's value
      const range = doc.createRange();
      range.selectNodeContents(node);
      if (!meets(range.getClientRects(), parent)) continue;
      // A new block starts a new line, as innerText does; inline pieces of one block run on.
      let block = parent;
      while (block && win.getComputedStyle(block).display.startsWith("inline")) block = block.parentElement;
      if (out.length && block !== lastBlock) out.push("\\n");
      lastBlock = block;
      out.push(node.data);
    }
  };
  // Geometry first: it rules out most of a long page without computing any style.
  const meets = (rects, element) => [...rects].some((r) => r.width > 0 && r.height > 0
      && r.right > left && r.left < right && r.bottom > top && r.top < bottom)
    && (!element || win.getComputedStyle(element).visibility === "visible");
  // What a form control shows: its value (not a password's), else its placeholder; a select's chosen option.
  const controlText = (el) => {
    const tag = el.tagName.toUpperCase();
    if (tag === "SELECT") return [...el.selectedOptions].map((o) => o.label).join(", ");
    if (tag === "TEXTAREA" || (tag === "INPUT" && !["hidden", "checkbox", "radio", "file"].includes(el.type))) {
      return (el.type !== "password" && el.value) || el.getAttribute("placeholder") || "";
    }
    return "";
  };
  let lastBlock = null;
  visit(scope);
  return out.join("");
}"""

# The same for a closed shadow root reached through CDP: its window may be a same-process iframe of
# the session's top window, so the clip is moved into that window's coordinates first.
_CLOSED_ROOT_TEXT = f"""function (clip) {{
  let [left, top, right, bottom] = clip;
  for (let w = (this.ownerDocument || this).defaultView; w.parent !== w; w = w.parent) {{
    let frame = null;
    try {{ frame = w.frameElement; }} catch (e) {{ break; }}
    if (!frame) break;
    const box = frame.getBoundingClientRect();
    const dx = box.left + frame.clientLeft, dy = box.top + frame.clientTop;
    left -= dx; right -= dx; top -= dy; bottom -= dy;
  }}
  return ({_VIEWPORT_TEXT})(this, [left, top, right, bottom]);
}}"""


def frame_clip(viewport: Clip, frame_box: Clip, content_origin: tuple[float, float]) -> Clip | None:
    """The part of the viewport an iframe shows, in the iframe's own coordinates; None if it shows none.

    ``frame_box`` is the iframe element's box and ``content_origin`` where its document starts, both in
    the top page's coordinates.
    """
    left, top = max(viewport[0], frame_box[0]), max(viewport[1], frame_box[1])
    right, bottom = min(viewport[2], frame_box[2]), min(viewport[3], frame_box[3])
    if right <= left or bottom <= top:
        return None
    ox, oy = content_origin
    return (left - ox, top - oy, right - ox, bottom - oy)


async def _clip_of(frame: Frame, viewport: Clip) -> Clip | None:
    """Where ``frame`` shows in the viewport, in its own coordinates (None when it is not shown)."""
    element = await frame.frame_element()
    box = await element.bounding_box()
    if box is None:
        return None
    border_left, border_top = await element.evaluate("(e) => [e.clientLeft, e.clientTop]")
    outer = (box["x"], box["y"], box["x"] + box["width"], box["y"] + box["height"])
    return frame_clip(viewport, outer, (box["x"] + border_left, box["y"] + border_top))


async def _closed_roots_text(session: CDPSession, clip: Clip) -> list[str]:
    """The viewport text of every closed shadow root in the session's pierced tree."""
    doc = (await session.send("DOM.getDocument", {"depth": -1, "pierce": True}))["root"]
    texts: list[str] = []
    pending: list[dict[str, Any]] = [doc]
    while pending:
        node = pending.pop()
        for root in node.get("shadowRoots", []):
            if root.get("shadowRootType") == "closed":
                obj = (await session.send("DOM.resolveNode", {"nodeId": root["nodeId"]}))["object"]
                result = await session.send("Runtime.callFunctionOn", {
                    "objectId": obj["objectId"], "functionDeclaration": _CLOSED_ROOT_TEXT,
                    "arguments": [{"value": list(clip)}], "returnByValue": True,
                })
                texts.append(str(result["result"]["value"]))
        pending += reversed([*node.get("children", []), *node.get("shadowRoots", [])])
        if "contentDocument" in node:
            pending.append(node["contentDocument"])
    return texts


async def extract_viewport_text(page: Page) -> str:
    """The text shown in the viewport, one line per document or closed shadow root that shows any."""
    size = page.viewport_size or {"width": 1280, "height": 800}
    viewport: Clip = (0.0, 0.0, float(size["width"]), float(size["height"]))
    texts: list[str] = []
    sessions: list[tuple[CDPSession, Clip]] = []
    for frame in page.frames:
        if frame.is_detached():
            continue
        clip = viewport if frame == page.main_frame else await _clip_of(frame, viewport)
        if clip is None:
            continue
        texts.append(await frame.evaluate(f"(clip) => ({_VIEWPORT_TEXT})(document, clip)", list(clip)))
        try:
            sessions.append((await page.context.new_cdp_session(page if frame == page.main_frame else frame), clip))
        except PlaywrightError:
            continue  # an in-process iframe: its closed roots are in the page's own tree
    for session, clip in sessions:
        try:
            texts += await _closed_roots_text(session, clip)
        finally:
            await session.detach()
    return "\n".join(t for t in texts if t.strip())
