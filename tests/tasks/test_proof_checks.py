"""The proof's pure parts: changed values, which leaves must fail, values and evidence against page texts."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from capreplay.judge.claims import Source
from capreplay.judge.verdict import EpisodeVerdict, LeafVerdict
from capreplay.models.episode import EpisodeKey, EpisodeRecord, StepRecord
from capreplay.models.rubric import RubricNode
from capreplay.models.workflow import EvidenceSnippet, WorkflowTask
from capreplay.tasks.proof import (
    changed_value,
    evidence_problems,
    gold_answer,
    must_fail,
    mutation_problem,
    mutation_result,
    reached_pages,
    shared_episodes,
    value_problems,
)

SHOP = "https://www.shop.test/tents"
REVIEW = "https://www.reviews.test/compare"


def _leaf(node_id: str, check: dict[str, Any]) -> RubricNode:
    return RubricNode.model_validate({"id": node_id, "description": node_id, "critical": True, "kind": "other",
                                      "check": check})  # fmt: skip


def _task(**changes: Any) -> WorkflowTask:
    data: dict[str, Any] = {
        "id": "t",
        "description": "I want the best tent under 250.",
        "sites": ["www.shop.test", "www.reviews.test"],
        "flow": "sequential",
        "start_url": SHOP,
        "covered_points": [
            {
                "id": "p",
                "type": "perception",
                "code": "PT20",
                "site": "www.reviews.test",
                "description": "Read the table.",
            }
        ],
        "outputs": [
            {"name": "tent", "type": "text", "role": "user_value", "description": "The tent."},
            {"name": "price", "type": "number", "role": "condition_check", "description": "Its price."},
            {"name": "shop_url", "type": "url", "role": "provenance_url", "description": "The listing."},
        ],
        "rubric": {
            "id": "root",
            "description": "all",
            "children": [
                {
                    "id": "tent-on-page",
                    "description": "d",
                    "critical": True,
                    "kind": "perception",
                    "point": "p",
                    "check": {"check": "claim_on_page", "field": "tent", "url_field": "shop_url"},
                },
                {
                    "id": "price-max",
                    "description": "d",
                    "critical": True,
                    "kind": "other",
                    "check": {"check": "numeric_range", "field": "price", "max": 250},
                },
                {
                    "id": "price-min",
                    "description": "d",
                    "critical": False,
                    "kind": "other",
                    "check": {"check": "numeric_range", "field": "price", "min": 0},
                },
                {
                    "id": "tent-shape",
                    "description": "d",
                    "critical": False,
                    "kind": "other",
                    "check": {"check": "regex", "field": "tent", "pattern": "\\w"},
                },
            ],
        },
        "gold_path": [
            {"type": "read", "output": "tent", "selector": "h1"},
            {"type": "read", "output": "price", "selector": ".price"},
            {"type": "read", "output": "shop_url", "source": "url"},
        ],
    }
    return WorkflowTask.model_validate(data | changes)


def _record(
    answer: str | None, status: str = "answered", urls: tuple[str, ...] = (SHOP, REVIEW, SHOP)
) -> EpisodeRecord:
    steps = [StepRecord(n=i, action="goto", url=u, at_s=float(i)) for i, u in enumerate(urls, start=1)]
    return EpisodeRecord(key=EpisodeKey(repeat=0, task="t", agent="gold"), started_at=datetime(2026, 1, 1, tzinfo=UTC),
                         duration_s=1.0, status=status, answer=answer, steps=steps, start_url=SHOP)  # fmt: skip


def _verdict(passed: dict[str, bool]) -> EpisodeVerdict:
    leaves = [LeafVerdict(node=n, kind="other", check="regex", critical=True, passed=p, reason="r")
              for n, p in passed.items()]  # fmt: skip
    return EpisodeVerdict(episode="e", task="t", agent="gold", repeat=0, scored=True, leaves=leaves,
                          score=1.0 if all(passed.values()) else 0.0)  # fmt: skip


def test_reached_pages_are_the_start_and_each_steps_url_once_in_order() -> None:
    assert reached_pages(_record("{}")) == [SHOP, REVIEW]


def test_a_gold_answer_must_be_a_finished_json_object() -> None:
    assert gold_answer(_record('{"tent": "A"}')) == {"tent": "A"}
    assert "did not finish (step_limit)" in str(gold_answer(_record(None, status="step_limit")))
    assert "not JSON" in str(gold_answer(_record("the tent is A")))
    assert "not a JSON object" in str(gold_answer(_record('["A"]')))


def test_changed_values_keep_their_type_and_leave_every_page() -> None:
    assert changed_value("215", "number", "price") == 1_000_218
    assert changed_value("4.5", "number", "rating") == 1_000_007.5
    assert changed_value("Fellside 2", "text", "tent") == "Zzyzx Changed tent"
    assert changed_value(SHOP, "url", "shop_url") == "https://changed.invalid/shop_url"
    assert changed_value(["A", "B"], "text_list", "names") == ["Zzyzx Changed names", "B"]
    assert changed_value([SHOP], "url_list", "pages") == ["https://changed.invalid/pages"]


def test_leaves_that_ground_or_pin_a_value_must_fail_and_shape_checks_may_pass() -> None:
    task = _task()
    leaves = {leaf.id: leaf for leaf in task.rubric.leaves()}
    assert must_fail(leaves["tent-on-page"], "tent", "Zzyzx", "text")
    assert must_fail(leaves["tent-on-page"], "shop_url", "https://changed.invalid/x", "url")
    assert not must_fail(leaves["tent-shape"], "tent", "Zzyzx", "text")
    assert must_fail(leaves["price-max"], "price", 1_000_218, "number")
    assert not must_fail(leaves["price-min"], "price", 1_000_218, "number")
    assert not must_fail(leaves["price-max"], "tent", "Zzyzx", "text")
    pinned = _leaf("p", {"check": "set_membership", "field": "tent", "values": ["A"], "mode": "one_of"})
    assert must_fail(pinned, "tent", "Zzyzx", "text")
    on_url = _leaf("u", {"check": "regex", "field": "shop_url", "pattern": "shop"})
    assert must_fail(on_url, "shop_url", "https://changed.invalid/x", "url")


def test_a_mutation_passes_when_the_grounding_leaves_fail_and_no_unrelated_leaf_moves() -> None:
    task = _task()
    passing = {"tent-on-page": True, "price-max": True, "price-min": True, "tent-shape": True}
    gold = _verdict(passing)
    changed = _verdict(passing | {"tent-on-page": False})
    good = mutation_result(task, "tent", "Zzyzx Changed tent", gold, changed)
    assert good.passed and good.failed == ["tent-on-page"] and good.expected == ["tent-on-page"]
    leaky = mutation_result(
        task, "tent", "Zzyzx Changed tent", gold, _verdict(passing | {"tent-on-page": False, "price-max": False})
    )
    assert not leaky.passed
    assert mutation_problem(leaky, gold) == "changing 'tent' changed the verdict of leaves that do not read it"
    blind = mutation_result(task, "price", 1_000_218, gold, gold)
    assert not blind.passed
    assert mutation_problem(blind, gold) == "changing 'price' to 1000218 fails no leaf: the rubric does not check it"


def test_values_must_be_expected_on_a_reached_page_and_urls_archived() -> None:
    task = _task(expected={"tent": "Fellside 2", "price": "215"})
    pages = {SHOP: [Source(url=SHOP, text="Fellside 2 Lite  £215.00 in stock")], REVIEW: "not in the snapshot"}
    answer = {"tent": "Fellside 2", "price": "215", "shop_url": SHOP}
    assert value_problems(task, answer, pages, lambda url: url == SHOP) == [
        f"reached page {REVIEW} cannot be read: not in the snapshot"
    ]
    wrong = {"tent": "Dunlin 3", "price": "216", "shop_url": "https://www.shop.test/other"}
    assert value_problems(task, wrong, {SHOP: pages[SHOP]}, lambda url: url == SHOP) == [
        "'tent' is 'Dunlin 3' on the frozen pages, not the expected 'Fellside 2'",
        "'tent' = 'Dunlin 3' is on no page the gold path reached",
        "'price' is '216' on the frozen pages, not the expected '215'",
        "'price' = '216' is on no page the gold path reached",
        "'shop_url' gives https://www.shop.test/other, which is not an archived page",
    ]


def test_evidence_must_be_on_its_page_and_that_page_reached() -> None:
    task = _task(evidence=[EvidenceSnippet(url=SHOP, text="in stock"), EvidenceSnippet(url=REVIEW, text="score 8")])
    pages = {SHOP: [Source(url=SHOP, text="Fellside 2 Lite  £215.00 in stock")]}
    assert evidence_problems(task, pages) == [f"the gold path never reaches {REVIEW}, whose evidence the task cites"]
    pages_both = {**pages, REVIEW: [Source(url=REVIEW, text="Fellside: score 7")]}
    assert evidence_problems(task, pages_both) == [f"the evidence 'score 8' is not on {REVIEW}"]


def test_tasks_share_a_gold_episode_exactly_when_their_start_and_gold_path_are_the_same() -> None:
    base = _task()
    path = [s.model_dump(mode="json") for s in base.gold_path]
    other_rubric = _task(id="t-expected", expected={"tent": "Zzyzx"}, evidence=[{"url": SHOP, "text": "Zzyzx"}])
    longer = _task(id="t-longer", gold_path=[{"type": "goto", "url": REVIEW}, *path])
    elsewhere = _task(id="t-elsewhere", start_url=REVIEW)
    again = _task(id="t-again")
    tasks = [base, longer, other_rubric, elsewhere, again]
    assert shared_episodes(tasks) == {"t": "t", "t-longer": "t-longer", "t-expected": "t", "t-elsewhere":
                                      "t-elsewhere", "t-again": "t"}  # fmt: skip
    assert shared_episodes([]) == {}
