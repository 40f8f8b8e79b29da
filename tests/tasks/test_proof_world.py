"""The proof on the committed world snapshot: a hand-written task is proven, and each way of breaking it is caught.

One gold run through the real harness and agent subprocess proves five tasks: the world's budget-tent as written,
and four copies broken as generated tasks break: a path that leaves the snapshot, an expected value no page
shows, an evidence snippet that is not on its page, a rubric that never checks one output.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from capreplay.agents.run import read_agent_run
from capreplay.models.rubric import RubricNode
from capreplay.models.workflow import EvidenceSnippet, Goto, Workflows, WorkflowTask
from capreplay.runs.episode_log import read_episodes
from capreplay.runs.tasks_file import load_tasks_file
from capreplay.tasks.generation import TaskProof
from capreplay.tasks.proof import PROOF_RUN, prove_tasks
from tests.support.paths import ROOT

pytestmark = pytest.mark.browser

COMPARE = "https://www.trailverdict.test/compare/tents?sort=score&dir=desc"


def _world() -> tuple[Workflows, Path]:
    tasks = load_tasks_file(ROOT / "tasks.json")
    assert tasks.workflows is not None
    return tasks.workflows, tasks.snapshot_path(tasks.workflows.snapshot, ROOT / "tasks.json")


def _without_leaf(node: RubricNode, leaf_id: str) -> RubricNode:
    children = [_without_leaf(c, leaf_id) for c in node.children if c.id != leaf_id]
    return node.model_copy(update={"children": children})


def _variants(task: WorkflowTask) -> list[WorkflowTask]:
    def copy(suffix: str, **changes: Any) -> WorkflowTask:
        data = task.model_dump(mode="json") | {"id": f"{task.id}-{suffix}"} | changes
        return WorkflowTask.model_validate(data)

    leaves = copy(
        "leaves-the-snapshot",
        gold_path=[Goto(type="goto", url="https://www.fellgear.test/never-captured").model_dump(), *[
            s.model_dump(mode="json") for s in task.gold_path]],
    )  # fmt: skip
    expected = copy("value-on-no-page", expected={"tent_name": "Zzyzx Palace 9", "tent_price": "215"})
    evidence = copy(
        "evidence-elsewhere", evidence=[EvidenceSnippet(url=COMPARE, text="Zzyzx rated it best").model_dump()]
    )
    blind = copy("score-unchecked", rubric=_without_leaf(task.rubric, "score-on-page").model_dump(mode="json"))
    return [leaves, expected, evidence, blind]


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The proof's work folder (its gold run in ``proof-run/``)."""
    return tmp_path_factory.mktemp("proof")


@pytest.fixture(scope="module")
def proofs(work: Path) -> dict[str, TaskProof]:
    workflows, snapshot = _world()
    task = workflows.task("budget-tent")
    batch = workflows.model_copy(update={"tasks": [task, *_variants(task)]})
    # budget-tent has no claim a model decides, so the judge needs no model here; its score on the
    # comparison page is 8.6 (snapshots/world/captures/0001.txt), so the changed score is 1000011.6
    found = asyncio.run(prove_tasks(snapshot, batch, work, None))
    return {p.task: p for p in found}


def test_the_hand_written_task_is_proven_with_every_check(proofs: dict[str, TaskProof]) -> None:
    proof = proofs["budget-tent"]
    assert proof.passed, proof.reason
    assert [c.name for c in proof.checks] == [
        "gold_run", "on_snapshot", "values_on_pages", "evidence_on_pages", "gold_scores_1", "mutations"]  # fmt: skip
    assert proof.score == 1.0
    assert proof.answer is not None and proof.answer["tent_name"] == "Fellside 2 Lite"
    assert "https://www.fellgear.test/c/tents?min=100&max=250" in proof.reached
    assert COMPARE in proof.reached
    assert {m.output for m in proof.mutations} == {
        "tent_name",
        "tent_price",
        "listing_url",
        "tent_score",
        "compare_url",
    }
    score = next(m for m in proof.mutations if m.output == "tent_score")
    assert score.failed == ["score-on-page"] and score.passed


def test_a_path_off_the_snapshot_is_rejected(proofs: dict[str, TaskProof]) -> None:
    proof = proofs["budget-tent-leaves-the-snapshot"]
    assert not proof.passed
    assert proof.reason.startswith("on_snapshot: ")
    assert "https://www.fellgear.test/never-captured" in proof.reason


def test_an_expected_value_no_page_shows_is_rejected(proofs: dict[str, TaskProof]) -> None:
    proof = proofs["budget-tent-value-on-no-page"]
    assert not proof.passed
    assert proof.reason == (
        "values_on_pages: 'tent_name' is 'Fellside 2 Lite' on the frozen pages, not the expected 'Zzyzx Palace 9'"
    )


def test_evidence_that_is_not_on_its_page_is_rejected(proofs: dict[str, TaskProof]) -> None:
    proof = proofs["budget-tent-evidence-elsewhere"]
    assert proof.reason == f"evidence_on_pages: the evidence 'Zzyzx rated it best' is not on {COMPARE}"


def test_a_rubric_blind_to_an_output_is_rejected(proofs: dict[str, TaskProof]) -> None:
    proof = proofs["budget-tent-score-unchecked"]
    assert not proof.passed
    assert proof.reason == ("mutations: changing 'tent_score' to 1000011.6 fails no leaf: the rubric does not check it")


def test_tasks_on_one_gold_path_share_its_episode(proofs: dict[str, TaskProof], work: Path) -> None:
    # Three variants keep budget-tent's path: two episodes are run, and each of the five tasks has its record.
    planned = read_agent_run(work / PROOF_RUN).planned
    assert sorted(key.task for key in planned) == ["budget-tent", "budget-tent-leaves-the-snapshot"]
    records = {record.key.task: record for record in read_episodes(work / PROOF_RUN)}
    assert sorted(records) == sorted(proofs)
    shared = [records[task] for task in ("budget-tent-value-on-no-page", "budget-tent-evidence-elsewhere",
                                         "budget-tent-score-unchecked")]  # fmt: skip
    gold = records["budget-tent"]
    assert all(r.model_copy(update={"key": gold.key}) == gold for r in shared)
    assert records["budget-tent-leaves-the-snapshot"].started_at != gold.started_at
