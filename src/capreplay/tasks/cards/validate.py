"""Checking an item on the replay: its selector chain must name exactly one element there, and a visible one.

The chain is followed as the study follows an ACT target's (:func:`capreplay.study.page.ground_truth.resolve_target`:
through iframes and shadow roots, one match per hop), in the page load the model's views were read from, so
the item is checked on the very page the model was shown. An element with no layout box (``display: none``,
not rendered) or a box of zero width or height is not visible, and an item pointing at it is dropped: a task
built on it would ask for something no person can see.
"""

from __future__ import annotations

from collections.abc import Sequence

from playwright.async_api import Error as PlaywrightError, Page

from capreplay.errors import InputError
from capreplay.study.page.ground_truth import resolve_target


async def item_problem(page: Page, selector: Sequence[str]) -> str | None:
    """Why the chain ``selector`` does not name one visible element of the loaded ``page``; None when it does."""
    try:
        target = await resolve_target(page, selector)
    except InputError as e:
        return e.message
    except PlaywrightError as e:
        # The page's DOM changed under the lookup or the protocol refused it: the item cannot be borne out.
        return f"the replay could not follow the selector chain: {e.message.splitlines()[0]}"
    if target.box is None:
        return f"selector chain {list(selector)} matched an element that is not rendered (no layout box)"
    if target.box.width <= 0 or target.box.height <= 0:
        size = f"{target.box.width:g} x {target.box.height:g}"
        return f"selector chain {list(selector)} matched an element that is not visible (its box is {size} px)"
    return None
