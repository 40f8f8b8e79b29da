"""Validation on the committed world snapshot: the gold agent solves every workflow task and the judge scores it
1.0; one wrong value fails only leaves that cite it; a cited URL the snapshot lacks fails the claims on it.

The gold run is made once for the test session (two browsers on one server, :mod:`tests.support.world_gold`),
through the real harness and agent subprocess; the gold and the perturbed answers are judged in the test
session's one judging session on the same snapshot (``world_judge``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from capreplay.judge.fields import parse_number
from capreplay.judge.verdict import EpisodeVerdict
from capreplay.models.episode import EpisodeRecord
from capreplay.models.rubric import ClaimOnPage, check_fields
from capreplay.models.workflow import LIST_TYPES, WorkflowTask
from capreplay.runs.episode_log import read_episodes
from tests.support.world_gold import TRUE_CLAIMS, WorldJudge, model_claim_templates, world_workflows

pytestmark = pytest.mark.browser  # every test runs the gold agent in a replayed Chromium or judges with grounding

STRAY = "https://{host}/capreplay-never-captured"


@pytest.fixture(scope="module")
def gold_run(world_gold_run: Path) -> dict[str, EpisodeRecord]:
    return {r.key.task: r for r in read_episodes(world_gold_run)}


def _with_answer(record: EpisodeRecord, fields: dict[str, Any]) -> EpisodeRecord:
    return record.model_copy(update={"answer": json.dumps(fields)})


def test_the_gold_agent_answers_every_task_within_the_snapshot(gold_run: dict[str, EpisodeRecord]) -> None:
    workflows, _ = world_workflows()
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
    """wrong (one value replaced) or stray (one provenance URL outside the snapshot)."""
    output: str = ""


def _cases(gold_run: dict[str, EpisodeRecord]) -> list[Case]:
    workflows, _ = world_workflows()
    cases = []
    for task in workflows.tasks:
        record = gold_run[task.id]
        gold = json.loads(record.answer or "{}")
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
    gold_run: dict[str, EpisodeRecord],
    world_judge: WorldJudge,
    world_gold_verdicts: dict[str, EpisodeVerdict],
    tmp_path_factory: pytest.TempPathFactory,
) -> list[tuple[Case, EpisodeVerdict]]:
    """Every perturbed case judged in the session's judging session, after the gold answers: the pages they
    cite are rendered already (a stray URL is never rendered)."""
    cases = _cases(gold_run)
    cache = tmp_path_factory.mktemp("judge-cache")
    verdicts = world_judge.judge([(c.record, c.task) for c in cases], TRUE_CLAIMS, cache)
    return list(zip(cases, verdicts, strict=True))


def test_every_gold_answer_scores_one(world_gold_verdicts: dict[str, EpisodeVerdict]) -> None:
    assert set(world_gold_verdicts) == {t.id for t in world_workflows()[0].tasks}
    for task_id, verdict in world_gold_verdicts.items():
        failed = [f"{v.node}: {v.reason}" for v in verdict.leaves if not v.passed]
        assert verdict.scored and verdict.score == 1.0 and verdict.passed, f"{task_id}: {failed}"


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


def test_every_model_claim_of_the_world_has_its_true_reading_written_by_hand() -> None:
    templates = model_claim_templates()
    assert len(templates) == len(TRUE_CLAIMS) == 3
    for template in templates:
        head, _, tail = template.partition("{value}")
        assert sum(c.startswith(head) and c.endswith(tail) for c in TRUE_CLAIMS) == 1, template
