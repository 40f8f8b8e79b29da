"""screenshot: the viewport as a PNG, 1280x800; the model answers with a point on it."""

from __future__ import annotations

from capreplay.study.page.views import PageViews
from capreplay.study.representations.base import Representation


def render(views: PageViews) -> bytes:
    """The PNG bytes."""
    return views.screenshot_png


def shown_text(views: PageViews) -> str:
    """The text the screenshot shows, read from the page rather than from the pixels."""
    return views.viewport_text


REPRESENTATION = Representation(name="screenshot", kind="image", answer_format="point", render=render,
                                shown_text=shown_text, description="viewport PNG, 1280x800")
