"""Validation on the committed world snapshot: the gold agent solves every workflow task and the judge scores it
1.0; one wrong value fails only leaves that cite it; a cited URL the snapshot lacks fails the claims on it.

The gold run is made once for the module (two browsers on one server), through the real harness and agent
subprocess; the perturbed answers are judged in one judging session on the same snapshot.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from capreplay.agents.run import agent_spec, execute_run, new_run_info, start_agent_run
from capreplay.judge.episode import Judge, judge_episode
from capreplay.judge.fields import parse_number
from capreplay.judge.ground import Grounding
from capreplay.llm import make_client
from capreplay.llm.messages import ModelSettings
from capreplay.models.episode import EpisodeRecord
from capreplay.models.rubric import ClaimOnPage, check_fields
from capreplay.models.verdict import EpisodeVerdict
from capreplay.models.workflow import LIST_TYPES, Workflows, WorkflowTask
from capreplay.runs.episode_log import read_episodes
from capreplay.runs.tasks_file import load_tasks_file
from capreplay.testing.fake_llm import FakeLLM, Received

pytestmark = pytest.mark.browser  # every test runs the gold agent in a replayed Chromium or judges with grounding

ROOT = Path(__file__).resolve().parents[2]
TASKS_FILE = ROOT / "tasks.json"
STRAY = "https://{host}/capreplay-never-captured"


def _workflows() -> tuple[Workflows, Path]:
    tasks = load_tasks_file(TASKS_FILE)
    assert tasks.workflows is not None, "tasks.json has no workflows"
    return tasks.workflows, tasks.snapshot_path(tasks.workflows.snapshot, TASKS_FILE)


@pytest.fixture(scope="module")
def gold_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, EpisodeRecord]:
    workflows, snapshot = _workflows()
    workflows = workflows.model_copy(update={"repeats": 1})
    run_dir = tmp_path_factory.mktemp("gold") / "runs" / "gold"
    specs = {"gold": agent_spec("gold", workflows, TASKS_FILE)}
    info = start_agent_run(run_dir, new_run_info("gold", None, TASKS_FILE, workflows, snapshot, ["gold"], specs))
    asyncio.run(execute_run(snapshot, info, workflows, specs, run_dir, browsers=2))
    return {r.key.task: r for r in read_episodes(run_dir)}


def _model_claims(gold_run: dict[str, EpisodeRecord]) -> set[str]:
    """Every model-decided claim as it reads with the gold value: the claims a careful reader would confirm."""
    workflows, _ = _workflows()
    claims = set()
    for task in workflows.tasks:
        gold = json.loads(gold_run[task.id].answer or "{}")
        for leaf in task.rubric.leaves():
            if isinstance(leaf.check, ClaimOnPage) and leaf.check.match == "model" and leaf.check.claim:
                claims.add(leaf.check.claim.replace("{value}", str(gold[leaf.check.field])))
    return claims


def _judge_all(
    snapshot: Path, items: list[tuple[EpisodeRecord, WorkflowTask]], true_claims: set[str], cache: Path
) -> list[EpisodeVerdict]:
    """Judge on the snapshot. The judge's model is the fake API standing in for a careful reader: it confirms
    exactly the claims made with the gold values (this machine reaches no real model)."""

    def read(received: Received) -> str:
        holds = any(f"The claim: {claim}\n" in received.prompt for claim in true_claims)
        return json.dumps({"holds": holds, "quote": ""})

    async def go() -> list[EpisodeVerdict]:
        async with FakeLLM(read) as fake, Grounding(snapshot) as grounding:
            settings = ModelSettings(model="claude-judge", max_tokens=200, base_url=fake.base_url)
            judge = Judge(grounding, make_client(settings, cache_dir=cache, api_key="judge-key"))
            return [await judge_episode(record, task, judge) for record, task in items]

    return asyncio.run(go())


def _with_answer(record: EpisodeRecord, fields: dict[str, Any]) -> EpisodeRecord:
    return record.model_copy(update={"answer": json.dumps(fields)})


def test_the_gold_agent_answers_every_task_within_the_snapshot(gold_run: dict[str, EpisodeRecord]) -> None:
    workflows, _ = _workflows()
    assert set(gold_run) == {t.id for t in workflows.tasks}
    for task_id, record in gold_run.items():
        assert record.status == "answered", f"{task_id}: {record.error}"
        assert record.off_snapshot == [], f"{task_id} left the snapshot: {record.off_snapshot[:3]}"
        assert len(record.steps) == len(workflows.task(task_id).gold_path)


def _wrong(value: Any, kind: str) -> Any:
    if kind == "number":
        number = parse_number(value)
        assert number is not None
        return number * 3 + 1000
    if kind in LIST_TYPES:
        return ["Zzyzx Nowhere 0000", *value[1:]]
    return "Zzyzx Nowhere 0000"


@dataclass(frozen=True)
class Case:
    """One answer to judge, and what it changes from the gold answer."""

    task: WorkflowTask
    record: EpisodeRecord
    kind: str
    """gold, wrong (one value replaced) or stray (one provenance URL outside the snapshot)."""
    output: str = ""


def _cases(gold_run: dict[str, EpisodeRecord]) -> list[Case]:
    workflows, _ = _workflows()
    cases = []
    for task in workflows.tasks:
        record = gold_run[task.id]
        gold = json.loads(record.answer or "{}")
        cases.append(Case(task, record, "gold"))
        for out in task.outputs:
            if out.name not in gold:
                continue
            if out.role != "provenance_url" and out.type != "url_list":
                wrong = {**gold, out.name: _wrong(gold[out.name], out.type)}
                cases.append(Case(task, _with_answer(record, wrong), "wrong", out.name))
            if out.type == "url":
                stray = {**gold, out.name: STRAY.format(host=task.sites[0])}
                cases.append(Case(task, _with_answer(record, stray), "stray", out.name))
    return cases


@pytest.fixture(scope="module")
def judged(
    gold_run: dict[str, EpisodeRecord], tmp_path_factory: pytest.TempPathFactory
) -> list[tuple[Case, EpisodeVerdict]]:
    """Every case judged in one session (each cited page rendered once)."""
    _, snapshot = _workflows()
    cases = _cases(gold_run)
    cache = tmp_path_factory.mktemp("judge-cache")
    verdicts = _judge_all(snapshot, [(c.record, c.task) for c in cases], _model_claims(gold_run), cache)
    return list(zip(cases, verdicts, strict=True))


def test_every_gold_answer_scores_one(judged: list[tuple[Case, EpisodeVerdict]]) -> None:
    gold = [(case, verdict) for case, verdict in judged if case.kind == "gold"]
    assert len(gold) == len(_workflows()[0].tasks)
    for case, verdict in gold:
        failed = [f"{v.node}: {v.reason}" for v in verdict.leaves if not v.passed]
        assert verdict.scored and verdict.score == 1.0 and verdict.passed, f"{case.task.id}: {failed}"


def test_one_wrong_value_fails_only_leaves_that_cite_it(judged: list[tuple[Case, EpisodeVerdict]]) -> None:
    wrong = [(case, verdict) for case, verdict in judged if case.kind == "wrong"]
    assert wrong
    for case, verdict in wrong:
        name = case.output
        citing = {leaf.id for leaf in case.task.rubric.leaves() if leaf.check and name in check_fields(leaf.check)}
        failed = {v.node for v in verdict.leaves if not v.passed}
        assert failed <= citing, f"{case.task.id}/{name}: leaves not citing it failed: {sorted(failed - citing)}"
        if citing:
            assert failed, f"{case.task.id}/{name}: a wrong value passed every leaf citing it"
            assert verdict.score is not None and verdict.score < 1.0


def test_a_cited_url_outside_the_snapshot_fails_its_claims(judged: list[tuple[Case, EpisodeVerdict]]) -> None:
    stray = [(case, verdict) for case, verdict in judged if case.kind == "stray"]
    some_claims = False
    for case, verdict in stray:
        claims = {
            leaf.id
            for leaf in case.task.rubric.leaves()
            if isinstance(leaf.check, ClaimOnPage) and leaf.check.url_field == case.output
        }
        some_claims |= bool(claims)
        failed = {v.node for v in verdict.leaves if not v.passed}
        assert claims <= failed, (
            f"{case.task.id}: claims on a URL outside the snapshot passed: {sorted(claims - failed)}"
        )
        for v in verdict.leaves:
            if v.node in claims:
                assert "not in the snapshot" in v.reason
    assert some_claims, "no task has a claim_on_page leaf"
