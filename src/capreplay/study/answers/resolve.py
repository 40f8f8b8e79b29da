"""Resolving a model's ACT answer, on the live page session, to the element it names.

By answer format (:data:`capreplay.study.representations.base.AnswerFormat`):

- ``css_selector``: CDP ``DOM.querySelectorAll`` in the top document, which must match exactly one
  element. Every resolution opens a CDP session of its own: ``DOM.getDocument`` resets a session's node
  ids, so two resolutions sharing a session can invalidate each other's ids (the earlier study lost a
  run to this); a lost node id raises instead of being scored.
- ``text``: Playwright, and the first strategy with any match decides: an interactive role with the
  exact name, then ``get_by_label``, ``get_by_placeholder``, ``get_by_text`` (all exact).
- ``role_name``: ``get_by_role(role, name=name, exact=True)``.
- ``index``: the indexed DOM's selector map.
- ``point``: a point inside the screenshot; whether it hits the target is scoring's business;
- ``aria_ref``: Playwright's ``aria-ref=`` locator over the page session's AI-mode snapshot, in any frame;
- ``stagehand_id``: Stagehand's own act path in Stagehand's browser (``xpath_map[id]``, a trailing text node
  trimmed, its ``xpath=`` locator), which must match exactly one element; the element is its XPath.

For ``text`` and ``role_name``, ``occurrence`` (1-based, page order) picks one of several matches;
several matches without it are ``ambiguous``. An element found by Playwright is identified like ground
truth, by its CDP backendNodeId and the page's target (page locators never enter iframes).
"""

from __future__ import annotations

import json
import struct
import uuid
from functools import reduce

from playwright.async_api import CDPSession, Error as PlaywrightError, Locator, Page

from capreplay.study.answers.act import (
    IndexAnswer,
    PointAnswer,
    RefAnswer,
    RoleAnswer,
    SelectorAnswer,
    StagehandIdAnswer,
    TextAnswer,
    parse_act_answer,
)
from capreplay.study.page.browser_use import IndexedDom
from capreplay.study.page.elements import ElementRef, Point, Resolution, Unresolved, XPathElement
from capreplay.study.page.stagehand import StagehandAdapter
from capreplay.study.page.views import PageViews
from capreplay.study.representations.base import Representation

INTERACTIVE_ROLES = (
    "button", "checkbox", "combobox", "link", "listbox", "menuitem", "menuitemcheckbox", "menuitemradio",
    "option", "radio", "searchbox", "slider", "spinbutton", "switch", "tab", "textbox", "treeitem",
)  # fmt: skip
"""The roles the ``text`` format's first strategy tries: widgets a model would click or type into."""


def png_size(png: bytes) -> tuple[int, int]:
    """Width and height of a PNG, from its IHDR chunk."""
    if len(png) < 24 or png[:8] != b"\x89PNG\r\n\x1a\n" or png[12:16] != b"IHDR":
        raise ValueError("not a PNG image")
    width, height = struct.unpack(">II", png[16:24])
    return int(width), int(height)


def resolve_index(dom: IndexedDom, index: int) -> ElementRef | Unresolved:
    """The element behind an index of the indexed DOM."""
    entry = dom.selector_map.get(index)
    if entry is None:
        return Unresolved(reason="not_found", detail=f"index {index} is not in the selector map")
    return ElementRef(target_id=entry.target_id, backend_node_id=entry.backend_node_id)


def index_of(dom: IndexedDom, ref: ElementRef) -> int | None:
    """The index of the indexed DOM that stands for ``ref`` (the lowest, should there be several), or None."""
    wanted = (ref.target_id, ref.backend_node_id)
    found = [i for i, e in dom.selector_map.items() if (e.target_id, e.backend_node_id) == wanted]
    return min(found) if found else None


def resolve_point(x: float, y: float, width: int, height: int) -> Point | Unresolved:
    """A click position, if it lies inside the ``width`` x ``height`` image."""
    if not (0 <= x < width and 0 <= y < height):
        return Unresolved(reason="outside_image", detail=f"({x:g}, {y:g}) is outside the {width}x{height} image")
    return Point(x=x, y=y)


async def resolve_selector(page: Page, selector: str, page_target: str) -> ElementRef | Unresolved:
    """The one element ``selector`` matches in the top document, through a CDP session of its own."""
    session = await page.context.new_cdp_session(page)
    try:
        root = (await session.send("DOM.getDocument", {"depth": 0}))["root"]
        try:
            found = (await session.send("DOM.querySelectorAll", {"nodeId": root["nodeId"], "selector": selector}))
        except PlaywrightError as e:
            if "DOM Error while querying" not in e.message:
                raise
            return Unresolved(reason="invalid_selector", detail=f"{selector!r} is not a valid CSS selector")
        ids = found["nodeIds"]
        if len(ids) != 1:
            detail = f"{selector!r} matched {len(ids)} elements in the top document"
            return Unresolved(reason="ambiguous" if ids else "not_found", detail=detail)
        node = (await session.send("DOM.describeNode", {"nodeId": ids[0]}))["node"]
        return ElementRef(target_id=page_target, backend_node_id=int(node["backendNodeId"]))
    finally:
        await session.detach()


async def framed_element_ref(page: Page, locator: Locator, page_target: str) -> ElementRef:
    """The identity of the one element ``locator`` names, in whichever frame of the page it is.

    An element of an out-of-process iframe belongs to that frame's own CDP target; one of an in-process
    iframe to the page's target, where it is reached through the top window.
    """
    handle = await locator.element_handle()
    frame = await handle.owner_frame()
    await handle.dispose()
    if frame is None or frame == page.main_frame:
        return await element_ref(page, locator, page_target)
    try:
        session = await page.context.new_cdp_session(frame)
    except PlaywrightError:  # an in-process frame: its elements are the page target's
        key = f"__capreplay_{uuid.uuid4().hex}"
        await locator.evaluate("(el, key) => { window.top[key] = el; }", key)
        return await _take(await page.context.new_cdp_session(page), key, page_target)
    target_id = str((await session.send("Target.getTargetInfo"))["targetInfo"]["targetId"])
    key = f"__capreplay_{uuid.uuid4().hex}"
    await locator.evaluate("(el, key) => { window[key] = el; }", key)
    return await _take(session, key, target_id)


async def _take(session: CDPSession, key: str, target_id: str) -> ElementRef:
    """The element parked on the session's window under ``key``, removed from it and described by CDP."""
    try:
        taken = await session.send("Runtime.evaluate", {
            "expression": f"(() => {{ const el = window[{json.dumps(key)}]; delete window[{json.dumps(key)}]; "
                          "return el; })()",
        })  # fmt: skip
        node = (await session.send("DOM.describeNode", {"objectId": taken["result"]["objectId"]}))["node"]
        return ElementRef(target_id=target_id, backend_node_id=int(node["backendNodeId"]))
    finally:
        await session.detach()


async def resolve_ref(page: Page, ref: str, page_target: str) -> Resolution:
    """The element an AI-mode ARIA snapshot's ``[ref=...]`` names, through Playwright's ``aria-ref=`` locator."""
    matches = page.locator(f"aria-ref={ref}")
    try:
        count = await matches.count()
        if count != 1:
            return Unresolved(reason="not_found", detail=f"ref {ref!r} names {count} elements of the page")
        return await framed_element_ref(page, matches, page_target)
    except PlaywrightError as e:
        return Unresolved(reason="not_found", detail=f"ref {ref!r}: {e.message.splitlines()[0]}")


async def element_ref(page: Page, locator: Locator, page_target: str) -> ElementRef:
    """The identity of the one element ``locator`` names in the page's top frame."""
    # Playwright's element handles cannot be passed to CDP, so the element is parked on the window under a
    # fresh key, taken back (and removed) through CDP, and described there. The DOM is not touched.
    key = f"__capreplay_{uuid.uuid4().hex}"
    await locator.evaluate("(el, key) => { window[key] = el; }", key)
    return await _take(await page.context.new_cdp_session(page), key, page_target)


async def call_on_node(page: Page, backend_node_id: int, function: str, argument: object) -> object:
    """The value of ``function`` (a JavaScript function declaration) called on the page target's element
    ``backend_node_id`` as ``this``, with one argument, through a CDP session of its own."""
    session = await page.context.new_cdp_session(page)
    try:
        obj = (await session.send("DOM.resolveNode", {"backendNodeId": backend_node_id}))["object"]
        found = await session.send("Runtime.callFunctionOn", {
            "objectId": obj["objectId"], "arguments": [{"value": argument}], "returnByValue": True,
            "functionDeclaration": function,
        })  # fmt: skip
    finally:
        await session.detach()
    return found["result"].get("value")


async def _pick(
    page: Page, matches: Locator, count: int, occurrence: int | None, page_target: str, what: str
) -> Resolution:
    """One of the ``count`` (at least one) elements ``matches`` names, by ``occurrence``."""
    if occurrence is None and count > 1:
        return Unresolved(reason="ambiguous", detail=f"{count} elements match {what} and no occurrence was given")
    if occurrence is not None and occurrence > count:
        return Unresolved(reason="not_found", detail=f"occurrence {occurrence} of {what}, which matches {count}")
    return await element_ref(page, matches.nth((occurrence or 1) - 1), page_target)


def text_strategies(page: Page, text: str) -> list[tuple[str, Locator]]:
    """The ``text`` format's strategies in the order they are tried, each named."""
    roles = reduce(Locator.or_, [page.get_by_role(role, name=text, exact=True) for role in INTERACTIVE_ROLES])  # type: ignore[arg-type]
    return [
        ("an interactive role's exact name", roles),
        ("get_by_label", page.get_by_label(text, exact=True)),
        ("get_by_placeholder", page.get_by_placeholder(text, exact=True)),
        ("get_by_text", page.get_by_text(text, exact=True)),
    ]


async def deciding_strategy(page: Page, text: str) -> tuple[str, Locator, int] | None:
    """The first strategy with any match for ``text`` (it decides) and its number of matches, or None."""
    for name, matches in text_strategies(page, text):
        count = await matches.count()
        if count:
            return name, matches, count
    return None


async def resolve_text(page: Page, answer: TextAnswer, page_target: str) -> Resolution:
    """The element a visible text, label or placeholder names."""
    decided = await deciding_strategy(page, answer.text)
    if decided is None:
        return Unresolved(reason="not_found", detail=f"no element has the text, label or placeholder {answer.text!r}")
    strategy, matches, count = decided
    return await _pick(page, matches, count, answer.occurrence, page_target, f"{answer.text!r} by {strategy}")


def role_locator(page: Page, role: str, name: str) -> Locator:
    """``get_by_role`` with the exact accessible name."""
    return page.get_by_role(role, name=name, exact=True)  # type: ignore[arg-type]


async def resolve_role(page: Page, answer: RoleAnswer, page_target: str) -> Resolution:
    """The element with an ARIA role and exact accessible name."""
    matches = role_locator(page, answer.role, answer.name)
    what = f"role {answer.role!r} named {answer.name!r}"
    try:
        count = await matches.count()
    except PlaywrightError as e:
        return Unresolved(reason="invalid_selector", detail=f"{what}: {e.message.splitlines()[0]}")
    if not count:
        return Unresolved(reason="not_found", detail=f"no element has {what}")
    return await _pick(page, matches, count, answer.occurrence, page_target, what)


async def resolve_stagehand(stagehand: StagehandAdapter, element_id: str) -> Resolution:
    """The element a Stagehand id names, as Stagehand's act would find it in Stagehand's browser."""
    found = await stagehand.resolve(element_id)
    if found.xpath is None or found.selector is None:
        return Unresolved(reason="not_found", detail=f"id {element_id!r} is not in Stagehand's snapshot")
    if found.matches != 1:
        detail = f"id {element_id!r}: {found.selector} matches {found.matches} elements"
        return Unresolved(reason="ambiguous" if found.matches else "not_found", detail=detail)
    return XPathElement(xpath=found.selector.removeprefix("xpath="))


async def resolve_answer(
    page: Page, representation: Representation, raw: object, views: PageViews, page_target: str,
    stagehand: StagehandAdapter | None = None,
) -> Resolution:
    """What ``raw``, an ACT answer given from ``representation`` of this page session, names.

    ``page_target`` is the CDP target id of the page's tab (:func:`capreplay.browser.launch.page_target_id`);
    ``stagehand`` the adapter whose browser holds the same page (for ``stagehand_id`` answers).
    """
    answer = parse_act_answer(representation.answer_format, raw)
    match answer:
        case Unresolved():
            return answer
        case SelectorAnswer(selector=selector):
            return await resolve_selector(page, selector, page_target)
        case TextAnswer():
            return await resolve_text(page, answer, page_target)
        case RoleAnswer():
            return await resolve_role(page, answer, page_target)
        case IndexAnswer(index=index):
            return resolve_index(views.indexed_dom, index)
        case PointAnswer(x=x, y=y):
            width, height = png_size(views.screenshot_png)
            return resolve_point(x, y, width, height)
        case RefAnswer(ref=ref):
            return await resolve_ref(page, ref, page_target)
        case StagehandIdAnswer(id=element_id):
            if stagehand is None:
                raise AssertionError("a stagehand_id answer needs the page session's Stagehand adapter")
            return await resolve_stagehand(stagehand, element_id)
    raise AssertionError(f"unhandled answer {answer!r}")
