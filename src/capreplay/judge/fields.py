"""Reading an answer's fields as the checks need them: a number, a text, a list of texts. Pure, no I/O.

Numbers (:func:`iter_numbers`, :func:`parse_number`) are read strictly, so that a check never credits a
number the text does not plainly hold:

- digits are ASCII ``0-9`` (full-width digits, commas and points count, read as their ASCII forms);
- a comma is a thousands separator only between groups of exactly three digits after a first group of one
  to three (``1,249.50`` is 1249.5); anywhere else it ends the number and the digits after it are a number
  of their own (``1,5`` is 1 then 5, ``12,34,567`` is 12, 34 and 567, ``38,40`` is 38 then 40), so
  European decimal commas and Indian grouping are not read as one value;
- a space, a thin space or an apostrophe never groups digits: ``1 249`` is 1, then 249;
- the decimal point is ``.`` followed by at least one digit (``.5`` is 0.5, ``5.`` is 5); a second point
  ends the number (``3.14.15`` is 3.14, and nothing more is read from it);
- a minus is ``-`` or a Unicode minus or hyphen-like dash (``−``, ``–``, ``‐``, ``－`` ...) right before the
  digits or before a currency sign (``-$5``), and not right after a letter or digit, so ``2019-2020`` is
  2019 then 2020 and ``AT-15`` is 15;
- everything else is dropped: currency signs and codes, percent signs (``12%`` is 12), units (``−3 °C``
  is -3), multipliers (``1.5k`` is 1.5) and exponents (``1e5`` is 1, then 5).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from typing import NamedTuple

# Characters read as a minus sign before a number: U+2212 MINUS SIGN and the dashes pages print for it.
# Each maps to one character, so positions in the translated text are positions in the original.
_MINUS_SIGNS = "\u2010\u2011\u2012\u2013\u2212\ufe63\uff0d"
_TRANSLATE = str.maketrans(
    {
        **dict.fromkeys(_MINUS_SIGNS, "-"),
        **{chr(0xFF10 + d): str(d) for d in range(10)},
        "\uff0c": ",",
        "\uff0e": ".",
    }
)
_CURRENCY = "$€£¥₹₩₽¢₺₪฿₫₱"
_NUMBER = re.compile(
    rf"(?:(?<![\w-])(?P<minus>-)(?:[{_CURRENCY}]\s?)?)?"
    # Not inside a run of digits, and not the tail of a decimal the scan has already passed.
    r"(?<![0-9])(?<![0-9]\.)"
    # Thousands groups never start inside a comma-joined run, so ``12,34,567`` is not read as 34567.
    r"(?P<body>(?:(?<![0-9],)[0-9]{1,3}(?:,[0-9]{3})+(?![0-9])|[0-9]+)(?:\.[0-9]+)?|\.[0-9]+)"
)
_BULLET = re.compile(r"^(?:[-*•·‣▪–—]|[0-9]{1,3}[.)])\s+")


class NumberMatch(NamedTuple):
    """A number found in a text: where it is (``text[start:end]``, its sign included) and its value."""

    start: int
    end: int
    value: float


def iter_numbers(text: str) -> Iterator[NumberMatch]:
    """Every number in ``text``, in order, read by the rules of this module's docstring."""
    for m in _NUMBER.finditer(text.translate(_TRANSLATE)):
        value = float(m["body"].replace(",", ""))
        if not math.isfinite(value):
            continue
        yield NumberMatch(m.start(), m.end(), -value if m["minus"] else value)


def parse_number(value: object) -> float | None:
    """``value`` as a number: an int or float as it is, a string's first number; None when there is none.

    A bool, None, NaN or an infinity, a list or a mapping is not a number.
    """
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        try:
            number = float(value)
        except OverflowError:
            return None
        return number if math.isfinite(number) else None
    if isinstance(value, str):
        first = next(iter_numbers(value), None)
        return None if first is None else first.value
    return None


def format_number(number: float) -> str:
    """A number as a person writes it: ``1249.5``, ``12`` (not ``12.0``)."""
    if number.is_integer() and abs(number) < 1e16:
        return str(int(number))
    return repr(number)


def as_text(value: object) -> str | None:
    """``value`` as one text, stripped: a string, a number written out, or a list's only item; else None."""
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, list | tuple) and len(value) == 1:
        return as_text(value[0])
    number = parse_number(value) if isinstance(value, int | float) else None
    return None if number is None else format_number(number)


def as_list(value: object) -> list[str] | None:
    """``value`` as a list of texts, each stripped, empty ones dropped; None when it cannot be read as one.

    - a JSON list of scalars (strings and numbers; nulls are skipped) gives their texts; a list holding a
      list, a mapping or a bool is not a list of texts;
    - a string that is itself a JSON list (``'["a", "b"]'``) is read as that list;
    - a string with line breaks gives one item per line, a leading bullet (``-``, ``*``, ``•``) or number
      (``1.``, ``2)``) taken off each;
    - else a string with ``;`` is split at each ``;``, and any other string is one item (a comma never
      splits: ``Paris, France`` is one place);
    - a single number is a one-item list.
    """
    if isinstance(value, list | tuple):
        items = []
        for item in value:
            if item is None:
                continue
            if isinstance(item, bool) or not isinstance(item, str | int | float):
                return None
            text = as_text(item)
            if text is None:
                return None
            if text:
                items.append(text)
        return items
    if isinstance(value, int | float) and not isinstance(value, bool):
        text = as_text(value)
        return None if text is None else [text]
    if not isinstance(value, str):
        return None
    text = value.strip()
    if text.startswith("[") and text.endswith("]"):
        try:
            parsed = json.loads(text)
        except json.JSONDecodeError:
            parsed = None
        if isinstance(parsed, list):
            from_json = as_list(parsed)
            if from_json is not None:
                return from_json
    if "\n" in text or "\r" in text:
        parts = [_BULLET.sub("", line.strip()) for line in text.splitlines()]
    else:
        parts = text.split(";")
    return [part.strip() for part in parts if part.strip()]
