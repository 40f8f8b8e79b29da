"""stagehand_snapshot: Stagehand's hybrid snapshot, the ``formatted_tree`` of ``page.snapshot()`` that its act,
observe and extract send their model: the whole page, iframes and shadow roots included, an ``[id]`` per
element; an ACT answer names an id. Read in Stagehand's own browser (the same binary and offline flags).
"""

from __future__ import annotations

from capreplay.study.page.views import PageViews
from capreplay.study.representations.base import Representation


def render(views: PageViews) -> str:
    """``formatted_tree`` as Stagehand's snapshot gave it."""
    if views.stagehand is None:
        raise ValueError("this page session did not read Stagehand's snapshot")
    return views.stagehand.formatted_tree


REPRESENTATION = Representation(name="stagehand_snapshot", kind="text", answer_format="stagehand_id", render=render,
                                description="Stagehand's page.snapshot() formatted_tree, an [id] per element")
