"""Rubric trees: how the judge scores an answer to a workflow task. Pure models, no I/O.

A rubric is declarative data, never code. Its leaves are checks from a fixed whitelist, each on one of
the task's expected outputs (by name):

- ``numeric_range``: the value is a number within [min, max];
- ``regex``: the value matches a pattern;
- ``set_membership``: the value is one of a set (or a list's items all are, or a list holds all of a set);
- ``count``: a list has between min and max items;
- ``url_in_snapshot``: the URL (every URL of a list) was captured in the snapshot the agent ran on;
- ``claim_on_page``: the value holds on the page the answer cites for it, rendered offline from the same
  snapshot: a number within a tolerance, a normalised text present, or, where only reading can tell, a
  model's yes or no.

Every leaf is an ``action``, ``perception`` or ``other`` leaf and is critical or not; the scoring rule
(CAP, section 4.4) is in :mod:`capreplay.judge.tree_score`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Annotated, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

LeafKind = Literal["action", "perception", "other"]



def _check_bounds(check: str, low: float | None, high: float | None) -> None:
    """A range check needs at least one bound, and a lower bound that is not above the upper one."""
    if low is None and high is None:
        raise ValueError(f"{check} needs min, max or both")
    if low is not None and high is not None and low > high:
        raise ValueError(f"{check} has min {low} above max {high}")

class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class NumericRange(_Model):
    """The value, read as a number (thousands separators, currency signs and units dropped), is in [min, max]."""

    check: Literal["numeric_range"]
    field: str = Field(min_length=1, description="The expected output checked.")
    min: float | None = Field(default=None, description="Smallest allowed value; None: no lower bound.")
    max: float | None = Field(default=None, description="Largest allowed value; None: no upper bound.")

    @model_validator(mode="after")
    def _bounds(self) -> Self:
        _check_bounds("numeric_range", self.min, self.max)
        return self


class Regex(_Model):
    """The value (text, whitespace collapsed) matches ``pattern`` somewhere, or in full with ``full``."""

    check: Literal["regex"]
    field: str = Field(min_length=1)
    pattern: str = Field(min_length=1, description="A Python regular expression.")
    full: bool = Field(default=False, description="The whole value must match, not just a part of it.")
    ignore_case: bool = True

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, pattern: str) -> str:
        try:
            re.compile(pattern)
        except re.error as e:
            raise ValueError(f"pattern {pattern!r} is not a valid regular expression: {e}") from e
        return pattern


class SetMembership(_Model):
    """Membership in a set of texts, compared normalised (case, dashes, whitespace).

    ``one_of``: a single value is one of ``values``; ``all_in``: every item of a list is; ``contains_all``:
    a list holds every one of ``values`` (in any order, among others).
    """

    check: Literal["set_membership"]
    field: str = Field(min_length=1)
    values: list[Annotated[str, Field(min_length=1)]] = Field(min_length=1)
    mode: Literal["one_of", "all_in", "contains_all"] = "one_of"


class Count(_Model):
    """A list has between ``min`` and ``max`` items (distinct after normalisation)."""

    check: Literal["count"]
    field: str = Field(min_length=1)
    min: int | None = Field(default=None, ge=0)
    max: int | None = Field(default=None, ge=0)

    @model_validator(mode="after")
    def _bounds(self) -> Self:
        _check_bounds("count", self.min, self.max)
        return self


class UrlInSnapshot(_Model):
    """The URL (each URL of a list) is a page captured in the snapshot: an archived response, status < 400."""

    check: Literal["url_in_snapshot"]
    field: str = Field(min_length=1)


class ClaimOnPage(_Model):
    """The value holds on the page cited for it in ``url_field``, rendered offline from the same snapshot.

    ``number``: a number on the page (its text, its attributes, or a JSON response it loaded) is within
    ``tolerance`` of the value; ``text``: the value's normalised text occurs there; ``model``: a model,
    shown the page's text, says whether the claim holds. The evidence kept is the URL, the WARC record
    (id and payload digest) that held the value and a snippet around it.
    """

    check: Literal["claim_on_page"]
    field: str = Field(min_length=1, description="The claimed value.")
    url_field: str = Field(min_length=1, description="The output holding the URL the value is cited from.")
    match: Literal["number", "text", "model"] = "text"
    tolerance: float = Field(default=0.0, ge=0, description="For ``number``: the largest allowed absolute difference.")
    claim: str | None = Field(
        None, description="For ``model``: the claim in words, with '{value}' where the value goes."
    )

    @model_validator(mode="after")
    def _model_claim(self) -> Self:
        if self.match == "model" and not self.claim:
            raise ValueError("a claim_on_page leaf that asks a model needs 'claim'")
        if self.claim is not None and "{value}" not in self.claim:
            raise ValueError("'claim' must hold '{value}', where the claimed value goes")
        return self


Check = Annotated[
    NumericRange | Regex | SetMembership | Count | UrlInSnapshot | ClaimOnPage, Field(discriminator="check")
]
CHECK_NAMES: tuple[str, ...] = ("numeric_range", "regex", "set_membership", "count", "url_in_snapshot", "claim_on_page")
"""The whitelist: the only checks a leaf may use."""


class RubricNode(_Model):
    """A node of a rubric tree: a leaf with a check, or an inner node with children.

    A failed critical child zeroes its parent; once every critical child passes, the parent scores the mean
    of its non-critical children (1 when it has none).
    """

    id: str = Field(min_length=1, description="Unique within the rubric.")
    description: str = Field(min_length=1, description="What the node verifies, in words.")
    critical: bool = Field(default=False, description="Failing it zeroes the parent.")
    kind: LeafKind | None = Field(default=None, description="For a leaf: action, perception or other.")
    point: str | None = Field(default=None, description="For a leaf: the covered point it verifies, if any.")
    check: Check | None = None
    children: list[RubricNode] = Field(default_factory=list)

    @model_validator(mode="after")
    def _leaf_or_inner(self) -> Self:
        if self.children:
            if self.check is not None or self.kind is not None or self.point is not None:
                raise ValueError(f"node {self.id!r} has children, so it cannot have a check, kind or point")
        else:
            if self.check is None:
                raise ValueError(f"leaf {self.id!r} needs a check (one of {', '.join(CHECK_NAMES)})")
            if self.kind is None:
                raise ValueError(f"leaf {self.id!r} needs a kind: action, perception or other")
        return self

    def walk(self) -> Iterator[RubricNode]:
        """This node and every node under it, depth first, in order."""
        yield self
        for child in self.children:
            yield from child.walk()

    def leaves(self) -> Iterator[RubricNode]:
        """Every leaf under (or at) this node, in order."""
        return (node for node in self.walk() if not node.children)


def check_fields(check: Check) -> tuple[str, ...]:
    """The expected outputs a check reads."""
    if isinstance(check, ClaimOnPage):
        return (check.field, check.url_field)
    return (check.field,)
