"""make-rubric: a model writes a task's rubric tree, which is validated and repaired a bounded number of times.

CAP (section 4.2) has a model generate an evaluation script under an API whitelist and repair it when it
fails. Here the model writes declarative data instead, a :class:`RubricNode` tree whose leaves use only the
whitelisted checks, and "fails" means it does not validate: not JSON, not the schema, or
:func:`capreplay.models.workflow.rubric_problems` finds it cannot judge the task. Each invalid reply is sent
back with its problems for a corrected one, at most ``max_attempts`` calls in all. A model call that fails
raises :class:`capreplay.errors.ModelError` and is never retried.

:func:`rubric_prompt`, :func:`parse_rubric` and :func:`repair_request` are pure; :func:`make_rubric` is the
loop that calls the model.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from capreplay.llm import ModelClient, ModelRequest, TextBlock, Usage
from capreplay.llm.reply import json_object
from capreplay.models.rubric import CHECK_NAMES, RubricNode
from capreplay.models.workflow import CoveredPoint, ExpectedOutput, rubric_problems

MAX_PROBLEMS = 20
"""Problems reported for one reply; more are summarised, so a badly broken reply cannot flood the next prompt."""

# The worked example in the prompt: a toy task, not one of the repository's, so it gives away no answer.
EXAMPLE_TASK = (
    "I need a rain jacket under $90 on gearshop.example rated at least 4 stars. Then find that jacket's "
    "waterproof rating (in mm) on outdoorreviews.example. Tell me the jacket, its price and rating, the "
    "waterproof rating, and the pages you read them on."
)
EXAMPLE_POINTS = [
    CoveredPoint.model_validate(point)
    for point in (
        {"id": "price_slider", "type": "action", "code": "AT21", "site": "gearshop.example",
         "description": "Drag the price range slider to at most $90."},
        {"id": "rating_badge", "type": "perception", "code": "PT07", "site": "gearshop.example",
         "description": "Read the star rating badge on the product card."},
        {"id": "specs_tab", "type": "action", "code": "AT07", "site": "outdoorreviews.example",
         "description": "Open the review's Specs tab, where the waterproof rating is."},
    )
]  # fmt: skip
EXAMPLE_OUTPUTS = [
    ExpectedOutput(name="jacket", type="text", role="user_value", description="The jacket's name."),
    ExpectedOutput(name="price", type="number", role="condition_check", description="Its price in dollars."),
    ExpectedOutput(name="rating", type="number", role="condition_check", description="Its star rating."),
    ExpectedOutput(name="shop_url", type="url", role="provenance_url", description="The jacket's shop page."),
    ExpectedOutput(name="waterproof_mm", type="number", role="user_value", description="Its waterproof rating."),
    ExpectedOutput(name="review_url", type="url", role="provenance_url", description="The review page."),
]
EXAMPLE_RUBRIC_JSON = """\
{"id": "root", "description": "Overall task completion", "children": [
  {"id": "shop", "description": "gearshop.example: a jacket under $90 rated 4 stars or more", "children": [
    {"id": "price_limit", "description": "Price at most $90 (the slider was applied)", "critical": true,
     "kind": "action", "point": "price_slider", "check": {"check": "numeric_range", "field": "price", "max": 90}},
    {"id": "price_cited", "description": "The price is on the cited shop page", "critical": true, "kind": "other",
     "check": {"check": "claim_on_page", "field": "price", "url_field": "shop_url", "match": "number",
               "tolerance": 0.01}},
    {"id": "rating_min", "description": "Rating at least 4 stars", "critical": true, "kind": "perception",
     "point": "rating_badge", "check": {"check": "numeric_range", "field": "rating", "min": 4}},
    {"id": "rating_cited", "description": "The rating is the one on the cited shop page", "kind": "perception",
     "point": "rating_badge", "check": {"check": "claim_on_page", "field": "rating", "url_field": "shop_url",
                                        "match": "number", "tolerance": 0.05}},
    {"id": "jacket_cited", "description": "The jacket is on the cited shop page", "critical": true, "kind": "other",
     "check": {"check": "claim_on_page", "field": "jacket", "url_field": "shop_url"}}]},
  {"id": "review", "description": "outdoorreviews.example: the jacket's waterproof rating", "children": [
    {"id": "review_page", "description": "The review page is a real page", "critical": true, "kind": "other",
     "check": {"check": "url_in_snapshot", "field": "review_url"}},
    {"id": "waterproof_cited", "description": "The waterproof rating is on the review page", "critical": true,
     "kind": "action", "point": "specs_tab", "check": {"check": "claim_on_page", "field": "waterproof_mm",
                                                       "url_field": "review_url", "match": "number"}},
    {"id": "same_jacket", "description": "The review is about the chosen jacket", "kind": "other",
     "check": {"check": "claim_on_page", "field": "jacket", "url_field": "review_url", "match": "model",
               "claim": "This page reviews the jacket {value}."}}]}]}"""
EXAMPLE_RUBRIC = RubricNode.model_validate_json(EXAMPLE_RUBRIC_JSON)

CHECK_GUIDE: dict[str, str] = {
    "numeric_range": "a number output lies in [min, max] (give min, max or both). Bounds must come from the task "
    "description, e.g. 'under $90' gives max 90.",
    "regex": "a text output matches a Python regular expression (anywhere, or in full with full: true); for the "
    "shape of a value (a date, an ISBN, a title containing a word the task names).",
    "set_membership": "membership in a set of texts stated in the task: one_of (a single value is one of values), "
    "all_in (every item of a list is), contains_all (a list holds every one of values).",
    "count": "a list output has between min and max distinct items, e.g. the three hotels the user asked for.",
    "url_in_snapshot": "a url or url_list output names pages that exist in the frozen snapshot the agent browsed: "
    "the answer cites real pages, not invented ones.",
    "claim_on_page": "a single value holds on the page cited for it in url_field (a url output), rendered from the "
    "same snapshot: match number (within tolerance), text (the value's text occurs on the page) or model (a model "
    "reads the page and says whether claim holds; claim contains '{value}').",
}
"""A plain description of each whitelisted check, for the prompt."""

_SYSTEM = """\
You write rubric trees for a judge that scores a web agent's answer to a task spanning several websites.
A rubric tree is JSON data, never code. The answer gives named outputs (listed with the task); every check
reads one or two of them by name. The sites were frozen in a snapshot, so the judge can open the very pages
the answer cites.

# Nodes
An inner node has "id", "description", "critical" and "children". A leaf has "id", "description",
"critical", "kind" ("action", "perception" or "other"), optionally "point" (the id of the covered point it
verifies) and "check". Node ids are unique in the tree.

# Scoring
A leaf scores 1 if its check passes, else 0. An inner node scores 0 if any critical child scores below 1
(gating); otherwise it scores the mean of its non-critical children, or 1 when it has none (averaging).
The root's score is the task's score. Make a node critical when the task cannot count as done without it
(a required filter, a site the task must visit, the value the user asked for); leave it non-critical where
partial credit is fair. Group the leaves of each site or step under an inner node.

# Checks (the only ones allowed)
{checks}

# Covered points
Every covered point must be verified by at least one leaf whose "point" is the point's id and whose "kind"
is the point's type (action or perception). Verify an action by what it leaves behind (the filtered value
obeys the filter, the value only reachable by the action is on the cited page); verify a perception by the
value it reads, checked on the cited page. Leaves about nothing but format or sources have kind "other".

# Values you do not know
You see the task, never the pages, so you do not know the correct answer. A check that compares the answer
to a fixed value (numeric_range bounds, set_membership values, a regex spelling a value) may only use values
stated in the task description. Everything else must be grounded in the pages the answer cites:
claim_on_page, url_in_snapshot, count, or regex for the shape of a value.

# JSON Schema of a node
{schema}

# Example
Task: {example_task}
Covered points:
{example_points}
Expected outputs:
{example_outputs}
Rubric:
{example_rubric}

# Reply
Reply with ONE JSON object, the root node, and nothing else: no code, no prose, no Markdown."""

_REPLY_RULE = "Reply with ONE JSON object, the root node, and nothing else."


def _without_titles(schema: Any) -> Any:
    # pydantic's "title" keywords only repeat the property names; dropping them shortens the prompt by a third
    if isinstance(schema, dict):
        return {k: _without_titles(v) for k, v in schema.items() if not (k == "title" and isinstance(v, str))}
    if isinstance(schema, list):
        return [_without_titles(v) for v in schema]
    return schema


def rubric_schema() -> str:
    """The JSON Schema of :class:`RubricNode`, compact and without titles, as the prompt shows it."""
    return json.dumps(_without_titles(RubricNode.model_json_schema()), separators=(",", ":"))


def points_text(covered_points: Sequence[CoveredPoint]) -> str:
    """One line per covered point: id, type, code, site and description."""
    return "\n".join(f"- {p.id} ({p.type} {p.code}, on {p.site}): {p.description}" for p in covered_points)


def outputs_text(outputs: Sequence[ExpectedOutput]) -> str:
    """One line per expected output: name, type, role and description."""
    return "\n".join(f"- {o.name} ({o.type}, {o.role}): {o.description}" for o in outputs)


def system_prompt() -> str:
    """The system prompt: the schema, the checks, the scoring rule, the rule on values and a worked example."""
    return _SYSTEM.format(
        checks="\n".join(f"- {name}: {CHECK_GUIDE[name]}" for name in CHECK_NAMES),
        schema=rubric_schema(),
        example_task=EXAMPLE_TASK,
        example_points=points_text(EXAMPLE_POINTS),
        example_outputs=outputs_text(EXAMPLE_OUTPUTS),
        example_rubric=EXAMPLE_RUBRIC_JSON,
    )


def rubric_prompt(
    task_description: str, covered_points: Sequence[CoveredPoint], outputs: Sequence[ExpectedOutput]
) -> ModelRequest:
    """The request asking a model for the rubric tree of one task."""
    user = (
        f"Task: {task_description}\n\nCovered points:\n{points_text(covered_points)}\n\n"
        f"Expected outputs:\n{outputs_text(outputs)}\n\nWrite the rubric tree of this task. {_REPLY_RULE}"
    )
    return ModelRequest.of(user, system=system_prompt())


def repair_request(request: ModelRequest, reply_text: str, problems: Sequence[str]) -> ModelRequest:
    """``request`` again, followed by the invalid reply and its problems and a request for a corrected object.

    Requests are single-turn, so the previous reply is quoted in the user message rather than sent as an
    assistant turn.
    """
    listed = "\n".join(f"- {p}" for p in problems)
    repair = (
        f"Your previous reply was:\n<reply>\n{reply_text}\n</reply>\n\nIt is not a valid rubric:\n{listed}\n\n"
        f"Write the corrected rubric tree. {_REPLY_RULE}"
    )
    return request.model_copy(update={"content": [*request.content, TextBlock(text=repair)]})


def _where(loc: tuple[int | str, ...], data: Any) -> str:
    """A readable place for a pydantic error: ``children[1].check.pattern (node 'b')``.

    The tag pydantic puts in the path of a check (``check.regex.pattern``) is dropped, and the id of the
    deepest node on the path is named, since ids are what the model wrote.
    """
    parts: list[str] = []
    node_id = data.get("id") if isinstance(data, dict) else None
    cursor: Any = data
    for i, step in enumerate(loc):
        if isinstance(step, str) and step in CHECK_NAMES and isinstance(cursor, dict) and cursor.get("check") == step:
            continue
        parts.append(f"[{step}]" if isinstance(step, int) else f".{step}" if parts else step)
        if isinstance(cursor, dict):
            cursor = cursor.get(step) if isinstance(step, str) else None
        elif isinstance(cursor, list) and isinstance(step, int) and 0 <= step < len(cursor):
            cursor = cursor[step]
        else:
            cursor = None
        if isinstance(step, int) and i > 0 and loc[i - 1] == "children" and isinstance(cursor, dict):
            node_id = cursor.get("id")
    path = "".join(parts) or "root node"
    return f"{path} (node {node_id!r})" if isinstance(node_id, str) and parts else path


def _validation_lines(error: ValidationError, data: Any) -> list[str]:
    lines = []
    for item in error.errors():
        message = item["msg"].removeprefix("Value error, ")
        lines.append(f"{_where(tuple(item['loc']), data)}: {message}")
    return lines


def parse_rubric(
    text: str, covered_points: Sequence[CoveredPoint], outputs: Sequence[ExpectedOutput]
) -> RubricNode | list[str]:
    """The rubric tree in a model's reply, or the problems that make it unusable, one line each.

    The reply may be bare JSON, JSON in a code fence, or JSON after prose (the first object is taken). The
    tree must validate as a :class:`RubricNode` and pass :func:`rubric_problems` for these points and outputs.
    """
    data = json_object(text)
    if isinstance(data, str):
        return [data]
    try:
        rubric = RubricNode.model_validate(data)
    except ValidationError as e:
        problems = _validation_lines(e, data)
    else:
        problems = rubric_problems(rubric, list(outputs), list(covered_points))
        if not problems:
            return rubric
    if len(problems) > MAX_PROBLEMS:
        problems = [*problems[:MAX_PROBLEMS], f"... and {len(problems) - MAX_PROBLEMS} more problems"]
    return problems


class RubricAttempt(BaseModel):
    """One model call of make-rubric and what was wrong with its reply."""

    model_config = ConfigDict(frozen=True)

    reply_text: str = Field(description="The reply as the model sent it.")
    problems: list[str] = Field(description="Why the reply is not a usable rubric; empty when it is.")
    usage: Usage = Field(description="Tokens the call consumed.")
    stop_reason: str | None = Field(None, description="Why generation stopped, as the provider said.")


class MakeRubricResult(BaseModel):
    """The rubric a model wrote, or None when every attempt was invalid, and each attempt in order."""

    model_config = ConfigDict(frozen=True)

    rubric: RubricNode | None = Field(description="The first valid rubric; None if no attempt gave one.")
    attempts: list[RubricAttempt] = Field(description="Every call made, in order; the last is the valid one if any.")


async def make_rubric(
    client: ModelClient,
    task_description: str,
    covered_points: Sequence[CoveredPoint],
    outputs: Sequence[ExpectedOutput],
    *,
    max_attempts: int,
) -> MakeRubricResult:
    """Ask ``client`` for the task's rubric, sending each invalid reply back with its problems.

    Stops at the first valid rubric or after ``max_attempts`` calls. A failed call raises
    :class:`capreplay.errors.ModelError` and ends the attempts: it is never retried.
    """
    if max_attempts < 1:
        raise ValueError(f"max_attempts must be at least 1, not {max_attempts}")
    first = rubric_prompt(task_description, covered_points, outputs)
    request = first
    attempts: list[RubricAttempt] = []
    for _ in range(max_attempts):
        result = await client.complete(request)
        parsed = parse_rubric(result.text, covered_points, outputs)
        problems = [] if isinstance(parsed, RubricNode) else parsed
        if problems and result.stop_reason == "max_tokens":
            problems = ["the reply was cut off at the output token limit: write a shorter tree", *problems]
        attempts.append(
            RubricAttempt(reply_text=result.text, problems=problems, usage=result.usage, stop_reason=result.stop_reason)
        )
        if isinstance(parsed, RubricNode):
            return MakeRubricResult(rubric=parsed, attempts=attempts)
        # repair from the original request, so the prompt does not grow with every failed attempt
        request = repair_request(first, result.text, problems)
    return MakeRubricResult(rubric=None, attempts=attempts)
