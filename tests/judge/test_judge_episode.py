"""The judge on a real snapshot: grounded checks render cited pages offline; free text goes through the real SDK
to the fake Messages API, cached, so judging again makes no call."""

from __future__ import annotations

import asyncio
import json
from contextlib import AsyncExitStack
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from capreplay.judge.episode import NO_MODEL, Judge, judge_episode
from capreplay.judge.ground import Grounding
from capreplay.judge.verdict import EpisodeVerdict
from capreplay.llm import make_client
from capreplay.llm.messages import ModelSettings
from capreplay.models.episode import EpisodeKey, EpisodeRecord
from capreplay.models.workflow import WorkflowTask
from capreplay.testing.fake_llm import FakeLLM, Received

pytestmark = pytest.mark.browser  # grounding re-opens the cited pages in Chromium

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "snapshots" / "fixtures"
HOME = "https://www.shop.test/"

TASK = WorkflowTask.model_validate(
    {
        "id": "mug",
        "description": "Find the cheapest mug in the fixture shop: its name, price, stock, and the page.",
        "sites": ["www.shop.test", "static.cdn.test"],
        "flow": "sequential",
        "start_url": HOME,
        "covered_points": [
            {
                "id": "read-card",
                "type": "perception",
                "code": "PT18",
                "site": "www.shop.test",
                "description": "read the product card",
            },
            {"id": "open", "type": "action", "code": "AT38", "site": "www.shop.test", "description": "open the list"},
        ],
        "outputs": [
            {"name": "name", "type": "text", "role": "user_value", "description": "the product's name"},
            {"name": "price", "type": "number", "role": "user_value", "description": "its price in EUR"},
            {"name": "stock", "type": "text", "role": "condition_check", "description": "its stock line"},
            {"name": "page", "type": "url", "role": "provenance_url", "description": "where it was read"},
            {"name": "seen", "type": "url_list", "role": "provenance_url", "description": "pages visited"},
        ],
        "rubric": {
            "id": "root",
            "description": "the mug is found",
            "children": [
                {
                    "id": "shop",
                    "description": "on the shop",
                    "children": [
                        {
                            "id": "opened",
                            "description": "the shop page is cited",
                            "critical": True,
                            "kind": "action",
                            "point": "open",
                            "check": {"check": "url_in_snapshot", "field": "seen"},
                        },
                        {
                            "id": "name-on-page",
                            "description": "name on the page",
                            "critical": True,
                            "kind": "perception",
                            "point": "read-card",
                            "check": {"check": "claim_on_page", "field": "name", "url_field": "page"},
                        },
                        {
                            "id": "price-on-page",
                            "description": "price on the page",
                            "kind": "perception",
                            "check": {
                                "check": "claim_on_page",
                                "field": "price",
                                "url_field": "page",
                                "match": "number",
                                "tolerance": 0.005,
                            },
                        },
                        {
                            "id": "price-range",
                            "description": "price plausible",
                            "kind": "other",
                            "check": {"check": "numeric_range", "field": "price", "min": 10, "max": 15},
                        },
                        {
                            "id": "stock-said",
                            "description": "stock in the page's words",
                            "kind": "other",
                            "check": {"check": "regex", "field": "stock", "pattern": r"\d+ in stock"},
                        },
                    ],
                }
            ],
        },
        "gold_path": [
            {"type": "read", "output": "name", "selector": "#products .product h3"},
            {"type": "read", "output": "price", "selector": "#products .price", "pattern": r"[\d.]+"},
            {"type": "read", "output": "stock", "selector": "#stock li"},
            {"type": "read", "output": "page", "source": "url"},
            {"type": "read", "output": "seen", "source": "url", "many": True},
        ],
    }
)
GOLD = {"name": "Fixture Mug", "price": "12.50", "stock": "mug: 17 in stock", "page": HOME, "seen": [HOME]}


def episode(answer: str | None, n: int = 0) -> EpisodeRecord:
    return EpisodeRecord(
        key=EpisodeKey(repeat=n, task=TASK.id, agent="test"),
        started_at=datetime(2026, 12, 1, tzinfo=UTC),
        duration_s=1.0,
        status="answered",
        answer=answer,
        start_url=HOME,
    )


def run_judged(
    answers: list[str | None], script: Any = None, cache: Path | None = None
) -> tuple[list[EpisodeVerdict], list[Received]]:
    """Judge one episode per answer; with ``script``, the judge's model is the fake API answering from it."""

    async def go() -> tuple[list[EpisodeVerdict], list[Received]]:
        async with AsyncExitStack() as stack:
            client = None
            received: list[Received] = []
            if script is not None:
                fake = FakeLLM(script)
                await stack.enter_async_context(fake)
                received = fake.received
                settings = ModelSettings(model="claude-judge", max_tokens=500, base_url=fake.base_url, timeout_s=10)
                client = make_client(settings, cache_dir=cache, api_key="judge-key")
            grounding = await stack.enter_async_context(Grounding(FIXTURES))
            judge = Judge(grounding, client)
            return [await judge_episode(episode(a, i), TASK, judge) for i, a in enumerate(answers)], received

    return asyncio.run(go())


def leaf(verdict: EpisodeVerdict, node: str) -> Any:
    return next(v for v in verdict.leaves if v.node == node)


def test_the_gold_answer_scores_one_with_evidence_from_the_archive() -> None:
    (verdict,), _ = run_judged([json.dumps(GOLD)])
    assert verdict.scored and verdict.score == 1.0 and verdict.passed
    assert verdict.extraction is not None and verdict.extraction.method == "json"
    name = leaf(verdict, "name-on-page")
    assert name.evidence[0].url == HOME
    assert name.evidence[0].record_id and name.evidence[0].record_id.startswith("<urn:uuid:")
    assert name.evidence[0].payload_digest and name.evidence[0].payload_digest.startswith("sha256:")
    assert "Fixture Mug" in name.evidence[0].snippet


def test_one_wrong_value_fails_exactly_the_leaves_that_cite_it() -> None:
    wrong = {**GOLD, "price": "11.00"}
    (verdict,), _ = run_judged([json.dumps(wrong)])
    failed = {v.node for v in verdict.leaves if not v.passed}
    assert failed == {"price-on-page"}
    # price-on-page is not critical: its parent averages its non-critical children (2 of 3 pass).
    assert verdict.node_scores["shop"] == pytest.approx(2 / 3)
    assert verdict.score == pytest.approx(2 / 3)
    assert verdict.passed is False


def test_a_cited_url_missing_from_the_snapshot_fails_its_claims_and_gates_the_step() -> None:
    missing = "https://www.shop.test/never-captured"
    (verdict,), _ = run_judged([json.dumps({**GOLD, "page": missing, "seen": [HOME, missing]})])
    failed = {v.node for v in verdict.leaves if not v.passed}
    assert failed == {"opened", "name-on-page", "price-on-page"}
    assert "not in the snapshot" in leaf(verdict, "name-on-page").reason
    assert verdict.score == 0.0


def test_a_page_captured_with_different_content_fails_the_claim() -> None:
    # The lazy page exists in the snapshot but does not show the mug's price.
    (verdict,), _ = run_judged([json.dumps({**GOLD, "page": "https://www.shop.test/clock"})])
    assert not leaf(verdict, "name-on-page").passed
    assert "is not on https://www.shop.test/clock" in leaf(verdict, "name-on-page").reason


def test_no_answer_fails_every_leaf_but_is_scored() -> None:
    (verdict,), _ = run_judged([None])
    assert verdict.scored and verdict.score == 0.0
    assert all(not v.passed for v in verdict.leaves)


def test_free_text_needs_the_judge_model_and_is_unscored_without_one() -> None:
    (verdict,), _ = run_judged(["The mug is the Fixture Mug at 12.50 EUR."])
    assert not verdict.scored and verdict.score is None
    assert verdict.unscored == NO_MODEL.format(what="free-text answer (extraction)")


def test_free_text_is_read_by_the_model_once_then_from_the_cache(tmp_path: Path) -> None:
    text = "I found the Fixture Mug for 12.50 EUR (mug: 17 in stock) on https://www.shop.test/."
    (first,), calls = run_judged([text], json.dumps(GOLD), tmp_path)
    (again,), calls_again = run_judged([text], json.dumps(GOLD), tmp_path)
    assert len(calls) == 1 and calls_again == []
    sent = calls[0].headers
    assert "judge-key" in (sent.get("x-api-key"), sent.get("authorization", "").removeprefix("Bearer "))
    assert text in calls[0].prompt
    for verdict in (first, again):
        assert verdict.scored and verdict.score == 1.0
    assert first.extraction and not first.extraction.cached
    assert again.extraction and again.extraction.cached
    assert first.model_dump(exclude={"judge_s", "extraction"}) == again.model_dump(exclude={"judge_s", "extraction"})


def test_an_extraction_reply_that_cannot_be_parsed_leaves_the_episode_unscored(tmp_path: Path) -> None:
    (verdict,), _ = run_judged(["the mug"], "Sorry, I cannot help with that.", tmp_path)
    assert not verdict.scored
    assert verdict.unscored == "the extraction reply is unusable: the reply holds no JSON object"
