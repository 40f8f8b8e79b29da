"""Workflow proposals and instances on the world's sites, with the fake model API answering by stage and subject.

The cards are written by hand from the world's pages (fellgear's price slider on /c/tents, trailverdict's
sortable comparison, parkstats' visitor charts, hutnet's availability calendar), and every expected result
is written out from what those pages show.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from capreplay.errors import InputError
from capreplay.llm import ModelSettings, make_client
from capreplay.models.rubric import NumericRange, RubricNode, SetMembership
from capreplay.models.workflow import CoveredPoint, ExpectedOutput
from capreplay.tasks.generation import (
    Affinity,
    CardFunction,
    CardsFile,
    ExecutionItem,
    ItemLocation,
    Made,
    PerceptionItem,
    Proposal,
    ProposalCheck,
    ProposalsFile,
    Rejection,
    SiteCard,
)
from capreplay.tasks.meter import Meter
from capreplay.tasks.prompts import prompt
from capreplay.tasks.snapshot_pages import SnapshotView, open_snapshot
from capreplay.tasks.workflows import instantiate, propose, write_proposals
from capreplay.tasks.workflows.affinity import MAX_SITES, combinations, parse_affinity, site_pairs
from capreplay.tasks.workflows.check import parse_check, review
from capreplay.tasks.workflows.instance import expected_values
from capreplay.tasks.workflows.markup import trimmed
from capreplay.testing.fake_llm import FakeLLM, Received, Reply
from tests.support.paths import ROOT
from tests.support.world_generation import COMPARE, DESCRIPTION, EXPECTED, GOLD_PATH, INSTANCE, RUBRIC, TENTS

WORLD = ROOT / "snapshots" / "world"
WORLD_ID = "760e9b22324f9de7046603ea9921111405553abf184e882ee6b6939306ee4475"
CARDS_SHA = "ab" * 32
MODEL = {"provider": "anthropic", "model": "claude-test", "max_tokens": 8000, "thinking": None, "temperature": None}


@pytest.fixture(autouse=True)
def no_model_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """No setting from the environment may send a call anywhere but the fake server."""
    for name in ("ANTHROPIC_BASE_URL", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_CUSTOM_HEADERS", "ANTHROPIC_LOG"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="module")
def world() -> SnapshotView:
    """The committed world snapshot, checked against its manifest."""
    return open_snapshot(WORLD)


# ---------------------------------------------------------------------------------------------- the cards


def _item(kind: type[ExecutionItem | PerceptionItem], item_id: str, component: str, code: str, function: str,
          url: str, selector: str, description: str) -> Any:  # fmt: skip
    return kind(id=item_id, component=component, code=code, function=function, description=description,
                location=ItemLocation(url=url, selector=[selector]))  # fmt: skip


def _card(site: str, host: str, functions: list[tuple[str, str, str]], items: list[Any]) -> SiteCard:
    return SiteCard(
        site=site,
        hosts=[host],
        pages=sorted({i.location.url for i in items}),
        functions=[CardFunction(id=f, name=n, tags=["core", "read"], description=d) for f, n, d in functions],
        execution_items=[i for i in items if isinstance(i, ExecutionItem)],
        perception_items=[i for i in items if isinstance(i, PerceptionItem)],
    )


A, P = ExecutionItem, PerceptionItem
TARN = "https://data.parkstats.test/trails/tarn-round"
BOTHY = "https://book.hutnet.test/huts/ashgill-bothy"
CARDS = CardsFile(
    method="pages",
    made=Made(snapshot_id=WORLD_ID, model=MODEL, prompts={"card": "00" * 32}),
    cards=[
        _card("fellgear.test", "www.fellgear.test",
              [("F1", "Tent price filtering", "Narrow the tents to a price range and order them."),
               ("F2", "Product details", "A product's price, stock, specifications and delivery time.")],
              [_item(A, "A1", "Slider", "AT21", "F1", TENTS, '.range-handle[data-handle="max"]',
                     "Drag the price slider's handles to a price range and apply it."),
               _item(A, "A2", "Select", "AT18", "F1", TENTS, "#sort-select", "Order the tents with the sort menu."),
               _item(A, "A3", "Tabs", "AT07", "F2", "https://www.fellgear.test/p/skerry-2",
                     '.tabs a[role="tab"][href$="tab=specs"]', "Switch a product page to its Specifications tab."),
               _item(P, "P1", "Card", "PT07", "F2", "https://www.fellgear.test/p/dunlin-2", "#stock",
                     "Read a product's stock badge.")]),
        _card("hutnet.test", "book.hutnet.test",
              [("F1", "Hut availability", "Which nights a hut has free beds, and what a stay costs.")],
              [_item(A, "A1", "DatePicker", "AT15", "F1", BOTHY, "#dates-toggle",
                     "Pick arrival and departure in the date-range picker."),
               _item(A, "A2", "Calendar", "AT26", "F1", BOTHY, "#cal-next", "Page the calendar to the next month."),
               _item(P, "P1", "Calendar", "PT04", "F1", BOTHY, "#nights", "Tell which nights of a stay are free.")]),
        _card("parkstats.test", "data.parkstats.test",
              [("F1", "Trail statistics", "A trail's length, huts on the route and visitors by month.")],
              [_item(A, "A1", "Chart", "AT43", "F1", TARN, '#visitors-chart .bar[data-month="Jul"]',
                     "Hover a month's bar of the visitor chart."),
               _item(P, "P1", "Chart", "PT27", "F1", TARN, "#visitors-chart", "Read a month's visitors.")]),
        _card("trailverdict.test", "www.trailverdict.test",
              [("F1", "Tent comparison", "Tested tents by score, weight and test region, sortable and filterable."),
               ("F2", "Review reading", "A product's review with its test notes.")],
              [_item(A, "A1", "Table", "AT33", "F1", COMPARE, '#compare th[data-col="score"] a',
                     "Sort the comparison by a column."),
               _item(A, "A2", "Table", "AT34", "F1", COMPARE, "#berths-filter", "Filter the tents by berths."),
               _item(A, "A3", "Collapse", "AT30", "F2", "https://www.trailverdict.test/reviews/corrie-1",
                     "#acc-testing", "Expand the review's How we tested panel."),
               _item(P, "P1", "Table", "PT22", "F1", COMPARE, "#compare", "Tell which tent leads the sorted table.")]),
    ],
)  # fmt: skip


# ---------------------------------------------------------------------------------------------- the fake model


def subject(received: Received) -> tuple[str, str]:
    """The stage and the thing a request is about: its first two user lines, ``Stage: x`` and ``Name: y``."""
    stage, named = received.texts[1].splitlines()[:2]
    return stage.removeprefix("Stage: "), named.partition(": ")[2]


def by_subject(replies: Mapping[tuple[str, str], str | list[str]]) -> Callable[[Received], Reply | str]:
    """A script answering by stage and subject; a list answers that subject's calls in order."""
    asked: dict[tuple[str, str], int] = {}

    def answer(received: Received) -> Reply | str:
        key = subject(received)
        reply = replies.get(key)
        if reply is None:
            return Reply(status=500, message=f"no scripted reply for {key}")
        if isinstance(reply, str):
            return reply
        asked[key] = asked.get(key, 0) + 1
        return reply[min(asked[key], len(reply)) - 1]

    return answer


def asked(fake: FakeLLM, stage: str) -> list[str]:
    """The subjects of the calls of one stage, in order."""
    return [named for s, named in map(subject, fake.calls("messages")) if s == stage]


@asynccontextmanager
async def metered(replies: Mapping[tuple[str, str], str | list[str]]) -> AsyncIterator[tuple[FakeLLM, Meter]]:
    """The fake model API answering ``replies``, and a meter over a real Anthropic client pointed at it."""
    async with FakeLLM(by_subject(replies)) as fake:
        settings = ModelSettings(model="claude-test", max_tokens=8000, timeout_s=10.0, base_url=fake.base_url)
        client = make_client(settings, api_key="test")
        try:
            yield fake, Meter(client)
        finally:
            await client.aclose()


def rated(level: str, reason: str) -> str:
    return json.dumps({"level": level, "reason": reason})


AFFINITIES = {
    ("affinity", "fellgear.test and hutnet.test"): rated("low", "A tent shop and hut bookings share nothing."),
    ("affinity", "fellgear.test and parkstats.test"): rated("low", "Trail figures do not choose a tent."),
    ("affinity", "fellgear.test and trailverdict.test"): f"Sure:\n```json\n{rated('HIGH', 'Scores pick a tent.')}\n```",
    ("affinity", "hutnet.test and parkstats.test"): rated("high", "A trail's huts are booked for a stay."),
    ("affinity", "hutnet.test and trailverdict.test"): rated("low", "Reviews do not decide a hut."),
    ("affinity", "parkstats.test and trailverdict.test"): rated("medium", "A test region is a park region."),
}


def step(step_id: str, site: str, function: str, does: str, needs: list[str], condition: str | None = None) -> Any:
    return {"id": step_id, "site": site, "function": function, "does": does, "needs": needs,
            "condition": condition, "produces": f"what {step_id} finds"}  # fmt: skip


def proposal(pattern: str, steps: list[Any], persona: str = "A walker buying a first tent") -> dict[str, Any]:
    scenario = {"persona": persona, "situation": "A trip in July", "pain_point": "Prices and scores are on two sites",
                "decision_goal": "What to buy or book"}  # fmt: skip
    return {"id": "PROP-9", "scenario": scenario, "pattern": pattern, "steps": steps, "planned_outputs": ["a choice"]}


BUDGET = proposal("sequential", [
    step("S1", "fellgear.test", "F1", "Narrow the tents to my budget of £100-£250", []),
    step("S2", "trailverdict.test", "F1", "Find the best score among the tents of S1", ["S1"])])  # fmt: skip
NOT_FAN_IN = proposal("fan-in", [
    step("S1", "fellgear.test", "F2", "Read the Dunlin 2's stock", []),
    step("S2", "trailverdict.test", "F1", "Find its score", ["S1"])])  # fmt: skip
QUIETER = proposal("conditional", [
    step("S1", "parkstats.test", "F1", "Compare Tarn Round's July and August visitors", []),
    step("S2", "hutnet.test", "F1", "Price a weekend at Tarnfoot Lodge", ["S1"], "in the quieter of the two months")],
    persona="A hiker who dislikes crowds")  # fmt: skip
NO_SUCH_FUNCTION = proposal("sequential", [
    step("S1", "parkstats.test", "F1", "Find the huts on the Ashgill Horseshoe", []),
    step("S2", "hutnet.test", "F9", "Book one of them", ["S1"])])  # fmt: skip
FAN_OUT = proposal("fan_out", [
    step("S1", "parkstats.test", "F1", "Find the huts and the region of the Ashgill Horseshoe", []),
    step("S2", "hutnet.test", "F1", "Check the free nights of the huts of S1", ["S1"]),
    step("S3", "trailverdict.test", "F1", "Find tents tested in the region of S1", ["S1"])])  # fmt: skip
OVER_A_LOW_PAIR = proposal("sequential", [
    step("S1", "fellgear.test", "F1", "Find the cheapest tent", []),
    step("S2", "hutnet.test", "F1", "Book a hut with its saving", ["S1"])])  # fmt: skip


def passed(reason: str, meaningful: bool = True, dynamic: bool = True) -> str:
    return json.dumps({"meaningful": meaningful, "dynamic": dynamic, "reason": reason})


PROPOSE = AFFINITIES | {
    ("propose", "fellgear.test, trailverdict.test"): json.dumps({"proposals": [BUDGET, NOT_FAN_IN]}),
    ("propose", "hutnet.test, parkstats.test"): json.dumps({"proposals": [QUIETER, NO_SUCH_FUNCTION]}),
    ("propose", "parkstats.test, trailverdict.test"): "I cannot help with that.",
    ("propose", "fellgear.test, hutnet.test, parkstats.test, trailverdict.test"):
        json.dumps({"proposals": [FAN_OUT, OVER_A_LOW_PAIR, BUDGET]}),
    ("proposal_check", "prop-001"): passed("The budget tents decide which scores are compared."),
    ("proposal_check", "prop-003"): passed("The quieter month decides the dates of the stay."),
    ("proposal_check", "prop-005"): passed("The region is known before the trail is read.", dynamic=False),
}  # fmt: skip


# ---------------------------------------------------------------------------------------------- affinity and proposals


def test_a_low_pair_is_never_combined_and_a_connected_group_is_proposed_as_a_whole() -> None:
    affinities = [parse_affinity(pair, json.loads(AFFINITIES[("affinity", f"{pair[0]} and {pair[1]}")]))
                  for pair in [("fellgear.test", "hutnet.test"), ("fellgear.test", "parkstats.test"),
                               ("hutnet.test", "parkstats.test"), ("parkstats.test", "trailverdict.test")]]  # fmt: skip
    assert combinations(affinities) == [
        ("hutnet.test", "parkstats.test"),
        ("parkstats.test", "trailverdict.test"),
        ("hutnet.test", "parkstats.test", "trailverdict.test"),
    ]
    apart = [Affinity(sites=("a.test", "b.test"), level="high", reason="r"),
             Affinity(sites=("c.test", "d.test"), level="medium", reason="r")]  # fmt: skip
    assert combinations(apart) == [("a.test", "b.test"), ("c.test", "d.test")]


def test_an_unusable_affinity_reply_counts_as_low_with_its_reason() -> None:
    pair = ("a.test", "b.test")
    assert parse_affinity(pair, {"level": "very", "reason": "x"}) == Affinity(
        sites=pair, level="low", reason="no usable affinity reply: level 'very' is not one of high, medium, low"
    )
    assert parse_affinity(pair, "the reply holds no JSON object").reason == (
        "no usable affinity reply: the reply holds no JSON object"
    )


def test_a_check_reply_without_two_verdicts_is_no_check() -> None:
    assert parse_check({"meaningful": "yes", "dynamic": True}) == "'meaningful' is 'yes', not true or false"
    assert parse_check({"meaningful": True, "dynamic": False, "reason": "  given  in the text "}) == ProposalCheck(
        by="model", meaningful=True, dynamic=False, reason="given in the text"
    )


async def test_a_check_reply_without_a_verdict_rejects_the_proposal() -> None:
    budget = Proposal.model_validate(BUDGET | {"id": "prop-001"})
    async with metered({("proposal_check", "prop-001"): '{"meaningful": true}'}) as (_, meter):
        assert await review(budget, CARDS, meter) == Rejection(
            candidate="prop-001",
            stage="proposal",
            reason="the proposal check gave no verdict: 'dynamic' is None, not true or false",
        )


def test_more_sites_than_pairs_can_be_asked_about_need_a_clustering_first() -> None:
    many = [_card(f"site{n:02d}.test", f"www.site{n:02d}.test", [("F1", "Browse", "Look around.")], [])
            for n in range(MAX_SITES + 1)]  # fmt: skip
    with pytest.raises(InputError, match="the cards have 13 sites; affinity is asked per pair of sites for at most 12"):
        site_pairs(CARDS.model_copy(update={"cards": many}))
    assert len(site_pairs(CARDS)) == 6


async def test_propose_asks_each_pair_once_combines_no_low_pair_and_rejects_what_does_not_fit() -> None:
    async with metered(PROPOSE) as (fake, meter):
        made = await propose(CARDS, CARDS_SHA, meter, MODEL, per_call=2)

    assert asked(fake, "affinity") == [
        "fellgear.test and hutnet.test", "fellgear.test and parkstats.test", "fellgear.test and trailverdict.test",
        "hutnet.test and parkstats.test", "hutnet.test and trailverdict.test", "parkstats.test and trailverdict.test",
    ]  # fmt: skip
    assert [(a.sites, a.level) for a in made.affinities] == [
        (("fellgear.test", "hutnet.test"), "low"), (("fellgear.test", "parkstats.test"), "low"),
        (("fellgear.test", "trailverdict.test"), "high"), (("hutnet.test", "parkstats.test"), "high"),
        (("hutnet.test", "trailverdict.test"), "low"), (("parkstats.test", "trailverdict.test"), "medium"),
    ]  # fmt: skip
    # the three linked pairs, then the whole chain fellgear - trailverdict - parkstats - hutnet; no low pair alone
    assert asked(fake, "propose") == [
        "fellgear.test, trailverdict.test", "hutnet.test, parkstats.test", "parkstats.test, trailverdict.test",
        "fellgear.test, hutnet.test, parkstats.test, trailverdict.test",
    ]  # fmt: skip
    assert asked(fake, "proposal_check") == ["prop-001", "prop-003", "prop-005"]

    assert [p.id for p in made.proposals] == ["prop-001", "prop-003", "prop-005"]
    first = made.proposals[0]
    assert first.pattern == "sequential" and first.sites == ["fellgear.test", "trailverdict.test"]
    assert first.steps[1].needs == ["S1"] and first.scenario.persona == "A walker buying a first tent"
    assert first.checks == [ProposalCheck(by="model", meaningful=True, dynamic=True,
                                          reason="The budget tents decide which scores are compared.")]  # fmt: skip
    assert made.proposals[1].steps[1].condition == "in the quieter of the two months"
    assert made.proposals[2].rejected == ProposalCheck(
        by="model", meaningful=True, dynamic=False, reason="The region is known before the trail is read."
    )
    assert made.rejected == [
        Rejection(candidate="prop-002", stage="proposal",
                  reason="proposal 'prop-002': a fan-in flow has a step that needs two or more earlier steps"),
        Rejection(candidate="prop-004", stage="proposal",
                  reason="step S2 uses F9, which the card of hutnet.test does not list"),
        Rejection(candidate="parkstats.test+trailverdict.test", stage="proposal",
                  reason="no proposals read: the reply holds no JSON object"),
        Rejection(candidate="prop-006", stage="proposal",
                  reason="step S2 on hutnet.test takes from S1 on fellgear.test, a pair of sites rated low"),
    ]  # fmt: skip
    # the group's third proposal is beyond per_call, so it is not read: there is no prop-007

    assert made.cards_sha256 == CARDS_SHA
    assert made.made.snapshot_id == WORLD_ID and made.made.model == MODEL
    assert made.made.prompts == {n: prompt(n).sha256 for n in ("affinity", "propose", "proposal_check")}
    assert {stage: cost.calls for stage, cost in made.made.cost.items()} == {
        "affinity": 6, "propose": 4, "proposal_check": 3}  # fmt: skip
    assert ProposalsFile.model_validate_json(made.model_dump_json()) == made


async def test_the_propose_prompt_shows_the_cards_items_and_affinities() -> None:
    async with metered(PROPOSE) as (fake, meter):
        await propose(CARDS, CARDS_SHA, meter, MODEL, per_call=2)
    [pair] = [r for r in fake.calls("messages") if subject(r) == ("propose", "fellgear.test, trailverdict.test")]
    user = pair.texts[1]
    assert user.startswith("Stage: propose\nSites (2): fellgear.test, trailverdict.test\n\nWrite 2 different proposals")
    assert "- fellgear.test and trailverdict.test: high (Scores pick a tent.)" in user
    assert "- F1 Tent price filtering (core, read): Narrow the tents to a price range and order them." in user
    assert ("- fellgear.test:A1 (action AT21, Slider, for F1): Drag the price slider's handles to a price range "
            "and apply it.") in user  # fmt: skip
    assert "- trailverdict.test:P1 (perception PT22, Table, for F1)" in user
    assert "hutnet.test" not in user  # only the group's cards


# ---------------------------------------------------------------------------------------------- instances


def proposals_file(*extra_checks: tuple[str, dict[str, Any]], only: str | None = None) -> ProposalsFile:
    """The proposals as ``tasks propose`` wrote them (or ``only`` one), edited by a person as ``check`` says."""
    checks = {"prop-001": passed("Budget tents decide the scores read."), "prop-003": passed("The month decides."),
              "prop-005": passed("The region is given.", dynamic=False)}  # fmt: skip
    data: dict[str, Any] = {
        "made": {"snapshot_id": WORLD_ID, "model": MODEL, "prompts": {}},
        "cards_sha256": CARDS_SHA,
        "affinities": [],
        "proposals": [{**p, "id": pid, "pattern": p["pattern"], "checks": [{"by": "model", **json.loads(checks[pid])}]}
                      for pid, p in (("prop-001", BUDGET), ("prop-003", QUIETER), ("prop-005", FAN_OUT))
                      if only in (None, pid)],
    }  # fmt: skip
    for pid, check in extra_checks:
        next(p for p in data["proposals"] if p["id"] == pid)["checks"].append(check)
    return ProposalsFile.model_validate_json(json.dumps(data))


NO_POINT = {**RUBRIC, "children": RUBRIC["children"][:2]}  # the perception point is verified by no leaf


def instantiating(instance: dict[str, Any], *rubrics: dict[str, Any]) -> dict[tuple[str, str], str | list[str]]:
    return {("instantiate", "prop-001"): json.dumps(instance), ("rubric", "prop-001"): [json.dumps(r) for r in rubrics]}


async def test_an_instance_has_the_cards_points_pinned_values_and_the_rubric_make_rubric_wrote(
    world: SnapshotView,
) -> None:
    file = proposals_file(("prop-003", {"by": "person", "meaningful": False, "dynamic": True,
                                        "reason": "Nobody picks a hut this way."}))  # fmt: skip
    async with metered(instantiating(INSTANCE, RUBRIC)) as (fake, meter):
        tasks, rejections = await instantiate(file, CARDS, world, meter, max_attempts=3)

    # the model's and the person's rejections are skipped without a call
    assert asked(fake, "instantiate") == ["prop-001"] and asked(fake, "rubric") == ["prop-001"]
    assert rejections == [
        Rejection(candidate="prop-003", stage="proposal",
                  reason="rejected by a person (not meaningful): Nobody picks a hut this way."),
        Rejection(candidate="prop-005", stage="proposal",
                  reason="rejected by the model check (not dynamic): The region is given."),
    ]  # fmt: skip
    [task] = tasks
    assert (task.id, task.flow, task.start_url) == ("prop-001", "sequential", "https://www.fellgear.test/")
    assert task.description == DESCRIPTION
    assert task.sites == ["www.fellgear.test", "www.trailverdict.test"]
    assert task.covered_points == [
        CoveredPoint(id="fellgear-test-a1", type="action", code="AT21", site="www.fellgear.test",
                     description="Drag the price slider's handles to a price range and apply it."),
        CoveredPoint(id="trailverdict-test-a1", type="action", code="AT33", site="www.trailverdict.test",
                     description="Sort the comparison by a column."),
        CoveredPoint(id="trailverdict-test-p1", type="perception", code="PT22", site="www.trailverdict.test",
                     description="Tell which tent leads the sorted table."),
    ]  # fmt: skip
    assert task.expected == {"tent_name": "Fellside 2 Lite", "tent_price": "215", "tent_score": "8.6"}
    assert [o.name for o in task.outputs] == ["tent_name", "tent_price", "listing_url", "tent_score", "compare_url"]
    assert len(task.gold_path) == 12

    model_tree, pinned = task.rubric.children
    assert task.rubric.id == "prop-001-root"
    assert model_tree == RubricNode.model_validate(RUBRIC)
    assert pinned.id == "expected-values" and pinned.critical
    assert [(leaf.id, leaf.check) for leaf in pinned.children] == [
        ("expected-tent-name", SetMembership(check="set_membership", field="tent_name", values=["Fellside 2 Lite"],
                                             mode="one_of")),
        ("expected-tent-price", NumericRange(check="numeric_range", field="tent_price", min=215, max=215)),
        ("expected-tent-score", NumericRange(check="numeric_range", field="tent_score", min=8.6, max=8.6)),
    ]  # fmt: skip
    assert {stage: cost.calls for stage, cost in meter.cost().items()} == {"instantiate": 1, "rubric": 1}

    # the rubric call is make_rubric's own request, named first by stage and task
    [rubric_call] = fake.calls("messages")[1:]
    assert rubric_call.texts[1] == "Stage: rubric\nTask: prop-001"
    assert rubric_call.texts[2].startswith(f"Task: {DESCRIPTION}\n\nCovered points:\n- fellgear-test-a1 (action AT21")


async def test_the_instantiate_prompt_shows_the_items_where_they_are_and_what_their_pages_showed(
    world: SnapshotView,
) -> None:
    async with metered(instantiating(INSTANCE, RUBRIC)) as (fake, meter):
        await instantiate(proposals_file(only="prop-001"), CARDS, world, meter)
    user = fake.calls("messages")[0].texts[1]
    assert user.startswith("Stage: instantiate\nProposal: prop-001\n\nThe proposal:\n")
    assert f'on {TENTS} at .range-handle[data-handle="max"]' in user
    assert "- https://www.trailverdict.test/reviews/kestrel-2: Kestrel 2 review · TrailVerdict" in user
    assert "book.hutnet.test" not in user  # pages of other sites are not shown
    # the capture of the listing after the slider was applied, and the comparison sorted by score
    assert f"### {TENTS}?min=100&max=250 (loaded as {TENTS}): Tents · Fellgear" in user
    assert "5 tents from £100 to £250" in user
    assert "Fellside 2 Lite\t8.6\t1,420\t2\tKell Valley\t0" in user
    # and the markup the replay serves for it, where the selectors of the gold path's reads come from
    assert '<article class="product-card" data-slug="fellside-2-lite">' in user
    assert '<span class="price" data-value="215">£215</span>' in user
    assert "<script" not in user and "<head>" not in user


def test_markup_keeps_the_body_and_leaves_out_what_no_selector_needs() -> None:
    html = """<html><head><title>T</title><script>x()</script></head>
<body><!-- note --><style>p{}</style><p id="a">One</p>


<svg><path d="M0"/></svg><p class="b">Two</p></body></html>"""
    assert trimmed(html) == '<html>\n<body><p id="a">One</p>\n<p class="b">Two</p></body></html>'
    assert trimmed("<p>" + "x" * 50 + "</p>", limit=10) == "<p>xxxxxxx\n[... cut]"


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"covered_items": ["fellgear.test:A9"]}, "covered item 'fellgear.test:A9' is not in the cards"),
        ({"covered_items": ["shop.example:A1"]}, "covered item 'shop.example:A1' is not in the cards"),
        ({"expected": {"tent_name": "Fellside 2 Lite", "tent_price": "215"}},
         "no expected value for output 'tent_score'"),
        ({"expected": {**EXPECTED, "tent_name": ["Fellside 2 Lite"]}},
         "the expected value of 'tent_name' is a list, but the output is text"),
        ({"gold_path": [{"type": "goto", "url": "https://book.hutnet.test/"}, *GOLD_PATH]},
         "the task goes to 'book.hutnet.test', which is not a host of the proposal's sites "
         "(www.fellgear.test, www.trailverdict.test)"),
        ({"gold_path": GOLD_PATH[:-1]}, "task 'prop-001': the gold path never reads output 'tent_score'"),
        ({"gold_path": [{"type": "tap", "selector": "#x"}]}, "gold_path.0: Input tag 'tap' found using 'type'"),
        ({"start_url": "fellgear"}, "start_url.url: not an http(s) URL with a host: 'fellgear'"),
    ],
    ids=["unknown-item", "unknown-site", "missing-value", "list-for-text", "other-site", "unread", "bad-step", "url"],
)  # fmt: skip
async def test_an_unusable_instance_is_rejected_without_a_rubric_call(
    world: SnapshotView, change: dict[str, Any], reason: str
) -> None:
    async with metered(instantiating(INSTANCE | change, RUBRIC)) as (fake, meter):
        tasks, rejections = await instantiate(proposals_file(only="prop-001"), CARDS, world, meter)
    assert tasks == []
    assert rejections[0].candidate == "prop-001" and rejections[0].stage == "instance"
    assert rejections[0].reason.startswith(reason), rejections[0].reason
    assert asked(fake, "rubric") == []


async def test_no_valid_rubric_after_max_attempts_is_a_rubric_rejection(world: SnapshotView) -> None:
    async with metered(instantiating(INSTANCE, NO_POINT, NO_POINT, RUBRIC)) as (fake, meter):
        tasks, rejections = await instantiate(proposals_file(only="prop-001"), CARDS, world, meter, max_attempts=2)
    assert tasks == []
    assert rejections[0] == Rejection(
        candidate="prop-001",
        stage="rubric",
        reason="no valid rubric in 2 attempts; the last: covered point 'trailverdict-test-p1' (perception PT22) is "
        "verified by no leaf",
    )
    assert asked(fake, "rubric") == ["prop-001", "prop-001"]  # the valid third reply was never asked for
    assert meter.cost()["rubric"].calls == 2


def test_expected_numbers_become_text_and_lists_stay_lists() -> None:
    outputs = [
        {"name": "tents", "type": "text_list", "role": "user_value", "description": "d"},
        {"name": "weight", "type": "number", "role": "condition_check", "description": "d"},
        {"name": "page", "type": "url", "role": "provenance_url", "description": "d"},
    ]
    typed = [ExpectedOutput.model_validate(o) for o in outputs]
    assert expected_values({"tents": ["Corrie 1", "Tarn 1 Bivvy"], "weight": 1150.0}, typed) == {
        "tents": ["Corrie 1", "Tarn 1 Bivvy"],
        "weight": "1150",
    }
    assert expected_values({"tents": ["Corrie 1"], "weight": True}, typed) == (
        "the expected value of 'weight' is not text, a number or a list of them"
    )


def test_a_proposal_a_person_rejects_in_the_file_is_rejected() -> None:
    file = proposals_file(("prop-001", {"by": "person", "meaningful": True, "dynamic": False}))
    first: Proposal = file.proposals[0]
    assert first.rejected == ProposalCheck(by="person", meaningful=True, dynamic=False)


# ---------------------------------------------------------------------------------------------- the files


async def test_write_proposals_reads_the_cards_file_and_writes_what_it_returns(tmp_path: Path) -> None:
    cards_path, out = tmp_path / "cards.json", tmp_path / "proposals.json"
    cards_path.write_text(CARDS.model_dump_json(indent=1), encoding="utf-8")
    async with metered(PROPOSE) as (_, meter):
        made = await write_proposals(cards_path, out, meter.client, meter.client.settings, per_call=2)
    assert ProposalsFile.model_validate_json(out.read_bytes()) == made
    assert made.cards_sha256 == hashlib.sha256(cards_path.read_bytes()).hexdigest()
    assert made.made.model == {"provider": "anthropic", "model": "claude-test", "max_tokens": 8000,
                               "thinking": None, "temperature": None}  # fmt: skip
    assert [p.id for p in made.proposals] == ["prop-001", "prop-003", "prop-005"]


async def test_write_proposals_names_the_cards_file_it_cannot_use(tmp_path: Path) -> None:
    cards_path = tmp_path / "cards.json"
    many = [_card(f"site{n:02d}.test", f"www.site{n:02d}.test", [("F1", "Browse", "Look around.")], [])
            for n in range(MAX_SITES + 1)]  # fmt: skip
    cards_path.write_text(CARDS.model_copy(update={"cards": many}).model_dump_json(), encoding="utf-8")
    settings = ModelSettings(model="claude-test", max_tokens=100, base_url="http://127.0.0.1:9")
    client = make_client(settings, api_key="test")
    try:
        with pytest.raises(InputError) as raised:
            await write_proposals(cards_path, tmp_path / "out.json", client, settings)
        assert raised.value.where == str(cards_path) and "13 sites" in raised.value.message
        cards_path.write_text("{}", encoding="utf-8")
        with pytest.raises(InputError, match="not a cards file"):
            await write_proposals(cards_path, tmp_path / "out.json", client, settings)
    finally:
        await client.aclose()
    assert not (tmp_path / "out.json").exists()
