"""What one page session yields: everything the representations are formatted from. Data only.

The fields are read from the page in the methodology's order (:func:`capreplay.study.page.extract.capture_views`):
the HTML, the Markdown made from it, the accessibility tree, the screenshot, the text inside the
screenshot's viewport, and browser-use's indexed DOM last, with the HTML read again around it to
record whether browser-use changed the page.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from capreplay.models.geometry import Layout
from capreplay.study.page.browser_use import IndexedDom
from capreplay.study.page.stagehand import Snapshot


class PageViews(BaseModel):
    """The raw material of every representation of one page load."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    url: str = Field(description="The page's URL when the views were read.")
    raw_html: str = Field(description="page.content(): the serialized top document, no iframe or shadow content.")
    markdown: str = Field(description="markdownify.markdownify(raw_html) with its default settings.")
    accessibility_tree: str = Field(description='page.locator("body").aria_snapshot(), default mode.')
    aria_ai: str = Field(description='page.aria_snapshot(mode="ai"): iframes included, a [ref=eN] per element.')
    screenshot_png: bytes = Field(exclude=True, repr=False, description="The viewport as PNG (1280x800).")
    viewport_text: str = Field(
        description="Text rendered inside the viewport (any frame, open or closed shadow root): what the screenshot "
        "shows, as text, used only to tell whether a READ answer is visible in the screenshot."
    )
    indexed_dom: IndexedDom = Field(description="browser-use's serialization, read last.")
    stagehand: Snapshot | None = Field(description="Stagehand's page.snapshot() of the same URL, in Stagehand's own "
                                       "browser; None when no representation of the run needs it.")
    html_before_browser_use: str = Field(description="page.content() just before browser-use attached.")
    html_after_browser_use: str = Field(description="page.content() just after browser-use detached.")
    timings_ms: dict[str, float] = Field(description="Milliseconds each view took to read or format.")
    layouts: dict[str, Layout] = Field(
        default_factory=dict,
        description="The layout at each moment of reading: html, screenshot, browser_use (as browser-use left "
        "it), restored (put back to the screenshot's), stagehand (Stagehand's browser); every view and box is "
        "taken in the screenshot's."
    )

    @property
    def browser_use_changed_html(self) -> bool:
        """Integrity check: whether page.content() differs after browser-use attached and detached."""
        return self.html_before_browser_use != self.html_after_browser_use
