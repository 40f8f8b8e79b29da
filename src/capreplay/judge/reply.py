"""Reading the JSON object out of a model's reply: bare, in a code fence, or after prose."""

from __future__ import annotations

import json
import re
from typing import Any

_FENCE = re.compile(r"```(?:json)?[ \t]*\r?\n(.*?)```", re.DOTALL | re.IGNORECASE)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


_DECODER = json.JSONDecoder(parse_constant=_reject_constant)


def json_object(text: str) -> dict[str, Any] | str:
    """The first JSON object of the reply (in a code fence if there is one), or why there is none.

    Only the first ``{`` is tried: when the object is broken, a later brace would start one of its own
    nodes, which must not pass for the whole tree.
    """
    fence = _FENCE.search(text)
    body = fence.group(1) if fence and "{" in fence.group(1) else text
    start = body.find("{")
    if start < 0:
        return "the reply holds no JSON object"
    try:
        value, _ = _DECODER.raw_decode(body, start)
    except json.JSONDecodeError as e:
        return f"not valid JSON: {e.msg} at line {e.lineno} column {e.colno}"
    except ValueError as e:
        return f"not valid JSON: {e}"
    if not isinstance(value, dict):
        return "the reply's JSON is not an object"
    return value
