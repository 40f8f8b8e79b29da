"""From an agent's free-text answer to the task's fields, and the model calls the judge makes.

An answer that is already a JSON object of the task's outputs (what the gold agent gives) is read as is, with
no call. Anything else is sent to the judge's model once, asking for the fields as JSON; through the response
cache that call is made once per (settings, request), so re-judging a run is deterministic and free. A reply
that holds no JSON object of the fields leaves the episode unscored, with the reason; it is not a failure.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict

from capreplay.llm.messages import ModelRequest
from capreplay.llm.reply import json_object
from capreplay.models.workflow import ExpectedOutput, WorkflowTask

EXTRACT_SYSTEM = (
    "You read the final answer a web agent gave to a task and copy out the fields the task asked for. Copy "
    "values exactly as the answer states them; never correct, compute, look up or guess. A field the answer "
    "does not give is null. Reply with one JSON object and nothing else."
)
CLAIM_SYSTEM = (
    "You check one claim against the text of one web page. Answer only from the page text given. Reply with "
    'one JSON object: {"holds": true or false, "quote": "the shortest passage of the page that decides it"}.'
)
PAGE_CHARS = 40_000
"""Page text sent with a claim, at most (a longer page is cut, and the cut is said in the prompt)."""


class Fields(BaseModel):
    """The fields read from an answer, or why none could be."""

    model_config = ConfigDict(frozen=True)

    values: dict[str, Any] | None
    unparseable: str | None = None


def _shape(output: ExpectedOutput) -> str:
    return {
        "text": "a string",
        "number": "a number",
        "url": "a URL string",
        "text_list": "an array of strings",
        "url_list": "an array of URL strings",
    }[output.type]


def extraction_request(task: WorkflowTask, answer: str) -> ModelRequest:
    """The call that reads ``answer`` into the task's fields."""
    lines = [f"- {o.name} ({_shape(o)}): {o.description}" for o in task.outputs]
    prompt = (
        f"The task the agent was given:\n<task>\n{task.description}\n</task>\n\n"
        f"The agent's final answer:\n<answer>\n{answer}\n</answer>\n\n"
        "Copy these fields out of the answer:\n" + "\n".join(lines) + "\n\n"
        "Reply with one JSON object with exactly these keys, each value as the answer gives it, or null."
    )
    return ModelRequest.of(prompt, system=EXTRACT_SYSTEM)


def fields_from_json(answer: str, outputs: Sequence[ExpectedOutput]) -> dict[str, Any] | None:
    """The answer's fields when the whole answer is a JSON object keyed by output names only, else None."""
    try:
        value = json.loads(answer)
    except ValueError:
        return None
    names = {o.name for o in outputs}
    if not isinstance(value, dict) or not value or not set(value) <= names:
        return None
    return value


def parse_fields(reply: str, outputs: Sequence[ExpectedOutput]) -> Fields:
    """The fields in the extraction call's reply (nulls dropped), or why it holds none."""
    found = json_object(reply)
    if isinstance(found, str):
        return Fields(values=None, unparseable=f"the extraction reply is unusable: {found}")
    names = {o.name for o in outputs}
    unknown = sorted(set(found) - names)
    if unknown:
        return Fields(values=None, unparseable=f"the extraction reply has a field the task does not: {unknown[0]!r}")
    return Fields(values={k: v for k, v in found.items() if v is not None})


def claim_request(claim: str, url: str, page_text: str) -> ModelRequest:
    """The call that decides a claim only reading can decide, on the cited page's text."""
    cut = page_text[:PAGE_CHARS]
    note = f"\n(The page text was cut at {PAGE_CHARS} characters.)" if len(page_text) > PAGE_CHARS else ""
    prompt = f"The page at {url}:\n<page>\n{cut}\n</page>{note}\n\nThe claim: {claim}\n\nDoes the page support it?"
    return ModelRequest.of(prompt, system=CLAIM_SYSTEM)


def parse_claim(reply: str) -> tuple[bool, str] | str:
    """(holds, quote) from a claim call's reply, or why the reply has neither."""
    found = json_object(reply)
    if isinstance(found, str):
        return f"the claim reply is unusable: {found}"
    holds = found.get("holds")
    if not isinstance(holds, bool):
        return "the claim reply has no true/false 'holds'"
    quote = found.get("quote")
    return holds, quote if isinstance(quote, str) else ""
