"""markdown: markdownify's conversion of the raw HTML, default settings.

markdownify converts the whole page without choosing content (a boilerplate remover would drop
navigation, forms and footers by design). It drops ``<input>`` and ``<select>`` and escapes ``_`` and ``*``.
"""

from __future__ import annotations

import markdownify

from capreplay.study.page.views import PageViews
from capreplay.study.representations.base import Representation


def to_markdown(html: str) -> str:
    """``markdownify.markdownify(html)`` with its default settings."""
    return str(markdownify.markdownify(html))


def render(views: PageViews) -> str:
    """The Markdown made from the page's HTML when the views were read."""
    return views.markdown


REPRESENTATION = Representation(name="markdown", kind="text", answer_format="text", render=render,
                                description="markdownify(raw_html), default settings")
