"""Things a user lists are listed once: a page, a task, a URL named twice is a slip to refuse, not to merge."""

from __future__ import annotations

from collections.abc import Hashable, Iterable

from capreplay.errors import UsageError


def given_once[V: Hashable](values: Iterable[V], what: str) -> list[V]:
    """``values`` as a list; a ``UsageError`` naming the first one given twice (``--task 'x' is given twice``)."""
    seen: set[V] = set()
    listed = list(values)
    for value in listed:
        if value in seen:
            raise UsageError(f"{what} {value!r} is given twice")
        seen.add(value)
    return listed
