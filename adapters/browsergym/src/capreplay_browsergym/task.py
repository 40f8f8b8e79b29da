"""A capreplay workflow task as a BrowserGym task: set up on the replayed snapshot, validated by capreplay's judge."""

from __future__ import annotations

import contextlib
import math
from typing import Any

import playwright.sync_api
from browsergym.core.task import AbstractBrowserTask
from capreplay.browser.launch import ANIMATION_RATE, LOCALE, TIMEZONE, VIEWPORT
from capreplay.models.workflow import WorkflowTask

from capreplay_browsergym.episode import Episode
from capreplay_browsergym.records import episode_end, goal_text, off_snapshot

GOTO_TIMEOUT_MS = 30_000
SETTLE_TIMEOUT_MS = 5_000
"""After loading the start URL, how long to wait for the network to go quiet (as capreplay's ``settle`` waits)."""


class CapreplayTask(AbstractBrowserTask):
    """One workflow task of a tasks file, run on the snapshot the environment serves.

    ``setup`` adds capreplay's init scripts (the deterministic clock and seeded randomness of every capreplay
    browser) to the context, opens the start URL and returns the goal; ``validate`` ends the episode when the agent
    has sent its answer to the user (or reported the task infeasible) and scores it with capreplay's judge: the
    reward is the verdict's root score, and ``info`` holds the verdict and every request the episode made.
    """

    def __init__(self, seed: int | None, task: WorkflowTask, episode: Episode, init_scripts: list[str]) -> None:
        """``episode`` and ``init_scripts`` come from :class:`capreplay_browsergym.env.CapreplayEnv`'s reset."""
        super().__init__(seed if seed is not None else 0)
        self.workflow = task
        self.episode = episode
        self.init_scripts = init_scripts
        # capreplay's browser: the viewport, locale and timezone every capreplay browser has.
        self.viewport = dict(VIEWPORT)
        self.locale = LOCALE
        self.timezone_id = TIMEZONE
        # BrowserGym's default of 1000 ms per Playwright call is for live sites; replayed pages answer at once.
        self.slow_mo = 0
        self.timeout = 10_000
        self._cdp_sessions: list[playwright.sync_api.CDPSession] = []

    @classmethod
    def get_task_id(cls) -> str:
        """BrowserGym's name of the task family."""
        return "capreplay"

    def setup(self, page: playwright.sync_api.Page) -> tuple[str, dict[str, Any]]:
        """Prepare the browser as capreplay prepares its own, open the start URL, and return the goal."""
        context = page.context
        for script in self.init_scripts:
            context.add_init_script(script)
        for existing in context.pages:
            self._settle_animations(existing)
        context.on("page", self._settle_animations)
        context.on("requestfailed", self._request_failed)
        # The resolver rules leave every other host unresolvable; but when a page's own navigation fails to resolve,
        # Chromium's error page sends real DNS queries (its DNS probe), which only a profile preference stops, and
        # BrowserGym's browser has no profile of ours. So a request to another host is refused before it is resolved.
        context.route(off_snapshot(self.episode.hosts), self._refuse)
        page.goto(self.workflow.start_url, wait_until="load", timeout=GOTO_TIMEOUT_MS)
        with contextlib.suppress(playwright.sync_api.TimeoutError):  # a page that never goes quiet is taken as it is
            page.wait_for_load_state("networkidle", timeout=SETTLE_TIMEOUT_MS)
        info = {
            "task": self.workflow.id,
            "episode": self.episode.key.id(),
            "chromium_args": self.episode.serve.chromium_args,
        }
        return goal_text(self.workflow), info

    def validate(
        self, page: playwright.sync_api.Page, chat_messages: list[dict[str, Any]]
    ) -> tuple[float, bool, str, dict[str, Any]]:
        """Reward 0 while the episode goes on; once the agent has answered, the judge's root score and the verdict
        (NaN when the judge could not score the answer)."""
        if not self.episode.finished:
            end = episode_end(chat_messages)
            if end is None:
                return 0.0, False, "", {}
            if end.how == "answered":
                self.episode.finish("answered", end.text, None, page.url)
            else:
                self.episode.finish("failed", None, f"the agent reported the task infeasible: {end.text}", page.url)
        verdict = self.episode.verdict
        assert verdict is not None
        # An answer the judge could not score (it needs the judge's model and no key is set) is not a failure:
        # its reward is NaN, and the verdict says why.
        reward = float(verdict.score) if verdict.scored and verdict.score is not None else math.nan
        return reward, True, "", self.episode.task_info()

    def teardown(self) -> None:
        """An episode left before the agent answered is recorded (and judged) as failed."""
        if not self.episode.finished:
            self.episode.finish("failed", None, "the episode ended before the agent answered", None)
        self._cdp_sessions.clear()

    def _refuse(self, route: playwright.sync_api.Route) -> None:
        self.episode.on_refused(route.request.method, route.request.url)
        route.abort("blockedbyclient")

    def _request_failed(self, request: playwright.sync_api.Request) -> None:
        self.episode.on_request_failed(request.method, request.url, request.failure)

    def _settle_animations(self, page: playwright.sync_api.Page) -> None:
        # As capreplay's browsers: CSS animations run ANIMATION_RATE times faster, so a screenshot shows them ended.
        # The session is held for the page's life: a detached session's playback rate is forgotten.
        try:
            session = page.context.new_cdp_session(page)
            session.send("Animation.setPlaybackRate", {"playbackRate": ANIMATION_RATE})
        except playwright.sync_api.Error:
            return  # the page closed before it could be reached
        self._cdp_sessions.append(session)
