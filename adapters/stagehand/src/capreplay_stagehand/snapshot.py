"""The ``snapshot`` and ``resolve`` commands: Stagehand's own tree of the page, and its act path for an id.

``page.snapshot()`` is the hybrid snapshot Stagehand's act, observe and extract send their model (shadow roots
pierced, iframes included). ``resolve`` follows act's ``normalizeActInferenceElement``: ``xpath_map[id]``, a
trailing text node trimmed, then Stagehand's locator ``xpath=...``, which must match exactly one element.
"""

from __future__ import annotations

from capreplay_jsonlines.protocol import Emit, Json, RequestError, param

from capreplay_stagehand.session import current
from capreplay_stagehand.xpath import trim_trailing_text_node


async def snapshot(request: Json, emit: Emit) -> Json:
    """Handle ``{"cmd": "snapshot"}``; the XPath map is kept for ``resolve`` and ``xpath_of``."""
    session = current()
    result = await session.page.snapshot()
    session.xpath_map = dict(result.xpath_map)
    return {"formatted_tree": result.formatted_tree, "xpath_map": result.xpath_map, "url_map": result.url_map}


async def resolve(request: Json, emit: Emit) -> Json:
    """Handle ``{"cmd": "resolve", "element_id": "0-12"}`` against the last snapshot (``id`` is the request's)."""
    element_id = param(request, "element_id")
    session = current()
    if session.xpath_map is None:
        raise RequestError("no snapshot of this page yet: send 'snapshot' first")
    xpath = session.xpath_map.get(element_id)
    if xpath is None:
        return {"xpath": None, "selector": None, "matches": 0}
    selector = f"xpath={trim_trailing_text_node(xpath)}"
    matches = await session.page.locator(selector).count()
    return {"xpath": xpath, "selector": selector, "matches": matches}
