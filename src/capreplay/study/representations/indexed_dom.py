"""indexed_dom: browser-use's own serializer, the text its Agent puts in the prompt, with the whole page.

One deliberate deviation from the agent default, as in the earlier study: no viewport threshold, so
elements far below the fold are kept. The agent-default text is kept for audit only.
"""

from __future__ import annotations

from capreplay.study.page.views import PageViews
from capreplay.study.representations.base import Representation


def render(views: PageViews) -> str:
    """browser-use's llm_representation() with viewport_threshold=None, untruncated."""
    return views.indexed_dom.text


REPRESENTATION = Representation(name="indexed_dom", kind="text", answer_format="index", render=render,
                                description="browser-use DomService, llm_representation(), viewport_threshold=None")
