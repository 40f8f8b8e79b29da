"""The gold agent on the committed world snapshot, run once per test session, and the judge that scores it.

The judge (:class:`WorldJudge`) is one judging session for the whole test session. Its model is the fake API
standing in for a careful reader (this machine reaches no real model): it confirms exactly :data:`TRUE_CLAIMS`,
the world's model-decided claims as they read with the values the fixture pages show, written here by hand from
the world's data, never from an answer: a gold agent that read another month would see its claim refused.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Coroutine
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any, Self, TypeVar

from capreplay.agents.run import agent_spec, execute_run, new_run_info, start_agent_run
from capreplay.judge.episode import Judge, judge_episode
from capreplay.judge.ground import Grounding
from capreplay.judge.verdict import EpisodeVerdict
from capreplay.llm import make_client
from capreplay.llm.messages import ModelSettings
from capreplay.models.episode import AgentRunInfo, EpisodeRecord
from capreplay.models.rubric import ClaimOnPage
from capreplay.models.workflow import Workflows, WorkflowTask
from capreplay.runs.tasks_file import load_tasks_file
from capreplay.testing.fake_llm import FakeLLM, Received
from tests.support.paths import ROOT

TASKS_FILE = ROOT / "tasks.json"
SESSION_TIMEOUT_S = 900.0
"""The longest one judging (or opening or closing the judging session) may take."""
T = TypeVar("T")


def world_workflows() -> tuple[Workflows, Path]:
    """The workflows of the repository's tasks file, one repeat, and the world snapshot they name."""
    tasks = load_tasks_file(TASKS_FILE)
    assert tasks.workflows is not None, "tasks.json has no workflows"
    workflows = tasks.workflows.model_copy(update={"repeats": 1})
    return workflows, tasks.snapshot_path(workflows.snapshot, TASKS_FILE)


def gold_run_info(run_dir: Path) -> AgentRunInfo:
    """Plan (write run.json of) a gold run of every world task, once, in ``run_dir``."""
    workflows, snapshot = world_workflows()
    specs = {"gold": agent_spec("gold", workflows, TASKS_FILE)}
    return start_agent_run(run_dir, new_run_info("gold", None, TASKS_FILE, workflows, snapshot, ["gold"], specs))


def local_gold_run(run_dir: Path, *, browsers: int = 2) -> None:
    """A gold run of every world task on this machine, ``browsers`` at once, recorded in ``run_dir``."""
    workflows, snapshot = world_workflows()
    specs = {"gold": agent_spec("gold", workflows, TASKS_FILE)}
    info = gold_run_info(run_dir)
    asyncio.run(execute_run(snapshot, info, workflows, specs, run_dir, browsers=browsers))


TRUE_CLAIMS = frozenset({
    # Kell Valley's monthly rainfall: 182 141 150 96 78 84 92 118 139 196 208 221 mm (the region page's chart).
    "In this region's average monthly rainfall figures, Dec is the wettest month.",
    # The Kestrel 2 review's gallery: five photos, the fourth "Frost on the flysheet at 6 am".
    "In this page's photo gallery, the photo at position 4 of 5 shows frost on the flysheet.",
    # Seal Bay Walk's 2025 visitors peak at 7,820 in July (the trail page's bar chart).
    "On this page's monthly visitor figures for 2025, Jul has the most visitors.",
})  # fmt: skip
"""Every claim of the world's rubrics that a model decides, as it reads with the true value: what a careful
reader of the cited page confirms (tests/agents/test_world_gold.py checks no model claim is left out)."""


def model_claim_templates() -> set[str]:
    """The world rubrics' model-decided claims, ``{value}`` unfilled."""
    workflows, _ = world_workflows()
    return {leaf.check.claim for task in workflows.tasks for leaf in task.rubric.leaves()
            if isinstance(leaf.check, ClaimOnPage) and leaf.check.match == "model" and leaf.check.claim}  # fmt: skip


class WorldJudge:
    """One judging session on the world snapshot for the whole test session: the snapshot served, one offline
    browser and the fake reader, held open on an event loop of their own thread, so that every judging of the
    session (the gold run's, the perturbed answers', the Ray run's) renders each cited page once.

    A page's rendering does not depend on the answer that cites it, so sharing them leaves every verdict as a
    judging session of its own would give it (``judge_run`` shares them across a run's episodes the same way).
    """

    def __init__(self, snapshot: Path) -> None:
        self.snapshot = snapshot
        self._true_claims: frozenset[str] = frozenset()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="world-judge", daemon=True)
        self._stack = AsyncExitStack()
        self._fake: FakeLLM | None = None
        self._grounding: Grounding | None = None

    def __enter__(self) -> Self:
        self._thread.start()
        try:
            self._run(self._open())
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *_: object) -> None:
        try:
            self._run(self._stack.aclose())
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=SESSION_TIMEOUT_S)
            self._loop.close()

    def judge(
        self, items: list[tuple[EpisodeRecord, WorkflowTask]], true_claims: frozenset[str], cache: Path
    ) -> list[EpisodeVerdict]:
        """Judge ``items`` in this session with a model client caching in ``cache``; the fake reader holds
        ``true_claims`` only."""
        self._true_claims = true_claims
        return self._run(self._judge(items, cache))

    async def _open(self) -> None:
        self._fake = await self._stack.enter_async_context(FakeLLM(self._read))
        self._grounding = await self._stack.enter_async_context(Grounding(self.snapshot))

    def _read(self, received: Received) -> str:
        holds = any(f"The claim: {claim}\n" in received.prompt for claim in self._true_claims)
        return json.dumps({"holds": holds, "quote": ""})

    async def _judge(self, items: list[tuple[EpisodeRecord, WorkflowTask]], cache: Path) -> list[EpisodeVerdict]:
        assert self._fake is not None and self._grounding is not None
        settings = ModelSettings(model="claude-judge", max_tokens=200, base_url=self._fake.base_url)
        judge = Judge(self._grounding, make_client(settings, cache_dir=cache, api_key="judge-key"))
        return [await judge_episode(record, task, judge) for record, task in items]

    def _run(self, work: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(work, self._loop).result(timeout=SESSION_TIMEOUT_S)
