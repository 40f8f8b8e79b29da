"""Scoring READ and ACT answers: small pure functions with one result type, :class:`Verdict`.

ACT: the resolved element must be the ground-truth element (same CDP target and backendNodeId; in
Stagehand's browser, the same XPath); a screenshot point must lie inside the target's box. READ: the
normalised answer must equal the gold answer or a pre-registered alias
(:mod:`capreplay.study.answers.read_score`).

A wrong answer on a target or answer the representation does not carry is recorded as
``not_representable``; the underlying reason is kept in ``detail``. Representability never changes
whether an answer is correct.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from capreplay.models.geometry import Box
from capreplay.study.answers.read_score import read_correct
from capreplay.study.answers.representable import Representability
from capreplay.study.page.elements import ElementRef, Point, Resolution, Unresolved, XPathElement

Reason = Literal[
    "correct",
    "wrong_element",
    "wrong_answer",
    "invalid_selector",
    "ambiguous",
    "not_found",
    "outside_image",
    "unparseable",
    "not_representable",
]
"""Why an answer scored as it did. ``wrong_element`` (ACT) and ``wrong_answer`` (READ) name a valid
answer that is not the gold one; the others say why an ACT answer named no element, or that the answer
was not in the expected form."""


class Verdict(BaseModel):
    """The score of one answer."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    correct: bool
    reason: Reason
    detail: str | None = Field(description="What was resolved or compared; for not_representable, the underlying "
                               "reason and why the representation does not carry the target.")
    representable: bool | None = Field(
        description="Whether the representation carries the target (ACT) or answer (READ); None: not decided."
    )


def _verdict(correct: bool, reason: Reason, detail: str | None, representability: Representability) -> Verdict:
    if not correct and representability.representable is False:
        detail = f"{reason}: {detail}; not representable: {representability.reason}"
        reason = "not_representable"
    return Verdict(correct=correct, reason=reason, detail=detail, representable=representability.representable)


def score_act(
    resolution: Resolution, target: ElementRef, box: Box | None, representability: Representability,
    stagehand_xpath: str | None = None,
) -> Verdict:
    """Score a resolved ACT answer against the ground-truth element ``target``, its box, and its XPath in
    Stagehand's browser."""
    match resolution:
        case Unresolved(reason=reason, detail=detail):
            return _verdict(False, reason, detail, representability)
        case ElementRef():
            if resolution == target:
                return _verdict(True, "correct", None, representability)
            detail = f"resolved to node {resolution.backend_node_id} of target {resolution.target_id}"
            return _verdict(False, "wrong_element", detail, representability)
        case XPathElement(xpath=xpath):
            if stagehand_xpath is not None and xpath == stagehand_xpath:
                return _verdict(True, "correct", None, representability)
            return _verdict(False, "wrong_element", f"resolved to {xpath}, the target is {stagehand_xpath}",
                            representability)  # fmt: skip
        case Point(x=x, y=y):
            if box is not None and box.contains(x, y):
                return _verdict(True, "correct", None, representability)
            where = "the target has no box" if box is None else f"the target's box is {box.model_dump()}"
            return _verdict(False, "wrong_element", f"({x:g}, {y:g}) misses the target: {where}", representability)
    raise AssertionError(f"unhandled resolution {resolution!r}")


def score_read(answer: object, gold: str, aliases: Iterable[str], representability: Representability) -> Verdict:
    """Score a READ answer (the answer string the model gave) against the gold answer and its aliases."""
    if not isinstance(answer, str):
        return _verdict(False, "unparseable", f"expected a string, got {type(answer).__name__}", representability)
    if read_correct(answer, gold, aliases):
        return _verdict(True, "correct", None, representability)
    return _verdict(False, "wrong_answer", f"{answer!r} is not {gold!r} or an alias", representability)
