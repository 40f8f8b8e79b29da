"""The study's prompt and answers: build the model request of a task, parse what the model replied. Pure.

One template serves every representation (the protocol's ``prompt``). The user template is cut at its
``{page}`` slot into the text before and the text after the page, with the question and the answer-format
instruction filled in. A text representation is inserted verbatim between them, in one text block; a
screenshot is an image block between the same two texts, as two text blocks. The page is never passed
through any formatting, so braces or slot names in a page are sent as they are.

The answer is the first JSON object in the reply, checked against the task's answer format:

- a required key that is missing or null makes the answer unparseable; an optional one may be left out;
- a ``string`` value is a JSON string, or a JSON number taken as the text it was written with
  (``{"answer": 1204}`` reads as ``"1204"``);
- an ``integer`` value is a JSON number with no fractional part (``12`` or ``12.0``), a ``number`` any
  finite JSON number; neither accepts a string, and both respect the field's ``minimum``;
- keys the format does not name are dropped.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from capreplay.llm.messages import ImageBlock, ModelRequest, TextBlock
from capreplay.llm.reply import NumberText, json_object
from capreplay.models.task import (
    ANSWER_FORMAT_SLOT,
    PAGE_SLOT,
    QUESTION_SLOT,
    ActTask,
    AnswerField,
    AnswerFormat,
    Protocol,
    ReadTask,
    Representation,
)

IMAGE_REPRESENTATIONS: frozenset[Representation] = frozenset({"screenshot"})
"""Representations whose page content is a PNG file rather than text."""

_FILLED_SLOTS = re.compile("|".join(re.escape(s) for s in (QUESTION_SLOT, ANSWER_FORMAT_SLOT)))


class Unparseable(BaseModel):
    """A reply that holds no answer in the expected format, and why."""

    model_config = ConfigDict(frozen=True)

    reason: str = Field(description="What is wrong, in one line (no JSON object, missing key, wrong type).")


def question_text(task: ReadTask | ActTask) -> str:
    """What goes in the ``{question}`` slot: a READ task's question, an ACT task's instruction."""
    return task.question if isinstance(task, ReadTask) else task.instruction


def prompt_texts(protocol: Protocol, task: ReadTask | ActTask, representation: Representation) -> tuple[str, str]:
    """The user message's text before and after the page slot, with the question and answer format filled in."""
    values = {
        QUESTION_SLOT: question_text(task),
        ANSWER_FORMAT_SLOT: protocol.answer_format(task, representation).instruction,
    }
    before, after = protocol.prompt.user.split(PAGE_SLOT)

    def fill(text: str) -> str:
        # One pass over the template, so a question that happens to contain "{answer_format}" is sent as written.
        return _FILLED_SLOTS.sub(lambda m: values[m.group(0)], text)

    return fill(before), fill(after)


def _text_blocks(*texts: str) -> list[TextBlock | ImageBlock]:
    # The Messages API refuses empty text blocks, and a template may start or end with its page slot.
    return [TextBlock(text=t) for t in texts if t]


def build_request(
    protocol: Protocol, task: ReadTask | ActTask, representation: Representation, page: str | bytes
) -> ModelRequest:
    """The request asking ``task`` of ``page`` shown as ``representation`` (text: ``str``; screenshot: PNG bytes).

    Raises TypeError when the page content is not of the representation's kind.
    """
    before, after = prompt_texts(protocol, task, representation)
    if representation in IMAGE_REPRESENTATIONS:
        if not isinstance(page, bytes):
            raise TypeError(f"{representation} content must be PNG bytes, not {type(page).__name__}")
        content = [*_text_blocks(before), ImageBlock.from_png(page), *_text_blocks(after)]
    else:
        if not isinstance(page, str):
            raise TypeError(f"{representation} content must be text, not {type(page).__name__}")
        content = _text_blocks(before + page + after)
    return ModelRequest(system=protocol.prompt.system, content=content)


def empty_page_request(protocol: Protocol, task: ReadTask | ActTask, representation: Representation) -> ModelRequest:
    """The same request with nothing in the page slot: the fixed prompt that ``representation_tokens`` subtracts.

    A text representation's empty prompt is one text block (its page slot left empty); a screenshot's is
    its two text blocks without the image, so the difference is exactly what the page added.
    """
    before, after = prompt_texts(protocol, task, representation)
    texts = (before, after) if representation in IMAGE_REPRESENTATIONS else (before + after,)
    return ModelRequest(system=protocol.prompt.system, content=_text_blocks(*texts))


def _field_value(spec: AnswerField, value: Any) -> str | int | float | Unparseable:
    """The value of one answer field, or why it is not one."""
    if spec.type == "string":
        if isinstance(value, str):  # a NumberText is a str too: its JSON text is the answer
            return str(value)
        return Unparseable(reason=f"{spec.name!r} must be a string, not {_json_type(value)}")
    if not isinstance(value, NumberText):
        return Unparseable(reason=f"{spec.name!r} must be a number, not {_json_type(value)}")
    number = float(value)
    if number in (float("inf"), float("-inf")):
        return Unparseable(reason=f"{spec.name!r} is not a finite number")
    if spec.minimum is not None and number < spec.minimum:
        return Unparseable(reason=f"{spec.name!r} must be at least {spec.minimum:g}, not {value}")
    if spec.type == "integer":
        if not number.is_integer():
            return Unparseable(reason=f"{spec.name!r} must be a whole number, not {value}")
        return int(number)
    return int(value) if value.lstrip("-").isdigit() else number


def _json_type(value: Any) -> str:
    if isinstance(value, NumberText):
        return "a number"
    names = {str: "a string", bool: "a boolean", list: "an array", dict: "an object", type(None): "null"}
    return names.get(type(value), type(value).__name__)


def parse_answer(text: str, answer_format: AnswerFormat) -> dict[str, Any] | Unparseable:
    """The answer in ``text``: the first JSON object, holding the format's keys with values of their types."""
    found = json_object(text, skip_broken=True, numbers_as_text=True)
    if isinstance(found, str):
        return Unparseable(reason="no JSON object in the reply")
    answer: dict[str, Any] = {}
    for spec in answer_format.fields:
        value = found.get(spec.name)
        if value is None:
            if spec.required:
                return Unparseable(reason=f"the JSON object has no {spec.name!r}")
            continue
        parsed = _field_value(spec, value)
        if isinstance(parsed, Unparseable):
            return parsed
        answer[spec.name] = parsed
    return answer
