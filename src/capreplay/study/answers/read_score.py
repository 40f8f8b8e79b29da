"""READ scoring: compare answers with the gold answer once normalised, and check a representation holds it.

The normal form is :func:`capreplay.util.answer_text.normalize_answer`, shared with the judge's checks,
which compare an agent's answer with expected values in the same sense. Pure functions, no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable

from capreplay.util.answer_text import normalize_answer


def _accepted(gold: str, aliases: Iterable[str]) -> set[str]:
    """Normal forms of the gold answer and its aliases, without the empty string."""
    return {form for form in map(normalize_answer, [gold, *aliases]) if form}


def read_correct(answer: str, gold: str, aliases: Iterable[str] = ()) -> bool:
    """Whether ``answer`` equals the gold answer or one of its pre-registered aliases, once normalised.

    An answer that normalises to the empty string is never correct, whatever the gold answer.
    """
    normal = normalize_answer(answer)
    return bool(normal) and normal in _accepted(gold, aliases)


def answer_present(representation_text: str, gold: str, aliases: Iterable[str] = ()) -> bool:
    """Whether the normalised gold answer, or an alias, occurs in the normalised representation.

    This is READ representability: a substring check, so it is not meaningful for derived answers
    (a count such as "6" is "present" in any text containing that digit) and only labels failures
    for audit; it never changes accuracy.
    """
    haystack = normalize_answer(representation_text)
    return any(form in haystack for form in _accepted(gold, aliases))
