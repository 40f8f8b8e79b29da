"""What an ACT answer resolves to, and what ground truth is compared with: plain data, no browser.

An element is named by its CDP ``backendNodeId`` together with the CDP target that owns it: an
out-of-process iframe has an id space of its own, so the same number can name two elements of one page.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ElementRef(_Frozen):
    """One element of a page session."""

    target_id: str = Field(description="CDP target holding the element: the page's tab, or an out-of-process iframe.")
    backend_node_id: int = Field(description="CDP backendNodeId of the element, in that target's id space.")


class Point(_Frozen):
    """A click position on the screenshot, in its pixels (the top page's CSS pixels at scale 1)."""

    x: float
    y: float


class XPathElement(_Frozen):
    """An element of Stagehand's browser, named by the XPath its locator matched exactly once."""

    xpath: str


UnresolvedReason = Literal["unparseable", "invalid_selector", "ambiguous", "not_found", "outside_image"]
"""Why an answer names no element: not in the answer format, a selector the browser rejects, several
matches without an occurrence, nothing matched (or the occurrence is past the last match), or a point
outside the screenshot."""


class Unresolved(_Frozen):
    """An answer that names no element, and why."""

    reason: UnresolvedReason
    detail: str = Field(description="One line: what was matched, or what is wrong with the answer.")


Resolution = ElementRef | Point | XPathElement | Unresolved
"""What an ACT answer resolves to: an element, a point on the screenshot, an element of Stagehand's browser, or
nothing (with a reason)."""
