"""The gold agent on the committed world snapshot, run once per test session, and the judge that scores it.

The judge's model is the fake API standing in for a careful reader: it confirms exactly the claims made with
the gold values (this machine reaches no real model).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from capreplay.agents.run import agent_spec, execute_run, new_run_info, start_agent_run
from capreplay.judge.episode import Judge, judge_episode
from capreplay.judge.ground import Grounding
from capreplay.llm import make_client
from capreplay.llm.messages import ModelSettings
from capreplay.models.episode import AgentRunInfo, EpisodeRecord
from capreplay.models.rubric import ClaimOnPage
from capreplay.models.verdict import EpisodeVerdict
from capreplay.models.workflow import Workflows, WorkflowTask
from capreplay.runs.tasks_file import load_tasks_file
from capreplay.testing.fake_llm import FakeLLM, Received
from tests.support.paths import ROOT

TASKS_FILE = ROOT / "tasks.json"


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


def model_claims(gold_run: dict[str, EpisodeRecord]) -> set[str]:
    """Every model-decided claim as it reads with the gold value: the claims a careful reader would confirm."""
    workflows, _ = world_workflows()
    claims = set()
    for task in workflows.tasks:
        gold = json.loads(gold_run[task.id].answer or "{}")
        for leaf in task.rubric.leaves():
            if isinstance(leaf.check, ClaimOnPage) and leaf.check.match == "model" and leaf.check.claim:
                claims.add(leaf.check.claim.replace("{value}", str(gold[leaf.check.field])))
    return claims


def judge_all(
    snapshot: Path, items: list[tuple[EpisodeRecord, WorkflowTask]], true_claims: set[str], cache: Path
) -> list[EpisodeVerdict]:
    """Judge ``items`` on the snapshot in one grounding session; the fake reader holds ``true_claims`` only."""

    def read(received: Received) -> str:
        holds = any(f"The claim: {claim}\n" in received.prompt for claim in true_claims)
        return json.dumps({"holds": holds, "quote": ""})

    async def go() -> list[EpisodeVerdict]:
        async with FakeLLM(read) as fake, Grounding(snapshot) as grounding:
            settings = ModelSettings(model="claude-judge", max_tokens=200, base_url=fake.base_url)
            judge = Judge(grounding, make_client(settings, cache_dir=cache, api_key="judge-key"))
            return [await judge_episode(record, task, judge) for record, task in items]

    return asyncio.run(go())
