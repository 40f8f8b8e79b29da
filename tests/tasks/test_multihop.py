"""Multi-hop tasks on the world snapshot: documents, pairs, drafts and filters, with the fake model over HTTP.

The scripted replies are written from the world's captured pages: TrailVerdict's review of the Scarth 2
Expedition says it was tested in High Scarth, and ParkStats' High Scarth page gives the region's area
(405 km²); the Kell Ridge Traverse passes the Ridge End Hut, whose HutNet page also names the trail, so a
question about the hut's price is answered by the hut's page alone.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest

from capreplay.errors import InputError
from capreplay.llm import TextBlock, make_client
from capreplay.models.rubric import ClaimOnPage, NumericRange, SetMembership, UrlInSnapshot
from capreplay.models.workflow import Goto, Read, task_problems
from capreplay.tasks.generation import PagePair, Rejection
from capreplay.tasks.meter import Meter
from capreplay.tasks.multihop import MultihopDrafts, draft_multihop, tasks_from_pairs
from capreplay.tasks.multihop.corpus import PageDoc, page_documents
from capreplay.tasks.multihop.draft import draft_id, draft_request
from capreplay.tasks.multihop.filters import same_answer
from capreplay.tasks.multihop.pairs import BM25Retriever, choose_pairs
from capreplay.tasks.snapshot_pages import SnapshotView, open_snapshot
from capreplay.testing.fake_llm import FakeLLM, Received, Script
from tests.support.llm import anthropic_settings
from tests.support.paths import ROOT
from tests.support.world_generation import GOOD_DRAFT, HUT, HUT_DRAFT, REGION, REVIEW, TRAIL

PASS_REVIEW = {"clear": True, "unambiguous": True, "compositional": True, "reason": "one answer, two pages"}


@pytest.fixture(scope="module")
def world() -> SnapshotView:
    return open_snapshot(ROOT / "snapshots" / "world")


@pytest.fixture(scope="module")
def docs(world: SnapshotView) -> list[PageDoc]:
    assert world.graph is not None
    return page_documents(world, world.graph)


@pytest.fixture(autouse=True)
def no_model_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """No setting from the environment may send a call anywhere but the fake server."""
    for name in ("ANTHROPIC_BASE_URL", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_CUSTOM_HEADERS", "ANTHROPIC_LOG"):
        monkeypatch.delenv(name, raising=False)


@asynccontextmanager
async def fake_meter(script: Script) -> AsyncIterator[tuple[FakeLLM, Meter]]:
    """The fake model API running ``script`` and a meter over a real Anthropic client pointed at it."""
    async with FakeLLM(script) as fake:
        client = make_client(anthropic_settings(fake.base_url, max_tokens=2000), api_key="test")
        try:
            yield fake, Meter(client)
        finally:
            await client.aclose()


def replies(draft: dict[str, Any] | str, *, review: dict[str, Any] = PASS_REVIEW, both: Any = "405 km²",
            seed: Any = None, partner: Any = None) -> dict[str, str]:  # fmt: skip
    """A dict script answering each stage's prompt (its first lines name the stage and the pages given)."""

    def answer(value: Any) -> str:
        return json.dumps({"answer": value})

    return {
        "Stage: multihop_review\n": json.dumps(review),
        ", pages: both\n": answer(both),
        ", pages: seed only\n": answer(seed),
        ", pages: partner only\n": answer(partner),
        "Stage: multihop\nPair: ": draft if isinstance(draft, str) else json.dumps(draft),
    }


def user_text(received: Received) -> str:
    return received.texts[-1]


# ---------------------------------------------------------------------------------------------- documents and pairs


def test_draft_ids_name_the_seed_page() -> None:
    assert draft_id(PagePair(seed=REVIEW, partner=REGION, score=1), 4) == "mh-reviews-scarth-2-expedition-4"
    home = PagePair(seed="https://www.trailverdict.test/", partner=REVIEW, score=1)
    assert draft_id(home, 1) == "mh-trailverdict-test-1"
    listing = PagePair(seed="https://data.parkstats.test/trails?sort=name&dir=desc", partner=REGION, score=1)
    assert draft_id(listing, 2) == "mh-trails-sort-name-dir-desc-2"


def test_the_draft_prompt_shows_the_start_of_each_page() -> None:
    seed = PageDoc(final_url=REVIEW, title="Review", text="a" * 6000 + "TAIL", graph_url=REVIEW)
    partner = PageDoc(final_url=REGION, title="Region", text="Area: 405 km².", graph_url=REGION)
    [block] = draft_request(seed, partner).content
    assert isinstance(block, TextBlock)
    assert block.text.startswith(f"Stage: multihop\nPair: {REVIEW} + {REGION}\n")
    assert "a" * 6000 + "\n>>>" in block.text and "TAIL" not in block.text
    assert "Title: Region\nText:\n<<<\nArea: 405 km².\n>>>" in block.text


def test_one_document_per_final_url_the_plain_load_kept(docs: list[PageDoc]) -> None:
    finals = [d.final_url for d in docs]
    assert len(finals) == len(set(finals))
    hut = next(d for d in docs if d.final_url == HUT)
    # three captures of the hut's page: the plan opened its calendar in one and its location panel in another;
    # the crawl's plain load (autoscrolled only) is the one a goto shows
    assert hut.graph_url == HUT
    assert "July 2026" not in hut.text and "from £34 a night" in hut.text
    # the filtered tent listing was reached by dragging the price slider: no goto along the graph shows it
    listing = next(d for d in docs if d.final_url == "https://www.fellgear.test/c/tents?min=100&max=250")
    assert listing.graph_url is None
    assert next(d for d in docs if d.final_url == "https://www.fellgear.test/c/tents").graph_url is not None
    # every one of the graph's 40 pages is a document reached by its graph URL
    assert sum(d.graph_url is not None for d in docs) == 40


def test_the_trail_a_hut_stands_on_is_among_its_nearest_pages(docs: list[PageDoc]) -> None:
    retriever = BM25Retriever(docs)
    hut = next(d for d in docs if d.url == HUT)
    query = retriever.query(hut)
    assert query[:3] == ["ridge", "end", "hut"]  # the title's words first, "HutNet" is the site's template
    assert "hutnet" not in query and "710" in query
    ranked = [doc.url for doc, _ in retriever.ranked(hut)]
    assert HUT not in ranked
    assert TRAIL in ranked[:3]


def test_pairs_are_the_same_for_a_seed_and_differ_for_another(docs: list[PageDoc]) -> None:
    retriever = BM25Retriever(docs)
    first = choose_pairs(docs, retriever, count=6, seed=7, top_k=4)
    assert choose_pairs(docs, retriever, count=6, seed=7, top_k=4) == first
    assert choose_pairs(docs, BM25Retriever(docs), count=6, seed=7, top_k=4) == first
    assert choose_pairs(docs, retriever, count=6, seed=8, top_k=4) != first
    assert len(first) == 6
    graph_urls = {d.graph_url for d in docs if d.graph_url}
    for pair in first:
        assert pair.seed != pair.partner and {pair.seed, pair.partner} <= graph_urls
        assert pair.score > 0
    assert len({frozenset((p.seed, p.partner)) for p in first}) == 6


def test_a_partner_is_one_of_the_seeds_top_k(docs: list[PageDoc]) -> None:
    retriever = BM25Retriever(docs)
    [pair] = choose_pairs(docs, retriever, count=1, seed=3, top_k=1)
    seed = next(d for d in docs if d.url == pair.seed)
    best = next(doc for doc, _ in retriever.ranked(seed) if doc.graph_url)
    assert pair.partner == best.url


# ---------------------------------------------------------------------------------------------- drafts


async def test_a_good_reply_gives_a_task_through_the_graph(world: SnapshotView) -> None:
    async with fake_meter(replies(GOOD_DRAFT)) as (fake, meter):
        made = await tasks_from_pairs(world, meter, [PagePair(seed=REVIEW, partner=REGION, score=9.0)])
    assert isinstance(made, MultihopDrafts) and made.rejected == []
    [task] = made.tasks
    assert task.id == "mh-reviews-scarth-2-expedition-1"
    assert task.flow == "multi_hop" and task.covered_points == [] and task_problems(task) == []
    assert task.start_url == "https://www.trailverdict.test/"  # the crawl's seed of the review's site
    assert task.sites == ["www.trailverdict.test", "data.parkstats.test"]
    assert task.description.startswith(GOOD_DRAFT["question"] + " Give the answer (answer)")
    # graph.json links the TrailVerdict home page to the review, and the review to the High Scarth page
    assert task.gold_path == [
        Goto(type="goto", url=REVIEW),
        Read(type="read", output="bridge_url", source="url"),
        Read(type="read", output="bridge", selector="#test-region"),
        Goto(type="goto", url=REGION),
        Read(type="read", output="answer_url", source="url"),
        Read(type="read", output="answer", selector='p:has-text("Area:")', pattern=r"Area: ([\d,]+) km"),
    ]
    assert [(o.name, o.type, o.role) for o in task.outputs] == [
        ("answer", "number", "user_value"), ("bridge", "text", "condition_check"),
        ("answer_url", "url", "provenance_url"), ("bridge_url", "url", "provenance_url"),
    ]  # fmt: skip
    assert task.expected == {"answer": "405", "bridge": "High Scarth"}
    assert [(e.url, e.text) for e in task.evidence] == [
        (REVIEW, "We used the Scarth 2 Expedition for 9 nights in High Scarth."), (REGION, "Area: 405 km²."),
    ]  # fmt: skip
    leaves = {leaf.id: leaf for leaf in task.rubric.leaves()}
    assert all(leaf.critical for leaf in leaves.values())
    assert leaves["answer-page-captured"].check == UrlInSnapshot(check="url_in_snapshot", field="answer_url")
    assert leaves["bridge-page-captured"].check == UrlInSnapshot(check="url_in_snapshot", field="bridge_url")
    assert leaves["answer-on-page"].check == ClaimOnPage(
        check="claim_on_page", field="answer", url_field="answer_url", match="number", claim=None
    )
    assert leaves["bridge-on-page"].check == ClaimOnPage(
        check="claim_on_page", field="bridge", url_field="bridge_url", match="text", claim=None
    )
    assert leaves["expected-answer"].check == NumericRange(check="numeric_range", field="answer", min=405, max=405)
    assert leaves["expected-bridge"].check == SetMembership(
        check="set_membership", field="bridge", values=["High Scarth"], mode="one_of"
    )
    assert [c.critical for c in task.rubric.children] == [True, True]

    # one draft, one review, then the answer from both pages, the seed alone and the partner alone
    stages = [user_text(r).splitlines()[:2] for r in fake.received]
    assert stages == [
        ["Stage: multihop", f"Pair: {REVIEW} + {REGION}"],
        ["Stage: multihop_review", f"Candidate: {task.id}"],
        ["Stage: answer_from_pages", f"Candidate: {task.id}, pages: both"],
        ["Stage: answer_from_pages", f"Candidate: {task.id}, pages: seed only"],
        ["Stage: answer_from_pages", f"Candidate: {task.id}, pages: partner only"],
    ]
    seed_only, partner_only = user_text(fake.received[3]), user_text(fake.received[4])
    assert "High Scarth" in seed_only and "Area: 405" not in seed_only
    assert "Area: 405" in partner_only and "Scarth 2 Expedition for 9 nights" not in partner_only
    cost = meter.cost()
    assert (cost["multihop"].calls, cost["filter"].calls) == (1, 4)


async def test_a_question_one_page_answers_is_rejected(world: SnapshotView) -> None:
    script = replies(HUT_DRAFT, both="£34", partner="£34 a night")
    async with fake_meter(script) as (fake, meter):
        made = await tasks_from_pairs(world, meter, [PagePair(seed=TRAIL, partner=HUT, score=9.0)])
    assert made.tasks == []
    assert made.rejected == [Rejection(candidate="mh-trails-kell-ridge-traverse-1", stage="filter",
                                       reason=f"one page answers it: {HUT}")]  # fmt: skip
    assert len(fake.received) == 5


async def test_an_ambiguous_question_is_rejected_by_the_review(world: SnapshotView) -> None:
    review = {"clear": True, "unambiguous": False, "compositional": True, "reason": "the region has two huts"}
    async with fake_meter(replies(GOOD_DRAFT, review=review)) as (fake, meter):
        made = await tasks_from_pairs(world, meter, [PagePair(seed=REVIEW, partner=REGION, score=9.0)])
    [rejection] = made.rejected
    assert (rejection.stage, rejection.reason) == ("filter", "the review found the question ambiguous: the region "
                                                   "has two huts")  # fmt: skip
    assert len(fake.received) == 2  # no answer was asked for after the review failed


async def test_a_wrong_answer_from_both_pages_is_rejected(world: SnapshotView) -> None:
    async with fake_meter(replies(GOOD_DRAFT, both="312")) as (_, meter):
        made = await tasks_from_pairs(world, meter, [PagePair(seed=REVIEW, partner=REGION, score=9.0)])
    assert [r.reason for r in made.rejected] == ["with both pages the model answers '312', not '405'"]


@pytest.mark.parametrize(
    ("draft", "reason"),
    [
        ("I would rather not.", "the draft reply is unusable: the reply holds no JSON object"),
        ({"question": None, "reason": "the pages share nothing"},
         "the model wrote no question for this pair: the pages share nothing"),
        (GOOD_DRAFT | {"answer": GOOD_DRAFT["answer"] | {"value": "412"}},
         f"the answer '412' is not on the partner page {REGION}"),
        (GOOD_DRAFT | {"bridge": GOOD_DRAFT["bridge"] | {"page": "partner"}},
         "the draft does not fit the form: Value error, the answer and the bridge are both on the partner page"),
        (GOOD_DRAFT | {"question": "How large is High Scarth?"},
         "the question gives the bridge value away: 'High Scarth'"),
        (GOOD_DRAFT | {"evidence": {"seed": "Tested in High Scarth in a storm.", "partner": "Area: 405 km²."}},
         f"the seed evidence is not a passage of {REVIEW}: 'Tested in High Scarth in a storm.'"),
        (GOOD_DRAFT | {"answer": GOOD_DRAFT["answer"] | {"pattern": "Area: ("}},
         "the draft does not fit the form: answer.pattern: Value error, not a regular expression: missing )"),
    ],
    ids=["not-json", "declined", "value-not-on-page", "same-page", "bridge-given", "evidence-invented", "bad-pattern"],
)  # fmt: skip
async def test_an_unusable_draft_is_rejected_with_its_reason(
    world: SnapshotView, draft: dict[str, Any] | str, reason: str
) -> None:
    async with fake_meter(replies(draft)) as (fake, meter):
        made = await tasks_from_pairs(world, meter, [PagePair(seed=REVIEW, partner=REGION, score=9.0)])
    assert made.tasks == []
    [rejection] = made.rejected
    assert rejection.stage == "multihop" and rejection.candidate == "mh-reviews-scarth-2-expedition-1"
    assert rejection.reason.startswith(reason), rejection.reason
    assert len(fake.received) == 1  # no filter call for a draft that failed


async def test_a_pair_with_no_path_is_rejected_before_any_call(world: SnapshotView) -> None:
    # Fellgear's product pages were captured by the plan, not the crawl: graph.json has no page of them
    product = "https://www.fellgear.test/p/skerry-2"
    pair = PagePair(seed="https://data.parkstats.test/trails/ashgill-horseshoe", partner=product, score=1.0)
    async with fake_meter(replies(GOOD_DRAFT)) as (fake, meter):
        made = await tasks_from_pairs(world, meter, [pair])
    reason = f"no path in graph.json from https://data.parkstats.test/ reaches {product}"
    assert made.rejected == [Rejection(candidate="mh-trails-ashgill-horseshoe-1", stage="multihop", reason=reason)]
    assert fake.received == []


async def test_a_given_start_url_starts_the_gold_path(world: SnapshotView) -> None:
    start = "https://www.fellgear.test/"
    async with fake_meter(replies(GOOD_DRAFT)) as (_, meter):
        made = await tasks_from_pairs(world, meter, [PagePair(seed=REVIEW, partner=REGION, score=9.0)], start=start)
    [task] = made.tasks
    # the shop's home page links to TrailVerdict's, which links to the review
    assert task.start_url == start
    gotos = [step.url for step in task.gold_path if isinstance(step, Goto)]
    assert gotos == ["https://www.trailverdict.test/", REVIEW, REGION]


async def test_draft_multihop_pairs_drafts_and_counts(world: SnapshotView, docs: list[PageDoc]) -> None:
    declined = {"question": None, "reason": "nothing to bridge"}
    async with fake_meter(replies(declined)) as (fake, meter):
        made = await draft_multihop(world, meter, count=3, seed=5, top_k=3)
    assert made.pairs == choose_pairs(docs, BM25Retriever(docs), count=3, seed=5, top_k=3)
    assert made.tasks == [] and len(made.rejected) == 3 and len(fake.received) == 3
    assert all(r.reason == "the model wrote no question for this pair: nothing to bridge" for r in made.rejected)
    assert [r.candidate[-2:] for r in made.rejected] == ["-1", "-2", "-3"]


async def test_a_start_url_outside_the_snapshot_is_bad_input(world: SnapshotView) -> None:
    async with fake_meter(replies(GOOD_DRAFT)) as (_, meter):
        with pytest.raises(InputError, match=r"the start URL https://elsewhere\.test/ is not a page of the snapshot"):
            await draft_multihop(world, meter, count=1, start="https://elsewhere.test/")


@pytest.mark.parametrize(
    ("expected", "got", "kind", "same"),
    [
        ("405", "405 km²", "number", True),
        ("1,120", 1120, "number", True),
        ("405", "312", "number", False),
        ("High Scarth", "high scarth", "text", True),
        ("High Scarth", "It is High Scarth.", "text", True),
        ("High Scarth", "High Scarthside", "text", False),
        ("High Scarth", None, "text", False),
        ("Hard", "hardware", "text", False),
    ],
)
def test_answers_compare_as_numbers_or_normalised_phrases(expected: str, got: Any, kind: Any, same: bool) -> None:
    assert same_answer(expected, got, kind) is same
