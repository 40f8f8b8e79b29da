"""raw_html: ``page.content()``, the serialized top document (no iframe or shadow-root content)."""

from __future__ import annotations

import html

from capreplay.study.page.views import PageViews
from capreplay.study.representations.base import Representation


def render(views: PageViews) -> str:
    """The HTML as read from the page."""
    return views.raw_html


def read_text(views: PageViews) -> str:
    """The HTML with its character references decoded, as a model reads ``77&nbsp;cm``: 77 cm."""
    return html.unescape(views.raw_html)


REPRESENTATION = Representation(name="raw_html", kind="text", answer_format="css_selector", render=render,
                                shown_text=read_text, description="page.content(): the serialized top document")
