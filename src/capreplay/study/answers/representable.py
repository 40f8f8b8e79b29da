"""Representability: whether a representation lets a model name the ACT target, or shows the READ answer.

Decided before scoring, from the representation and the live page, never from the answer:

- raw_html (``css_selector``): the target is in the top document's light DOM, where a selector run on
  ``page.content()`` can reach it;
- markdown (``text``): the target is in the top document, and its text, a label, placeholder,
  aria-label or title appears in the Markdown;
- accessibility_tree (``role_name``): the target is in the top document and its own node (role and
  name) appears in the snapshot; a node without a role (shown as ``text``) is not addressable;
- indexed_dom (``index``): the target is in the selector map;
- screenshot (``point``): the target's box meets the viewport;
- aria_ai (``aria_ref``): a ref of the AI-mode snapshot names the target (iframes included);
- stagehand_snapshot (``stagehand_id``): the target's id in Stagehand's snapshot appears in its tree.

A READ answer is present when its normalised form (or an alias's) occurs in the text a model reads in the
representation (for raw HTML, with character references decoded; for the screenshot, the text shown in
the viewport; Markdown's escapes are undone by the normal form): a substring check, for audit only, and
never made for a derived answer (a count, a sum).
"""

from __future__ import annotations

import uuid

from playwright.async_api import Error as PlaywrightError, Page
from pydantic import BaseModel, ConfigDict, Field

from capreplay.models.task import ReadTask
from capreplay.study.answers.read_score import answer_present
from capreplay.study.answers.resolve import call_on_node, index_of, png_size, resolve_ref
from capreplay.study.page.ground_truth import ResolvedTarget
from capreplay.study.page.views import PageViews
from capreplay.study.representations.accessibility_tree import node_lines, parse_node
from capreplay.study.representations.aria_ai import refs_named
from capreplay.study.representations.base import Representation
from capreplay.util.answer_text import normalize_answer


class Representability(BaseModel):
    """Whether a representation can carry a task's target or answer, and why."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    representable: bool | None = Field(description="None when it cannot be decided (a derived READ answer).")
    reason: str = Field(description="One line: what was found, or what is missing.")


def _yes(reason: str) -> Representability:
    return Representability(representable=True, reason=reason)


def _no(reason: str) -> Representability:
    return Representability(representable=False, reason=reason)


async def aria_node(page: Page, target: ResolvedTarget) -> str | None:
    """The target's own line in an ARIA snapshot (``- button "Add to basket"``), read from the live page.

    None when the target is outside the top document, has no unique selector, or is hidden from the
    accessibility tree.
    """
    if not target.in_top_document or not target.selector:
        return None
    element = page.locator(target.selector)
    if await element.count() != 1:
        return None
    lines = (await element.aria_snapshot()).splitlines()
    return lines[0].strip() if lines else None


async def aria_ref(page: Page, views: PageViews, target: ResolvedTarget, page_target: str) -> str | None:
    """The ref of the AI-mode snapshot that names ``target`` (None if none does).

    Candidates are the refs of lines with the target's role and name, then with its role, then any, at most
    :data:`REF_TRIES` of them (a 500-row table has 5,000 refs); each is resolved through Playwright's
    ``aria-ref=`` locator and compared with the target's CDP identity.
    """
    candidates = dict.fromkeys([*refs_named(views.aria_ai, target.ax_role, target.ax_name or None),
                                *refs_named(views.aria_ai, target.ax_role, None),
                                *refs_named(views.aria_ai, None, None)])  # fmt: skip
    key = await _park_target(page, target, page_target)
    try:
        for ref in list(candidates)[:REF_TRIES]:
            same = await _is_parked(page, ref, key) if key is not None else None
            if same is None:  # not decidable in the page's window: through the element's CDP identity
                same = await resolve_ref(page, ref, page_target) == target.ref
            if same:
                return ref
        return None
    finally:
        if key is not None:
            await page.evaluate("key => { delete window[key]; }", key)


async def _park_target(page: Page, target: ResolvedTarget, page_target: str) -> str | None:
    """A fresh key under which the top window now holds ``target``'s element, or None where it cannot (an
    element of another CDP target, or of a frame that may not reach the top window).

    A target with no ref costs :data:`REF_TRIES` candidates; comparing each with the parked element is one
    round trip, where resolving its CDP identity is several and a CDP session each.
    """
    if target.ref.target_id != page_target:
        return None
    key = f"__capreplay_{uuid.uuid4().hex}"
    parked = await call_on_node(page, target.ref.backend_node_id, "function (key) { try { window.top[key] = this; "
                                "return true; } catch (e) { return false; } }", key)  # fmt: skip
    return key if parked is True else None


async def _is_parked(page: Page, ref: str, key: str) -> bool | None:
    """Whether ``ref`` names exactly one element and it is the parked one; None where that cannot be told from
    the element's frame (its top window unreachable or not holding the key) or Playwright fails on the ref.

    (``evaluate_all`` does not see the snapshot's refs: ``count`` and ``evaluate`` do, as :func:`resolve_ref`'s.)"""
    matches = page.locator(f"aria-ref={ref}")
    try:
        if await matches.count() != 1:
            return False  # as resolve_ref: a ref naming no element, or several, names not the target
        same = await matches.evaluate(
            "(el, key) => { let t; try { t = window.top[key]; } catch (e) { return null; }"
            " return t === undefined ? null : el === t; }", key)
    except PlaywrightError:
        return None
    return same if isinstance(same, bool) else None


REF_TRIES = 200
"""How many refs :func:`aria_ref` resolves before it says none names the target."""


def _outside(target: ResolvedTarget) -> Representability:
    return _no(f"the target is behind {', '.join(target.boundaries)}")


def act_representable(
    representation: Representation, views: PageViews, target: ResolvedTarget, target_aria_node: str | None,
    target_aria_ref: str | None = None, target_stagehand_id: str | None = None,
) -> Representability:
    """Whether ``representation`` of this page lets a model name ``target``.

    ``target_aria_node`` is the target's own ARIA snapshot line, from :func:`aria_node`; ``target_aria_ref``
    its ref in the AI-mode snapshot, from :func:`aria_ref`; ``target_stagehand_id`` its id in Stagehand's
    snapshot (the adapter's ``xpath_of``).
    """
    match representation.answer_format:
        case "stagehand_id":
            tree = views.stagehand.formatted_tree if views.stagehand else ""
            if target_stagehand_id is None or f"[{target_stagehand_id}]" not in tree:
                return _no("the target has no id in Stagehand's tree")
            return _yes(f"the target is [{target_stagehand_id}]")
        case "aria_ref":
            if target_aria_ref is None:
                return _no("no ref of the AI-mode snapshot names the target")
            return _yes(f"the target is ref {target_aria_ref}")
        case "css_selector":
            if target.boundaries:
                return _outside(target)
            return _yes("the target is in the top document's HTML")
        case "text":
            if not target.in_top_document:
                return _outside(target)
            text = normalize_answer(representation.searchable(views))
            shown = [name for name in target.names if normalize_answer(name) and normalize_answer(name) in text]
            if not shown:
                return _no(f"none of the target's names {list(target.names)} appears in the {representation.name}")
            return _yes(f"{shown[0]!r} appears in the {representation.name}")
        case "role_name":
            if not target.in_top_document:
                return _outside(target)
            parsed = parse_node(target_aria_node) if target_aria_node else None
            if target_aria_node is None or parsed is None:
                return _no("the target has no node of its own in the accessibility tree")
            if parsed[0] == "text":
                return _no(f"the target's node has no role: {target_aria_node}")
            if target_aria_node not in node_lines(representation.searchable(views)):
                return _no(f"the target's node {target_aria_node} is not in the {representation.name}")
            return _yes(f"node {target_aria_node}")
        case "index":
            index = index_of(views.indexed_dom, target.ref)
            if index is None:
                return _no("the target is not in the selector map")
            return _yes(f"the target is index {index}")
        case "point":
            width, height = png_size(views.screenshot_png)
            if target.box is None:
                return _no("the target has no layout box")
            if target.box.clip(width, height) is None:
                return _no(f"the target's box {target.box.model_dump()} is outside the {width}x{height} viewport")
            return _yes("the target's box meets the viewport")
    raise AssertionError(f"unhandled answer format {representation.answer_format!r}")


def read_representable(representation: Representation, views: PageViews, task: ReadTask) -> Representability:
    """Whether the READ answer (or an alias) occurs in the text a model reads in the representation, normalised.

    A derived answer is never decided by substring: a count such as ``8`` would be "present" wherever a
    digit 8 is.
    """
    if task.derived:
        return Representability(representable=None, reason="a derived answer: presence is not decided by substring")
    if answer_present(representation.searchable(views), task.answer, task.aliases):
        return _yes(f"the answer appears in the {representation.name}")
    return _no(f"neither the answer nor an alias appears in the {representation.name}")
