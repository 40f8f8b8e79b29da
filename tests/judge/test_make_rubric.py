"""make-rubric: the prompt, the parsing of replies, and the repair loop with the real SDK against the fake model API."""

from __future__ import annotations

import json
import math
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest

from capreplay.errors import ModelError
from capreplay.judge.make_rubric import (
    CHECK_GUIDE,
    EXAMPLE_OUTPUTS,
    EXAMPLE_POINTS,
    EXAMPLE_RUBRIC,
    EXAMPLE_RUBRIC_JSON,
    MAX_PROBLEMS,
    make_rubric,
    parse_rubric,
    rubric_prompt,
    system_prompt,
)
from capreplay.llm import ModelClient, ModelSettings, TextBlock, make_client
from capreplay.models.rubric import CHECK_NAMES, RubricNode
from capreplay.models.workflow import CoveredPoint, ExpectedOutput, rubric_problems
from capreplay.testing.fake_llm import FakeLLM, Reply, Script

TASK = (
    "Find the city with the most sunshine hours in June on climate.example, sorting the table by sunshine, "
    "then read its highest June temperature from the chart on weather.example."
)
POINTS = [
    CoveredPoint(id="sort_table", type="action", code="AT18", site="climate.example", description="Sort by sunshine."),
    CoveredPoint(id="read_chart", type="perception", code="PT20", site="weather.example", description="Read a bar."),
]
OUTPUTS = [
    ExpectedOutput(name="city", type="text", role="user_value", description="The sunniest city."),
    ExpectedOutput(name="city_url", type="url", role="provenance_url", description="Where the city was read."),
    ExpectedOutput(name="temperature", type="number", role="user_value", description="Its June maximum in °C."),
    ExpectedOutput(name="chart_url", type="url", role="provenance_url", description="The chart's page."),
]


def leaf(node_id: str, kind: str, check: dict[str, Any], point: str | None = None) -> dict[str, Any]:
    """A critical leaf as a model would write it."""
    node = {"id": node_id, "description": f"checks {node_id}", "critical": True, "kind": kind, "check": check}
    return node | ({"point": point} if point else {})


def rubric_data(*, first_check: str = "claim_on_page", chart_point: str | None = "read_chart") -> dict[str, Any]:
    """A rubric for the task above; the arguments break it the ways the tests need."""
    city = {"check": first_check, "field": "city", "url_field": "city_url"}
    temperature = {"check": "claim_on_page", "field": "temperature", "url_field": "chart_url", "match": "number"}
    return {
        "id": "root",
        "description": "Overall task completion",
        "children": [
            leaf("city_cited", "action", city, "sort_table"),
            leaf("city_page", "other", {"check": "url_in_snapshot", "field": "city_url"}),
            leaf("temperature_cited", "perception", temperature, chart_point),
        ],
    }


VALID = json.dumps(rubric_data())
UNKNOWN_CHECK = json.dumps(rubric_data(first_check="looks_right"))
POINT_NOT_REACHED = json.dumps(rubric_data(chart_point=None))
BAD_JSON = VALID[:-1] + ",]"


def test_the_example_in_the_prompt_is_a_valid_rubric_of_its_toy_task() -> None:
    assert rubric_problems(EXAMPLE_RUBRIC, EXAMPLE_OUTPUTS, EXAMPLE_POINTS) == []
    assert EXAMPLE_RUBRIC_JSON in system_prompt()
    assert {p.site for p in EXAMPLE_POINTS}.isdisjoint({p.site for p in POINTS})


def test_the_prompt_explains_every_whitelisted_check_and_lists_the_task() -> None:
    request = rubric_prompt(TASK, POINTS, OUTPUTS)
    assert set(CHECK_GUIDE) == set(CHECK_NAMES)  # a new check needs its description in the prompt
    for name in CHECK_NAMES:
        assert f"- {name}: {CHECK_GUIDE[name]}" in request.system
    assert "gating" in request.system and "averaging" in request.system
    assert "may only use values\nstated in the task description" in request.system
    assert '"$defs"' in request.system and '"title"' not in request.system
    [block] = request.content
    assert isinstance(block, TextBlock)
    assert block.text.startswith(f"Task: {TASK}\n")
    assert "- sort_table (action AT18, on climate.example): Sort by sunshine." in block.text
    assert "- temperature (number, user_value): Its June maximum in °C." in block.text
    assert "- chart_url (url, provenance_url): The chart's page." in block.text
    assert "ONE JSON object" in block.text


@pytest.mark.parametrize(
    "reply",
    [
        VALID,
        f"```json\n{VALID}\n```",
        f"Here is the rubric {{as asked}}:\n```\n{VALID}\n```\nDone.",
        f"Sure! {VALID} ok",
    ],
    ids=["bare", "fenced", "fence-after-prose-with-braces", "after-prose"],
)
def test_a_rubric_is_read_bare_fenced_or_after_prose(reply: str) -> None:
    rubric = parse_rubric(reply, POINTS, OUTPUTS)
    assert isinstance(rubric, RubricNode)
    assert [leaf.id for leaf in rubric.leaves()] == ["city_cited", "city_page", "temperature_cited"]


@pytest.mark.parametrize(
    ("reply", "problem"),
    [
        (UNKNOWN_CHECK, "children[0].check (node 'city_cited'): Input tag 'looks_right' found using 'check' does not"),
        (POINT_NOT_REACHED, "covered point 'read_chart' (perception PT20) is verified by no leaf"),
        (BAD_JSON, "not valid JSON: Expecting property name enclosed in double quotes at line 1"),
        ("I cannot do that.", "the reply holds no JSON object"),
        ('{"id": "root", "description": "x", "children": [], "check": {"check": "regex", "field": "city", '
         '"pattern": "("}}', "check.pattern (node 'root'): pattern '(' is not a valid regular expression"),
    ],
    ids=["unknown-check", "point-not-reached", "bad-json", "no-json", "bad-pattern"],
)  # fmt: skip
def test_an_invalid_reply_gives_readable_problems(reply: str, problem: str) -> None:
    problems = parse_rubric(reply, POINTS, OUTPUTS)
    assert isinstance(problems, list)
    assert any(p.startswith(problem) for p in problems), problems


def test_a_flood_of_problems_is_cut_short() -> None:
    broken = {"id": "root", "description": "x", "children": [{"id": f"n{i}", "description": "x"} for i in range(30)]}
    problems = parse_rubric(json.dumps(broken), POINTS, OUTPUTS)
    assert isinstance(problems, list) and len(problems) == MAX_PROBLEMS + 1
    assert problems[-1] == "... and 10 more problems"


@pytest.fixture(autouse=True)
def no_model_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """No setting from the environment may send a call anywhere but the fake server."""
    for name in ("ANTHROPIC_BASE_URL", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_CUSTOM_HEADERS", "ANTHROPIC_LOG"):
        monkeypatch.delenv(name, raising=False)


@asynccontextmanager
async def fake_client(script: Script, max_tokens: int = 2000) -> AsyncIterator[tuple[FakeLLM, ModelClient]]:
    """The fake model API running ``script``, and a real Anthropic client pointed at it."""
    async with FakeLLM(script) as fake:
        settings = ModelSettings(model="claude-x", max_tokens=max_tokens, timeout_s=10.0, base_url=fake.base_url)
        client = make_client(settings, api_key="test")
        try:
            yield fake, client
        finally:
            await client.aclose()


async def test_a_valid_first_reply_is_the_rubric() -> None:
    async with fake_client([VALID]) as (fake, client):
        result = await make_rubric(client, TASK, POINTS, OUTPUTS, max_attempts=3)
    assert result.rubric == RubricNode.model_validate_json(VALID)
    [attempt] = result.attempts
    assert (attempt.reply_text, attempt.problems, attempt.stop_reason) == (VALID, [], "end_turn")
    assert attempt.usage.output_tokens == math.ceil(len(VALID) / 4)  # the fake's token rule
    [sent] = fake.received
    [user] = rubric_prompt(TASK, POINTS, OUTPUTS).content
    assert isinstance(user, TextBlock) and sent.texts == [system_prompt(), user.text]


@pytest.mark.parametrize("invalid", [UNKNOWN_CHECK, POINT_NOT_REACHED, BAD_JSON], ids=["check", "point", "json"])
async def test_an_invalid_reply_is_sent_back_with_its_problems(invalid: str) -> None:
    async with fake_client([invalid, VALID]) as (fake, client):
        result = await make_rubric(client, TASK, POINTS, OUTPUTS, max_attempts=3)
    assert result.rubric is not None and len(result.attempts) == 2
    first_problems = result.attempts[0].problems
    assert first_problems and first_problems == parse_rubric(invalid, POINTS, OUTPUTS)
    assert result.attempts[1].problems == []

    original, repair = fake.received
    assert repair.texts[:2] == original.texts  # the original request, repeated
    assert f"<reply>\n{invalid}\n</reply>" in repair.texts[2]
    for problem in first_problems:
        assert f"- {problem}\n" in repair.texts[2]


async def test_after_max_attempts_there_is_no_rubric_and_every_attempt_is_kept() -> None:
    replies = [UNKNOWN_CHECK, BAD_JSON, POINT_NOT_REACHED, VALID]
    async with fake_client(replies) as (fake, client):
        result = await make_rubric(client, TASK, POINTS, OUTPUTS, max_attempts=3)
    assert result.rubric is None
    assert [a.reply_text for a in result.attempts] == replies[:3]
    assert all(a.problems for a in result.attempts)
    assert len(fake.received) == 3  # the valid fourth reply was never asked for
    # each repair quotes only the reply before it, so the prompt does not grow from attempt to attempt
    third = fake.received[2].texts
    assert len(third) == 3 and BAD_JSON in third[2] and UNKNOWN_CHECK not in third[2]


async def test_a_reply_cut_at_the_token_limit_says_so() -> None:
    async with fake_client([VALID], max_tokens=40) as (_, client):
        result = await make_rubric(client, TASK, POINTS, OUTPUTS, max_attempts=1)
    [attempt] = result.attempts
    assert result.rubric is None and attempt.stop_reason == "max_tokens" and len(attempt.reply_text) == 160
    assert attempt.problems[0].startswith("the reply was cut off at the output token limit")
    assert attempt.problems[1].startswith("not valid JSON")


async def test_a_failed_call_raises_model_error_and_is_not_retried() -> None:
    async with fake_client([Reply(status=500, message="overloaded"), VALID]) as (fake, client):
        with pytest.raises(ModelError) as caught:
            await make_rubric(client, TASK, POINTS, OUTPUTS, max_attempts=3)
    assert (caught.value.kind, caught.value.status) == ("api_status", 500)
    assert len(fake.received) == 1


@pytest.mark.parametrize("attempts", [0, -1])
async def test_max_attempts_below_one_is_refused(attempts: int) -> None:
    async with fake_client([VALID]) as (fake, client):
        with pytest.raises(ValueError, match="max_attempts"):
            await make_rubric(client, TASK, POINTS, OUTPUTS, max_attempts=attempts)
    assert fake.received == []
