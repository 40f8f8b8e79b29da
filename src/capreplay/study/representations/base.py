"""What a representation is: a name, a kind, the answer format its ACT answers use, and pure formatters
from a page's views to what the model is shown."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from capreplay.study.page.views import PageViews

Kind = Literal["text", "image"]

AnswerFormat = Literal["css_selector", "text", "role_name", "index", "point", "aria_ref", "stagehand_id"]
"""How an ACT answer names an element, and so how it is resolved (:mod:`capreplay.study.answers.resolve`):

- ``css_selector``: ``{"selector": str}``, run in the top document, must match exactly one element;
- ``text``: ``{"text": str, "occurrence"?: int}``, visible text, label or placeholder;
- ``role_name``: ``{"role": str, "name": str, "occurrence"?: int}``, an ARIA role and accessible name;
- ``index``: ``{"index": int}``, an element index of the indexed DOM;
- ``point``: ``{"x": number, "y": number}``, a click position on the screenshot;
- ``aria_ref``: ``{"ref": str}``, an element reference of Playwright's AI-mode ARIA snapshot (``e12``,
  ``f1e3`` inside the first iframe);
- ``stagehand_id``: ``{"id": str}``, an element id of Stagehand's snapshot (``0-12``: frame ordinal and node).

``occurrence`` is 1-based in page order and picks one of several matches.
"""


@dataclass(frozen=True)
class Representation:
    """One way of showing a page to a model. Adding one is one small module and one line in the registry."""

    name: str
    kind: Kind
    answer_format: AnswerFormat
    render: Callable[[PageViews], str | bytes]
    """The model's input for this page: text, or PNG bytes for an image."""
    description: str
    shown_text: Callable[[PageViews], str] | None = None
    """The text a model reads in it, where that is not what ``render`` gives: the text an image shows, the
    HTML with its character references decoded. None: the rendered text itself."""

    def searchable(self, views: PageViews) -> str:
        """The text READ answers and ACT targets' names are looked for in."""
        if self.shown_text is not None:
            return self.shown_text(views)
        text = self.render(views)
        if not isinstance(text, str):
            raise TypeError(f"{self.name} renders bytes: give it a shown_text")
        return text

    @property
    def extension(self) -> str:
        """File extension of a rendered page: ``txt`` or ``png``."""
        return "png" if self.kind == "image" else "txt"
