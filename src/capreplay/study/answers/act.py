"""ACT answers as the model gives them (a JSON object), checked against their representation's answer
format. Pure: an answer that does not fit its format is ``unparseable``, with the first problem named.

Keys a format does not use are ignored (a model may add a comment); a number given as a numeric string
is accepted, a boolean is not.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError

from capreplay.errors import validation_reason
from capreplay.study.page.elements import Unresolved
from capreplay.study.representations.base import AnswerFormat


def _no_bool(value: object) -> object:
    # JSON true/false would otherwise pass as 1/0.
    if isinstance(value, bool):
        raise ValueError("a boolean is not a number")
    return value


Occurrence = Annotated[int | None, BeforeValidator(_no_bool), Field(ge=1)]
Number = Annotated[float, BeforeValidator(_no_bool)]


class _Answer(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class SelectorAnswer(_Answer):
    """``css_selector``: a CSS selector run in the top document."""

    selector: str = Field(min_length=1)


class TextAnswer(_Answer):
    """``text``: visible text, a label or a placeholder; ``occurrence`` picks one of several matches."""

    text: str = Field(min_length=1)
    occurrence: Occurrence = None


class RoleAnswer(_Answer):
    """``role_name``: an ARIA role and the exact accessible name (may be empty)."""

    role: str = Field(pattern=r"^[A-Za-z][A-Za-z-]*$", description="An ARIA role such as button or textbox.")
    name: str
    occurrence: Occurrence = None


class IndexAnswer(_Answer):
    """``index``: an element index of the indexed DOM."""

    index: Annotated[int, BeforeValidator(_no_bool)]


class PointAnswer(_Answer):
    """``point``: a click position in screenshot pixels."""

    x: Number
    y: Number


class RefAnswer(_Answer):
    """``aria_ref``: an element reference of the AI-mode ARIA snapshot, such as ``e12`` or ``f1e3``."""

    ref: str = Field(pattern=r"^(f\d+)?e\d+$")


class StagehandIdAnswer(_Answer):
    """``stagehand_id``: an element id of Stagehand's snapshot, ``<frame ordinal>-<backendNodeId>``."""

    id: str = Field(pattern=r"^\d+-\d+$")


ActAnswer = SelectorAnswer | TextAnswer | RoleAnswer | IndexAnswer | PointAnswer | RefAnswer | StagehandIdAnswer

ANSWER_MODELS: dict[AnswerFormat, type[ActAnswer]] = {
    "css_selector": SelectorAnswer,
    "text": TextAnswer,
    "role_name": RoleAnswer,
    "index": IndexAnswer,
    "point": PointAnswer,
    "aria_ref": RefAnswer,
    "stagehand_id": StagehandIdAnswer,
}


def parse_act_answer(answer_format: AnswerFormat, raw: object) -> ActAnswer | Unresolved:
    """The answer as its format's model, or ``Unresolved("unparseable")`` naming the first problem."""
    if not isinstance(raw, dict):
        return Unresolved(reason="unparseable", detail=f"expected a JSON object, got {type(raw).__name__}")
    try:
        return ANSWER_MODELS[answer_format].model_validate(raw)
    except ValidationError as e:
        return Unresolved(reason="unparseable", detail=f"{answer_format} answer: {validation_reason(e, '(answer)')}")
