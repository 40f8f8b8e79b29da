"""One page session of the study: the page loaded once, its views read once, the ground truth of its ACT
tasks resolved on the same load, and every answer about it resolved and scored there.

The views are read before anything else touches the page; ground truth and answers are resolved after,
through CDP and Playwright, neither of which changes the DOM, in the layout the screenshot was taken in
(checked: :mod:`capreplay.study.page.layout`). A task whose ground truth cannot be
resolved stops the session (an ``InputError`` naming the task): it is never scored.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from pathlib import Path

from playwright.async_api import BrowserContext, Page

from capreplay.browser.launch import page_target_id
from capreplay.errors import BrowserError, InputError
from capreplay.models.geometry import Box
from capreplay.models.task import ActTask, ReadTask
from capreplay.study.answers.representable import (
    Representability,
    act_representable,
    aria_node,
    aria_ref,
    read_representable,
)
from capreplay.study.answers.resolve import resolve_answer
from capreplay.study.answers.score import Verdict, score_act, score_read
from capreplay.study.page.element_box import element_box, xpath_box
from capreplay.study.page.elements import ElementRef, Point, Resolution, XPathElement
from capreplay.study.page.extract import StagehandView, capture_views, extract_stagehand
from capreplay.study.page.frameworks import StudyAdapters, study_adapters
from capreplay.study.page.ground_truth import ResolvedTarget, resolve_target
from capreplay.study.page.layout import check_layout, read_layout
from capreplay.study.page.load import SETTLE_MS, open_page_session, served_browser
from capreplay.study.page.stagehand import Located, StagehandAdapter
from capreplay.study.page.views import PageViews
from capreplay.study.records import ActGeometry
from capreplay.study.representations import Representation


@dataclass(frozen=True)
class ActTarget:
    """An ACT task's ground truth on the live page."""

    task: ActTask
    target: ResolvedTarget
    aria_node: str | None
    """The target's own line in an ARIA snapshot, or None (see :func:`.representable.aria_node`)."""
    aria_ref: str | None = None
    """The target's ref in the AI-mode snapshot, or None (see :func:`.representable.aria_ref`)."""
    stagehand: Located | None = None
    """The target in Stagehand's browser: its XPath, and its id in Stagehand's snapshot (if it has one)."""


@dataclass(frozen=True)
class PageSession:
    """A loaded page, its views, and its tasks' ground truth."""

    page: Page
    page_target: str
    """CDP target id of the page's tab."""
    views: PageViews
    act: dict[str, ActTarget]
    """Ground truth by ACT task id, in task order."""
    read: dict[str, ReadTask]
    """READ tasks by id, in task order."""
    stagehand: StagehandAdapter | None
    """The adapter whose browser holds the same page, where Stagehand ids are resolved (None: not started)."""

    def act_representability(self, task_id: str, representation: Representation) -> Representability:
        """Whether ``representation`` lets a model name the task's target."""
        act = self.act[task_id]
        return act_representable(representation, self.views, act.target, act.aria_node, act.aria_ref,
                                 act.stagehand.element_id if act.stagehand else None)  # fmt: skip

    def read_representability(self, task_id: str, representation: Representation) -> Representability:
        """Whether ``representation`` shows the task's answer."""
        return read_representable(representation, self.views, self.read[task_id])

    async def score_act(self, task_id: str, representation: Representation, answer: object) -> Verdict:
        """Resolve an ACT answer given from ``representation`` and score it against the task's target."""
        verdict, _ = await self._resolve_and_score(task_id, representation, answer)
        return verdict

    async def place_act(self, task_id: str, representation: Representation,
                        answer: object) -> tuple[Verdict, ActGeometry]:  # fmt: skip
        """:meth:`score_act`, and where the target is and the answer landed, in the screenshot's layout."""
        verdict, resolution = await self._resolve_and_score(task_id, representation, answer)
        geometry = self.act_geometry(task_id)
        if isinstance(resolution, Point):
            geometry = geometry.model_copy(update={"point": (resolution.x, resolution.y)})
        elif isinstance(resolution, ElementRef | XPathElement):
            geometry = geometry.model_copy(update={"resolved_box": await self._resolved_box(task_id, resolution)})
        return verdict, geometry

    def act_geometry(self, task_id: str) -> ActGeometry:
        """The task's target box in the screenshot's layout, with no answer placed."""
        return ActGeometry(layout=self.views.layouts["screenshot"], target_box=self.act[task_id].target.box)

    async def _resolve_and_score(self, task_id: str, representation: Representation,
                                 answer: object) -> tuple[Verdict, Resolution]:  # fmt: skip
        act = self.act[task_id]
        resolution = await resolve_answer(self.page, representation, answer, self.views, self.page_target,
                                          self.stagehand)  # fmt: skip
        verdict = score_act(resolution, act.target.ref, act.target.box,
                            self.act_representability(task_id, representation),
                            act.stagehand.xpath if act.stagehand else None)  # fmt: skip
        return verdict, resolution

    async def _resolved_box(self, task_id: str, resolution: ElementRef | XPathElement) -> Box | None:
        act = self.act[task_id]
        truth_xpath = act.stagehand.xpath if act.stagehand else None
        if resolution == act.target.ref or (isinstance(resolution, XPathElement) and resolution.xpath == truth_xpath):
            return act.target.box  # the target itself: the very box it was scored against
        if isinstance(resolution, XPathElement):
            return await xpath_box(self.page, resolution.xpath)
        return await element_box(self.page, resolution, self.page_target)

    def score_read(self, task_id: str, representation: Representation, answer: object) -> Verdict:
        """Score a READ answer given from ``representation``."""
        task = self.read[task_id]
        return score_read(answer, task.answer, task.aliases, self.read_representability(task_id, representation))


async def ground_truth(page: Page, task: ActTask, stagehand: StagehandAdapter | None) -> ActTarget:
    """The task's target on the loaded page and in Stagehand's browser; an ``InputError`` naming the task if its
    chain does not resolve."""
    try:
        target = await resolve_target(page, task.target)
    except InputError as e:
        raise InputError(f"{e.message} on {page.url}", f"task {task.id}") from e
    located = await stagehand.xpath_of(task.target) if stagehand is not None else None
    return ActTarget(task, target, await aria_node(page, target), stagehand=located)


async def with_aria_refs(page: Page, views: PageViews, targets: dict[str, ActTarget]) -> dict[str, ActTarget]:
    """``targets`` with their refs in the AI-mode snapshot the views hold.

    Any other ARIA snapshot taken since (the default-mode ones of :func:`aria_node`) forgets the refs, so
    the AI-mode snapshot is taken again first; it must come out as the views hold it, or the refs a model
    was shown would not be the page's.
    """
    if not targets:  # nothing to find a ref for: the snapshot need not be taken again
        return targets
    if await page.aria_snapshot(mode="ai") != views.aria_ai:
        raise BrowserError("the AI-mode ARIA snapshot changed during the page session", page.url)
    page_target = await page_target_id(page)
    return {tid: replace(act, aria_ref=await aria_ref(page, views, act.target, page_target))
            for tid, act in targets.items()}  # fmt: skip


@asynccontextmanager
async def page_session(
    context: BrowserContext, adapters: StudyAdapters, url: str, tasks: Sequence[ReadTask | ActTask], *,
    audit: bool = False, settle_ms: int = SETTLE_MS,
) -> AsyncIterator[PageSession]:
    """Load ``url`` in a new tab (and in Stagehand's browser), read its views (``audit``: with browser-use's
    agent-default serialization too), resolve the ground truth of ``tasks``; the tab and Stagehand's browser
    close on exit."""
    page, stagehand = await _open_both(context, adapters, url, settle_ms)
    try:
        views = await capture_views(page, adapters, stagehand, audit=audit)
        act = {t.id: await ground_truth(page, t, adapters.stagehand) for t in tasks if isinstance(t, ActTask)}
        act = await with_aria_refs(page, views, act)
        check_layout(views.layouts["screenshot"], await read_layout(page), "while resolving ground truth", page.url)
        read = {t.id: t for t in tasks if isinstance(t, ReadTask)}
        yield PageSession(page, await page_target_id(page), views, act, read, adapters.stagehand)
    finally:
        await page.close()
        await _close_stagehand(adapters)


async def _close_stagehand(adapters: StudyAdapters) -> None:
    if adapters.stagehand is not None:
        await adapters.stagehand.close_page()


async def _open_both(context: BrowserContext, adapters: StudyAdapters, url: str,
                     settle_ms: int) -> tuple[Page, StagehandView | None]:  # fmt: skip
    """The page loaded in the study's browser and, at the same time, in Stagehand's (which reads its snapshot).

    The two loads overlap, as neither waits on the other (Stagehand's requests count towards the server's quiet
    signal, so the study's page settles after both have gone quiet); the study's views are read once both
    are done, so its views and ground truth follow each other with nothing slow between them, on a page that
    changes as time passes too. If either fails, whatever the other opened is closed; the study page's own
    error is the one raised (it names why the page does not load).
    """
    if adapters.stagehand is None:
        return await open_page_session(context, url, settle_ms), None
    page, stagehand = await asyncio.gather(open_page_session(context, url, settle_ms),
                                           extract_stagehand(url, adapters, settle_ms),
                                           return_exceptions=True)  # fmt: skip
    if isinstance(page, Page) and isinstance(stagehand, StagehandView):
        return page, stagehand
    try:
        if isinstance(page, Page):
            await page.close()
        await _close_stagehand(adapters)
    finally:
        error = page if isinstance(page, BaseException) else stagehand
        assert isinstance(error, BaseException)
        raise error


@asynccontextmanager
async def study_browser(
    snapshot: Path, *, stagehand: bool = True
) -> AsyncIterator[tuple[BrowserContext, StudyAdapters]]:
    """The snapshot served offline, a browser on it with CDP open, and the adapters (Stagehand's if ``stagehand``:
    without it, no session reads Stagehand's snapshot)."""
    async with (served_browser(snapshot, cdp=True) as (context, settings),
                study_adapters(settings, stagehand=stagehand) as adapters):
        yield context, adapters
