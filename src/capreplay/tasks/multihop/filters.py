"""GTA's quality filters for a drafted multi-hop task: a review, then the answer from both pages and from each.

1. ``multihop_review``: one call judges the question clear, unambiguous and compositional (not two
   questions joined by "and"); any false rejects it.
2. ``answer_from_pages``: a model shown both pages must give the expected answer (GTA's answer
   correctness); shown the seed page alone, and then the partner page alone, it must not (the question
   is multi-hop only if neither page answers it by itself).

Answers are compared as the judge compares them (:func:`same_answer`). Every failure, and every reply
that cannot be read, is a :class:`Rejection` of stage ``filter`` with the reason.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Literal

from capreplay.errors import ModelError
from capreplay.judge.fields import as_text, parse_number
from capreplay.llm.messages import ModelRequest
from capreplay.tasks.generation import Rejection
from capreplay.tasks.meter import Meter
from capreplay.tasks.multihop.corpus import PageDoc
from capreplay.tasks.multihop.draft import PAGE_CHARS, Draft, ValueType, holds_phrase
from capreplay.tasks.prompts import prompt

Which = Literal["both", "seed only", "partner only"]


def same_answer(expected: str, got: Any, kind: ValueType) -> bool:
    """Whether ``got`` gives the ``expected`` value: the same number, or the expected text as a whole phrase of it.

    A text counts when it holds the expected one as whole words, both in normal form ("It is High Scarth."
    gives "High Scarth"), so a model that answers in a sentence is not let off.
    """
    if got is None:
        return False
    if kind == "number":
        want, have = parse_number(expected), parse_number(got)
        return want is not None and have is not None and math.isclose(want, have)
    text = as_text(got)
    return text is not None and holds_phrase(text, expected)


def review_request(draft: Draft) -> ModelRequest:
    """The ``multihop_review`` request for a draft."""
    reply = draft.reply
    return prompt("multihop_review").request(
        id=draft.task.id, question=reply.question, answer=reply.answer.value, bridge=reply.bridge.value
    )


def pages_text(pages: Sequence[PageDoc]) -> str:
    """The pages as the ``answer_from_pages`` prompt shows them: URL, title and the start of the text."""
    return "\n\n".join(
        f"Page: {page.url}\nTitle: {page.title}\nText:\n<<<\n{page.text[:PAGE_CHARS]}\n>>>" for page in pages
    )


def answer_request(draft: Draft, which: Which) -> ModelRequest:
    """The ``answer_from_pages`` request for a draft, with both pages or one of them."""
    pages = {"both": [draft.seed, draft.partner], "seed only": [draft.seed], "partner only": [draft.partner]}
    return prompt("answer_from_pages").request(
        id=draft.task.id, which=which, question=draft.reply.question, pages=pages_text(pages[which])
    )


def review_verdict(data: dict[str, Any] | str) -> str | None:
    """Why the review rejects the question (or gives no verdict), or None when it passes."""
    if isinstance(data, str):
        return f"the review reply is unusable: {data}"
    criteria = {"clear": "unclear", "unambiguous": "ambiguous", "compositional": "not compositional"}
    if any(not isinstance(data.get(name), bool) for name in criteria):
        missing = next(name for name in criteria if not isinstance(data.get(name), bool))
        return f"the review gave no verdict on {missing!r}"
    failed = [word for name, word in criteria.items() if not data[name]]
    if not failed:
        return None
    reason = " ".join(str(data.get("reason") or "").split())
    return f"the review found the question {' and '.join(failed)}" + (f": {reason}" if reason else "")


def answer_verdict(draft: Draft, which: Which, data: dict[str, Any] | str) -> str | None:
    """Why this answer rejects the draft, or None: with both pages it must match, with one it must not."""
    if isinstance(data, str):
        return f"the answer reply ({which}) is unusable: {data}"
    if "answer" not in data:
        return f"the answer reply ({which}) has no 'answer'"
    expected = draft.reply.answer
    got = data["answer"]
    matched = same_answer(expected.value, got, expected.type)
    if which == "both":
        if got is None:
            return "with both pages the model found no answer"
        return None if matched else f"with both pages the model answers {got!r}, not {expected.value!r}"
    if matched:
        alone = draft.seed if which == "seed only" else draft.partner
        return f"one page answers it: {alone.final_url}"
    return None


async def _ask(meter: Meter, request: ModelRequest) -> dict[str, Any] | str:
    try:
        data, _ = await meter.ask_json("filter", request)
    except ModelError as e:
        return f"the model call failed: {e.message}"
    return data


async def filter_draft(meter: Meter, draft: Draft) -> Rejection | None:
    """The first filter the draft fails, as a rejection; None when it passes them all (at most four calls)."""

    def reject(reason: str) -> Rejection:
        return Rejection(candidate=draft.task.id, stage="filter", reason=reason)

    verdict = review_verdict(await _ask(meter, review_request(draft)))
    if verdict is not None:
        return reject(verdict)
    which: Which
    for which in ("both", "seed only", "partner only"):
        verdict = answer_verdict(draft, which, await _ask(meter, answer_request(draft, which)))
        if verdict is not None:
            return reject(verdict)
    return None
