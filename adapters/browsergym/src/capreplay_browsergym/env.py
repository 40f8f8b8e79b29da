"""BrowserGym's environment on a capreplay snapshot: its Chromium launched offline, its episodes recorded and judged.

:class:`CapreplayEnv` is BrowserGym's :class:`~browsergym.core.env.BrowserEnv` with three additions:

- the replay server runs with the environment (:class:`~capreplay_browsergym.service.ReplayService`, started at the
  first ``reset``, stopped by ``close``), and every episode gets ports of its own on it;
- BrowserGym's Chromium, and the one of its chat window, are launched with capreplay's Chromium
  (:func:`capreplay.browser.launch.require_chromium`; nothing is downloaded) and the arguments of the served
  snapshot (``capreplay serve``'s ``chromium_args``: every snapshot host mapped to the episode's ports, every other
  host unresolvable), plus capreplay's settled-rendering flags. ``BrowserEnv.reset`` passes ``args`` to Playwright's
  ``launch`` itself, so they cannot come through ``pw_chromium_kwargs`` (Playwright would get ``args`` twice):
  the environment adds them to the launch call during its ``reset`` instead;
- every action is kept as a step of the episode's record (see :mod:`capreplay_browsergym.episode`).
"""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import playwright.sync_api
from browsergym.core import _get_global_playwright
from browsergym.core.env import BrowserEnv
from browsergym.core.registration import frozen_partial
from capreplay.browser.flags import replay_endpoints
from capreplay.browser.launch import BrowserSettings, launch_parts, require_chromium
from capreplay.llm.messages import ModelSettings
from capreplay.models.episode import EpisodeKey
from capreplay.models.workflow import WorkflowTask
from capreplay.util.cache_folder import cache_dir

from capreplay_browsergym.episode import AGENT, Episode, Results
from capreplay_browsergym.service import ReplayService
from capreplay_browsergym.task import CapreplayTask

CONTEXT_DEFAULTS: dict[str, Any] = {"device_scale_factor": 1, "service_workers": "block", "reduced_motion": "reduce"}
"""Browser-context options every capreplay browser has (viewport, locale and timezone come from the task)."""


def launch_args(capreplay_args: list[str], browsergym_args: list[str]) -> list[str]:
    """capreplay's arguments, then BrowserGym's own, less its ``--disable-features``.

    Chromium reads only the last ``--disable-features``, so BrowserGym's (which turns overlay scrollbars off so that
    screenshots show scrollbars) would replace the list Playwright passes, which every capreplay browser has; and
    capreplay's arguments hide scrollbars anyway (``--hide-scrollbars``), so screenshots look as in ``capreplay run``.
    """
    kept = [arg for arg in browsergym_args if not arg.startswith("--disable-features=")]
    return [*capreplay_args, *(arg for arg in kept if arg not in capreplay_args)]


@contextlib.contextmanager
def launching_with(chromium: playwright.sync_api.BrowserType, executable: str, args: list[str]) -> Iterator[None]:
    """While the block runs, every ``chromium.launch`` uses ``executable`` and gets ``args`` (:func:`launch_args`)."""
    original = chromium.launch

    def launch(**kwargs: Any) -> playwright.sync_api.Browser:
        kwargs["executable_path"] = kwargs.get("executable_path") or executable
        kwargs["args"] = launch_args(args, list(kwargs.get("args") or []))
        return original(**kwargs)

    chromium.launch = launch  # type: ignore[method-assign]
    try:
        yield
    finally:
        del chromium.launch  # the instance attribute goes; the class's method shows again


class CapreplayEnv(BrowserEnv):
    """A BrowserGym environment of one capreplay workflow task on its snapshot."""

    def __init__(
        self,
        task: WorkflowTask,
        snapshot: str | Path,
        judge_model: ModelSettings | Mapping[str, Any],
        results_dir: str | Path | None = None,
        judge_cache: str | Path | None = None,
        pw_context_kwargs: Mapping[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        """``task`` on ``snapshot``; ``judge_model`` is the tasks file's judge model.

        ``results_dir``: append every episode's record and verdict there (``episodes.jsonl``, ``verdicts.jsonl``).
        ``judge_cache``: the judge's response cache (default: ``<results_dir>/judge-cache``, else capreplay's cache
        folder). Other arguments are BrowserEnv's.
        """
        context = {**CONTEXT_DEFAULTS, **(pw_context_kwargs or {})}
        super().__init__(frozen_partial(CapreplayTask, task=task), pw_context_kwargs=context, **kwargs)
        self.workflow = task
        self.snapshot = Path(snapshot)
        self.judge_model = ModelSettings.model_validate(judge_model)
        self.results_dir = Path(results_dir) if results_dir is not None else None
        if judge_cache is not None:
            self.judge_cache = Path(judge_cache)
        else:
            self.judge_cache = self.results_dir / "judge-cache" if self.results_dir else cache_dir() / "judge-cache"
        self.service: ReplayService | None = None
        self.episode: Episode | None = None
        self._results: Results | None = None
        self._repeats: Counter[str] = Counter()

    def reset(self, seed: int | None = None, *args: Any, **kwargs: Any) -> tuple[dict[str, Any], dict[str, Any]]:
        """A new episode: ports of its own on the replay server, a fresh offline Chromium, the start URL open."""
        service = self._started()
        serve = service.listen()
        try:
            manifest = service.server.store.manifest
            parts = launch_parts(BrowserSettings(serve.chromium_args, manifest.frozen_time, manifest.random_seed))
            ports = {"http_port": serve.http_port, "https_port": serve.https_port}
            hosts = frozenset(host for host, _, _ in replay_endpoints(service.server.store.origins(), **ports))
            self.episode = Episode(task=self.workflow, service=service, serve=serve, key=self._next_key(),
                                   hosts=hosts, results=self._results)  # fmt: skip
            self.task_kwargs["episode"] = self.episode
            self.task_kwargs["init_scripts"] = parts.init_scripts
            pw = _get_global_playwright()
            with launching_with(pw.chromium, require_chromium(), parts.args):
                return super().reset(seed, *args, **kwargs)  # type: ignore[no-any-return]
        except BaseException:
            service.take_requests(serve)  # closes the episode's ports; its record, if any, is left without requests
            raise

    def _task_validate(self) -> tuple[float, bool, str, dict[str, Any]]:
        # Called by BrowserEnv.post_step after the action ran and the page loaded, before the task's validate:
        # the step is recorded first, so an episode that ends with this action has it in its record.
        if self.episode is not None and not self.episode.finished:
            self.episode.add_step(self.last_action, self.page.url, self.last_action_error)
        return super()._task_validate()  # type: ignore[no-any-return]

    def close(self) -> None:
        """Tear down the episode (recorded if it had not ended), the browsers, the results files and the server."""
        try:
            super().close()
        finally:
            if self._results is not None:
                self._results.close()
                self._results = None
            if self.service is not None:
                self.service.close()
                self.service = None

    def _started(self) -> ReplayService:
        if self.service is None:
            service = ReplayService(self.snapshot, self.judge_model, self.judge_cache)
            service.start()
            self.service = service
            if self.results_dir is not None:
                self._results = Results(self.results_dir)
        return self.service

    def _next_key(self) -> EpisodeKey:
        task = self.workflow.id
        # The episode before may not be written yet (reset tears it down after this key is made): count both ways.
        repeat = max(self._repeats[task], self._results.next_repeat(task) if self._results is not None else 0)
        self._repeats[task] = repeat + 1
        return EpisodeKey(repeat=repeat, task=task, agent=AGENT)
