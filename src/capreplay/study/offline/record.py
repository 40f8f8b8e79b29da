"""Recording what an ACT target is, in a page load of its own: the data the self-test's expectations come from.

The page is loaded the way the study loads it and nothing else is attached (no browser-use), so the layout
is the screenshot's. The chain is followed once through CDP (it is the task's definition, and only CDP
enters closed shadow roots); everything the self-test later expects is then measured through Playwright's
element handles and locators and the page's own scripts, not through the scorer's CDP identities: the box
(``ElementHandle.bounding_box``; behind a closed shadow root, which no page script reaches, CDP's box model),
which match of a name or role is the target (``Array.indexOf`` over the
locator's elements, in the page), and which ref of the AI-mode snapshot names it (``===`` in its frame).
"""

from __future__ import annotations

from collections.abc import Sequence

from playwright.async_api import ElementHandle, Error as PlaywrightError, Frame, Locator, Page

from capreplay.models.geometry import Box
from capreplay.models.task import ActTask, NameMatch, RoleMatch, TargetRecord
from capreplay.study.answers.resolve import role_locator, text_strategies
from capreplay.study.page.ground_truth import ResolvedTarget
from capreplay.study.page.layout import read_layout
from capreplay.study.representations.accessibility_tree import parse_node
from capreplay.study.representations.aria_ai import refs_named

REF_TRIES = 400
"""How many refs of the AI-mode snapshot are tried before the record says none names the target."""


async def target_handle(page: Page, chain: Sequence[str], target: ResolvedTarget) -> ElementHandle | None:
    """The target's Playwright handle, hop by hop through iframes and open shadow roots; None behind a closed one."""
    if "shadow_closed" in target.boundaries:
        return None
    scope: Frame | ElementHandle = page.main_frame
    for hop, selector in enumerate(chain):
        found = await scope.query_selector_all(selector)
        if len(found) != 1:
            return None
        if hop == len(chain) - 1:
            return found[0]
        frame = await found[0].content_frame()
        scope = frame if frame is not None else found[0]  # a shadow host: Playwright's CSS pierces open roots
    return None


async def _position(matches: Locator, handle: ElementHandle) -> int | None:
    """1-based position of ``handle``'s element among what ``matches`` names, computed in the page; None if absent."""
    try:
        index = int(await matches.evaluate_all("(els, el) => els.indexOf(el)", handle))
    except PlaywrightError:
        return None  # the matches are in another frame than the handle: it is not among them
    return index + 1 if index >= 0 else None


async def name_match(page: Page, name: str, handle: ElementHandle | None) -> NameMatch:
    """How the ``text`` answer format's first strategy with a match finds the target by ``name``."""
    for _, matches in text_strategies(page, name):
        count = await matches.count()
        if count:
            return NameMatch(name=name, matches=count,
                             occurrence=await _position(matches, handle) if handle else None)  # fmt: skip
    return NameMatch(name=name, matches=0, occurrence=None)


async def own_node(page: Page, target: ResolvedTarget, handle: ElementHandle | None) -> RoleMatch | None:
    """The target's own node of the ARIA snapshot (taken in its frame) and how ``get_by_role`` on the page finds it."""
    if handle is None or not target.selector:
        return None
    frame = await handle.owner_frame()
    if frame is None:
        return None
    element = frame.locator(target.selector)
    if await element.count() != 1:
        return None
    lines = (await element.aria_snapshot()).splitlines()
    parsed = parse_node(lines[0].strip()) if lines else None
    if parsed is None or parsed[0] == "text":
        return None
    role, name = parsed
    matches = role_locator(page, role, name)
    count = await matches.count()
    return RoleMatch(role=role, name=name, line=lines[0].strip(), matches=count,
                     occurrence=await _position(matches, handle) if count else None)  # fmt: skip


async def ref_of(page: Page, snapshot: str, handle: ElementHandle | None, role: RoleMatch | None) -> str | None:
    """The ref of the AI-mode ``snapshot`` whose element is ``handle``'s, compared in the element's own frame."""
    if handle is None:
        return None
    frame = await handle.owner_frame()
    candidates = dict.fromkeys([*(refs_named(snapshot, role.role, role.name or None) if role else []),
                                *refs_named(snapshot, None, None)])  # fmt: skip
    for ref in list(candidates)[:REF_TRIES]:
        found = page.locator(f"aria-ref={ref}")
        if await found.count() != 1:
            continue
        other = await found.element_handle()
        try:
            if await other.owner_frame() == frame and await other.evaluate("(a, b) => a === b", handle):
                return ref
        finally:
            await other.dispose()
    return None


async def record_targets(page: Page, targets: Sequence[tuple[ActTask, ResolvedTarget]]) -> dict[str, TargetRecord]:
    """The record of every target of a loaded page, by task id, from its CDP resolution and its Playwright handle.

    The AI-mode snapshot is taken after every default-mode one (each of those makes Playwright forget the refs).
    """
    layout = await read_layout(page)
    partial: dict[str, tuple[ElementHandle | None, TargetRecord]] = {}
    for task, target in targets:
        handle = await target_handle(page, task.target, target)
        box = target.box
        if handle is not None:
            measured = await handle.bounding_box()
            box = Box(**measured) if measured is not None else None
        visible = box.clip(layout.inner_width, layout.inner_height) if box is not None else None
        partial[task.id] = handle, TargetRecord(
            layout=layout,
            boundaries=list(target.boundaries),
            box=box,
            click=(visible.x + visible.width / 2, visible.y + visible.height / 2) if visible else None,
            visible_text=target.visible_name,
            accessible_role=target.ax_role,
            accessible_name=target.ax_name,
            names=[await name_match(page, name, handle) for name in target.names],
            role=await own_node(page, target, handle),
            aria_ref=None,
            xpath=target.xpath,
            stagehand_xpath=target.stagehand_xpath,
            frame_depth=sum(b.startswith("iframe") for b in target.boundaries),
        )
    snapshot = await page.aria_snapshot(mode="ai")
    return {tid: record.model_copy(update={"aria_ref": await ref_of(page, snapshot, handle, record.role)})
            for tid, (handle, record) in partial.items()}  # fmt: skip
