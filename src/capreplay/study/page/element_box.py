"""Where the element an ACT answer resolved to is on the page: its border box in the top page's CSS pixels.

Measured as ground truth measures its targets (:mod:`capreplay.study.page.ground_truth`), so the two boxes can
be drawn side by side on the screenshot: CDP's ``DOM.getBoxModel`` border quad in the session of the CDP target
that holds the element, which for the page's own target (its top document, same-process iframes, shadow roots)
is already in top-page coordinates, and for an out-of-process iframe is shifted by that iframe's content box in
the top page. Playwright's ``bounding_box`` was not used: for an out-of-process iframe with a border it places
the element one border width off the box ground truth measures.

Nothing here may change a verdict: a box that cannot be measured is None, never an error.
"""

from __future__ import annotations

import contextlib
from typing import Any

from playwright.async_api import CDPSession, Error as PlaywrightError, Page

from capreplay.models.geometry import Box
from capreplay.study.page.elements import ElementRef


def quad_box(quad: list[float], offset: tuple[float, float] = (0.0, 0.0)) -> Box:
    """The box around a CDP quad (x1, y1, ... x4, y4), shifted by ``offset``."""
    xs, ys = quad[0::2], quad[1::2]
    return Box(x=min(xs) + offset[0], y=min(ys) + offset[1], width=max(xs) - min(xs), height=max(ys) - min(ys))


async def _model(session: CDPSession, backend_node_id: int) -> dict[str, Any] | None:
    try:
        return dict((await session.send("DOM.getBoxModel", {"backendNodeId": backend_node_id}))["model"])
    except PlaywrightError:
        return None  # "Could not compute box model": not rendered; or the node is gone


async def _frame_session(page: Page, target_id: str) -> CDPSession | None:
    """The CDP session of the page's out-of-process frame whose target is ``target_id``, or None."""
    for frame in page.frames[1:]:
        try:
            session = await page.context.new_cdp_session(frame)
        except PlaywrightError:
            continue  # an in-process frame: it has no target of its own
        info = await session.send("Target.getTargetInfo")
        if info["targetInfo"]["targetId"] == target_id:
            return session
        await session.detach()
    return None


async def element_box(page: Page, ref: ElementRef, page_target: str) -> Box | None:
    """The border box of ``ref``'s element in the top page's CSS pixels; None if it is not rendered, is gone, or
    lies in an out-of-process iframe that is not a child of the top page's target."""
    top = await page.context.new_cdp_session(page)
    opened = [top]
    try:
        if ref.target_id == page_target:
            model = await _model(top, ref.backend_node_id)
            return quad_box(model["border"]) if model else None
        frame = await _frame_session(page, ref.target_id)
        if frame is None:
            return None
        opened.append(frame)
        try:
            # An out-of-process frame's target id is its frame id; its owner <iframe> is in the top target
            # unless the frame is nested in another out-of-process frame.
            owner = await top.send("DOM.getFrameOwner", {"frameId": ref.target_id})
        except PlaywrightError:
            return None
        owner_model = await _model(top, int(owner["backendNodeId"]))
        model = await _model(frame, ref.backend_node_id)
        if owner_model is None or model is None:
            return None
        content = owner_model["content"]
        return quad_box(model["border"], (content[0], content[1]))
    finally:
        for session in opened:
            with contextlib.suppress(PlaywrightError):
                await session.detach()


async def xpath_box(page: Page, xpath: str) -> Box | None:
    """The box of the one element a Stagehand XPath names in the page's top document, or None.

    Stagehand's XPaths run from the top document through iframes and write a shadow root as ``//``; as plain
    XPath such a path names another element or none, so only a path within the top document is looked up.
    """
    if "//" in xpath or not xpath.startswith("/"):
        return None
    matches = page.main_frame.locator(f"xpath={xpath}")
    try:
        if await matches.count() != 1:
            return None
        found = await matches.bounding_box()
    except PlaywrightError:
        return None
    if found is None:
        return None
    return Box(x=found["x"], y=found["y"], width=found["width"], height=found["height"])
