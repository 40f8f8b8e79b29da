"""Reading the JSON object out of a model's reply: bare, in a code fence, or after prose. Pure.

One reader, with the two policies capreplay's callers need, each for a reason:

- the judge and ``make-rubric`` (the default) read the first ``{`` of the reply (of its code fence if there
  is one) and nothing else: their objects nest (a rubric tree, a set of fields), so when the object is
  broken a later brace would start one of its own inner nodes, which must not pass for the whole;
- the study (``skip_broken=True``) takes the first ``{`` that starts a whole object anywhere in the reply:
  its answers are flat objects, and a stray brace in prose before one ("the {answer} is ...") must not
  hide it. It also keeps numbers as the text they were written with (``numbers_as_text``), so a string
  field can take ``1204`` verbatim. The study's parsing is part of its pre-registered protocol.
"""

from __future__ import annotations

import json
import re
from typing import Any

_FENCE = re.compile(r"```(?:json)?[ \t]*\r?\n(.*?)```", re.DOTALL | re.IGNORECASE)


class NumberText(str):
    """A JSON number kept as the text it was written with."""

    __slots__ = ()


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


_DECODER = json.JSONDecoder(parse_constant=_reject_constant)
_TEXT_NUMBERS = json.JSONDecoder(parse_int=NumberText, parse_float=NumberText, parse_constant=_reject_constant)


def json_object(text: str, *, skip_broken: bool = False, numbers_as_text: bool = False) -> dict[str, Any] | str:
    """The reply's JSON object, or why there is none (see the module's docstring for the two policies)."""
    decoder = _TEXT_NUMBERS if numbers_as_text else _DECODER
    if skip_broken:
        for match in re.finditer(r"\{", text):
            try:
                value, _ = decoder.raw_decode(text, match.start())
            except ValueError:
                continue
            if isinstance(value, dict):
                return value
        return "the reply holds no JSON object"
    fence = _FENCE.search(text)
    body = fence.group(1) if fence and "{" in fence.group(1) else text
    start = body.find("{")
    if start < 0:
        return "the reply holds no JSON object"
    try:
        value, _ = decoder.raw_decode(body, start)
    except json.JSONDecodeError as e:
        return f"not valid JSON: {e.msg} at line {e.lineno} column {e.colno}"
    except ValueError as e:
        return f"not valid JSON: {e}"
    if not isinstance(value, dict):
        return "the reply's JSON is not an object"
    return value
