"""The checks a leaf runs on the answer's fields alone: numeric_range, regex, set_membership and count.

Each gives a :class:`~capreplay.judge.verdict.LeafVerdict` with a one-line reason that shows the value.
A field the answer lacks (or holds as null), or one that cannot be read as the check needs (no number in
it, a list where one text is needed), fails the leaf with that reason. The grounded checks
(``url_in_snapshot``, ``claim_on_page``) need the snapshot and are run elsewhere. Pure, no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from capreplay.judge.fields import as_list, as_text, format_number, parse_number
from capreplay.judge.verdict import LeafVerdict
from capreplay.models.rubric import Count, NumericRange, Regex, RubricNode, SetMembership
from capreplay.util.answer_text import normalize_answer

VALUE_CHECKS: frozenset[str] = frozenset({"numeric_range", "regex", "set_membership", "count"})
"""The checks :func:`run_value_check` runs."""

_SHOWN = 80


def _show(value: object) -> str:
    """``value`` as a short one-line repr."""
    text = repr(value)
    return text if len(text) <= _SHOWN else text[: _SHOWN - 3] + "..."


def _texts(values: Sequence[str]) -> str:
    return "[" + ", ".join(_show(v) for v in values) + "]"


def _bounds(low: float | None, high: float | None) -> str:
    if low is None:
        return f"at most {format_number(high)}" if high is not None else "unbounded"
    if high is None:
        return f"at least {format_number(low)}"
    return f"within [{format_number(low)}, {format_number(high)}]"


def _against(number: float, low: float | None, high: float | None) -> tuple[bool, str]:
    """Whether ``number`` is in [low, high], and the words saying so."""
    if low is not None and number < low:
        return False, f"below the minimum {format_number(low)}"
    if high is not None and number > high:
        return False, f"above the maximum {format_number(high)}"
    return True, _bounds(low, high)


def _numeric_range(check: NumericRange, value: object) -> tuple[bool, str]:
    number = parse_number(value)
    if number is None:
        return False, f"field {check.field!r} holds no number: {_show(value)}"
    passed, words = _against(number, check.min, check.max)
    return passed, f"field {check.field!r} = {_show(value)} reads as {format_number(number)}, {words}"


def _regex(check: Regex, value: object) -> tuple[bool, str]:
    text = as_text(value)
    if text is None:
        return False, f"field {check.field!r} holds no single text: {_show(value)}"
    text = " ".join(text.split())
    pattern = re.compile(check.pattern, re.IGNORECASE if check.ignore_case else 0)
    matched = pattern.fullmatch(text) if check.full else pattern.search(text)
    how = "in full" if check.full else "somewhere"
    verb = "matches" if matched else "does not match"
    return matched is not None, f"field {check.field!r} = {_show(text)} {verb} /{check.pattern}/ {how}"


def _set_membership(check: SetMembership, value: object) -> tuple[bool, str]:
    allowed = {normalize_answer(v) for v in check.values}
    shown = _texts(check.values)
    if check.mode == "one_of":
        text = as_text(value)
        if text is None:
            return False, f"field {check.field!r} holds no single text: {_show(value)}"
        if normalize_answer(text) in allowed:
            return True, f"field {check.field!r} = {_show(text)} is one of {shown}"
        return False, f"field {check.field!r} = {_show(text)} is not one of {shown}"
    items = as_list(value)
    if items is None:
        return False, f"field {check.field!r} holds no list: {_show(value)}"
    if not items:
        # An empty answer must not pass "every item is allowed" by having no items.
        return False, f"field {check.field!r} holds no items: {_show(value)}"
    normal_items = {normalize_answer(item) for item in items}
    if check.mode == "all_in":
        outside = [item for item in items if normalize_answer(item) not in allowed]
        if outside:
            return False, f"field {check.field!r}: {_texts(outside)} not among {shown}"
        return True, f"field {check.field!r}: all {len(items)} items are among {shown}"
    lacking = [v for v in check.values if normalize_answer(v) not in normal_items]
    if lacking:
        return False, f"field {check.field!r} = {_texts(items)} lacks {_texts(lacking)}"
    return True, f"field {check.field!r} = {_texts(items)} holds all of {shown}"


def _count(check: Count, value: object) -> tuple[bool, str]:
    items = as_list(value)
    if items is None:
        return False, f"field {check.field!r} holds no list: {_show(value)}"
    distinct = len({normalize_answer(item) for item in items} - {""})
    low = None if check.min is None else float(check.min)
    high = None if check.max is None else float(check.max)
    passed, words = _against(float(distinct), low, high)
    return passed, f"field {check.field!r} = {_texts(items)} has {distinct} distinct items, {words}"


def run_value_check(leaf: RubricNode, fields: Mapping[str, object]) -> LeafVerdict:
    """Run ``leaf``'s check on the answer's ``fields`` (output name to value, as the judge read them).

    Raises ValueError for a node that is not a leaf and for the grounded checks, ``url_in_snapshot`` and
    ``claim_on_page``, which need the snapshot.
    """
    check = leaf.check
    if check is None or leaf.kind is None:
        raise ValueError(f"node {leaf.id!r} is not a leaf")
    if check.check not in VALUE_CHECKS:
        raise ValueError(f"leaf {leaf.id!r}: {check.check} needs the snapshot, not only the answer")
    value = fields.get(check.field)
    if value is None:
        passed, reason = False, f"field {check.field!r} is missing"
    elif isinstance(check, NumericRange):
        passed, reason = _numeric_range(check, value)
    elif isinstance(check, Regex):
        passed, reason = _regex(check, value)
    elif isinstance(check, SetMembership):
        passed, reason = _set_membership(check, value)
    else:
        assert isinstance(check, Count)
        passed, reason = _count(check, value)
    return LeafVerdict(
        node=leaf.id,
        kind=leaf.kind,
        point=leaf.point,
        check=check.check,
        critical=leaf.critical,
        passed=passed,
        reason=reason,
    )
