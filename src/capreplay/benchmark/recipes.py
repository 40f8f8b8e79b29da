"""The benchmark's tasks as written: compact recipes, validated, expanded into workflow tasks. Pure.

A recipe says what a task needs and nothing the rubric can be derived from: the description (first person, a
goal, not the clicks), the sites and flow, CAP's covered points, the gold path, and its outputs in two kinds:

- an :class:`Answer`: a value the user asked for (or a value that shows a condition held), with the value the
  frozen pages give, the page output it is read from (``cited_on``), and the covered point it shows;
- a :class:`Link`: a page's URL, given as provenance, with the pattern its URL must match when reaching it
  needs an action (a filter, a sort, a search) and the covered point that pattern shows.

:func:`expand` turns a recipe into a :class:`~capreplay.models.workflow.WorkflowTask` whose rubric needs no
model: each answer is pinned to its value (a number within its tolerance, a text among its accepted forms, a
list holding every expected item and no more) and, where it cites a page, found on that page; each link is a
page of the snapshot and matches its pattern. Critical leaves are the ones without which the answer is wrong:
the pinned value, and the cited page being a page of the snapshot.
"""

from __future__ import annotations

import re
from typing import Literal, Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

from capreplay.models.rubric import ClaimOnPage, Count, NumericRange, Regex, RubricNode, SetMembership, UrlInSnapshot
from capreplay.models.workflow import (
    ID_RE,
    CoveredPoint,
    EvidenceSnippet,
    ExpectedOutput,
    GoldStep,
    WorkflowTask,
)

Flow = Literal["sequential", "fan_in", "fan_out", "conditional", "multi_hop"]
_NAME = r"^[a-z][a-z0-9_]{0,63}$"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Answer(_Model):
    """A value the answer must give, and the value the frozen pages give for it."""

    name: str = Field(pattern=_NAME)
    type: Literal["text", "number", "text_list"]
    description: str = Field(min_length=1)
    value: str | float | list[str] = Field(description="The expected value: text, number, or the list's items.")
    accept: list[str] = Field(default_factory=list, description="Other spellings of a text value that are right.")
    tolerance: float = Field(default=0.0, ge=0, description="For a number: the largest allowed difference.")
    cited_on: str | None = Field(default=None, description="The link whose page shows the value.")
    point: str | None = Field(default=None, description="The covered point the value shows.")
    role: Literal["user_value", "condition_check"] = "user_value"

    @model_validator(mode="after")
    def _value_fits_type(self) -> Self:
        fits = {"text": isinstance(self.value, str), "number": isinstance(self.value, int | float),
                "text_list": isinstance(self.value, list) and bool(self.value)}[self.type]  # fmt: skip
        if not fits:
            raise ValueError(f"answer {self.name!r} is {self.type} but its value is {self.value!r}")
        if self.cited_on is not None and self.type == "text_list":
            raise ValueError(f"answer {self.name!r}: a list is not cited on one page (cite its items' page by a link)")
        return self

    def expected_text(self) -> str | list[str]:
        """The value as the gold path reads it (numbers as text: 12, not 12.0)."""
        if isinstance(self.value, float | int) and not isinstance(self.value, bool):
            return repr(float(self.value)) if float(self.value) != int(self.value) else str(int(self.value))
        return self.value  # type: ignore[return-value]


class Link(_Model):
    """The URL of a page the answer rests on."""

    name: str = Field(pattern=_NAME)
    description: str = Field(min_length=1)
    pattern: str | None = Field(default=None, description="A regular expression the URL must match (a state).")
    point: str | None = Field(default=None, description="The covered point the pattern shows.")
    value: str = Field(min_length=1, description="The URL the gold path reaches.")

    @model_validator(mode="after")
    def _pattern(self) -> Self:
        if self.pattern is not None:
            re.compile(self.pattern)
            if not re.search(self.pattern, self.value, re.IGNORECASE):
                raise ValueError(f"link {self.name!r}: its own URL {self.value!r} does not match {self.pattern!r}")
        if self.point is not None and self.pattern is None:
            raise ValueError(f"link {self.name!r} shows point {self.point!r}, so it needs a pattern")
        return self


class Recipe(_Model):
    """One task of the benchmark, as written."""

    id: str = Field(pattern=ID_RE)
    description: str = Field(min_length=1, description="The user's goal, in the first person.")
    sites: list[str] = Field(min_length=1)
    flow: Flow
    start_url: str = Field(min_length=1)
    covered_points: list[CoveredPoint] = Field(default_factory=list)
    answers: list[Answer] = Field(min_length=1)
    links: list[Link] = Field(default_factory=list)
    gold_path: list[GoldStep] = Field(min_length=1)
    evidence: list[EvidenceSnippet] = Field(default_factory=list)
    provenance: str = Field(min_length=1, description="How the task was written (by hand from which pages; what a "
                            "model would have done).")  # fmt: skip

    @model_validator(mode="after")
    def _references(self) -> Self:
        links = {link.name for link in self.links}
        points = {p.id: p for p in self.covered_points}
        for answer in self.answers:
            if answer.cited_on is not None and answer.cited_on not in links:
                raise ValueError(f"task {self.id!r}: answer {answer.name!r} cites {answer.cited_on!r}, not a link")
        for owner, point in [(a.name, a.point) for a in self.answers] + [(k.name, k.point) for k in self.links]:
            if point is not None and point not in points:
                raise ValueError(f"task {self.id!r}: {owner!r} shows point {point!r}, not a covered point")
        expand(self)  # the workflow task's own validation: outputs read, points verified, sites, flow
        return self


class RecipeFile(_Model):
    """A file of recipes: one application's tasks, or the tasks spanning several."""

    tasks: list[Recipe] = Field(min_length=1)


def expand(recipe: Recipe) -> WorkflowTask:
    """The workflow task the recipe describes, with its rubric (ValueError if it is inconsistent)."""
    outputs = [ExpectedOutput(name=a.name, type=a.type, role=a.role, description=a.description) for a in recipe.answers]
    outputs += [ExpectedOutput(name=k.name, type="url", role="provenance_url", description=k.description)
                for k in recipe.links]  # fmt: skip
    kinds: dict[str, str] = {p.id: p.type for p in recipe.covered_points}
    children = [_answer_node(a, kinds) for a in recipe.answers] + [_link_node(k, kinds) for k in recipe.links]
    rubric = RubricNode(id=recipe.id, description=_first_sentence(recipe.description), children=children)
    expected: dict[str, str | list[str]] = {a.name: a.expected_text() for a in recipe.answers}
    expected |= {k.name: k.value for k in recipe.links}
    return WorkflowTask(
        id=recipe.id, description=recipe.description, sites=recipe.sites, flow=recipe.flow,
        start_url=recipe.start_url, covered_points=recipe.covered_points, outputs=outputs, rubric=rubric,
        gold_path=recipe.gold_path, expected=expected, evidence=recipe.evidence,
    )  # fmt: skip


def _kind(point: str | None, kinds: dict[str, str], default: Literal["perception", "other"]) -> Literal[
        "action", "perception", "other"]:  # fmt: skip
    if point is None:
        return default
    return "action" if kinds.get(point) == "action" else "perception"


def _answer_node(answer: Answer, kinds: dict[str, str]) -> RubricNode:
    kind = _kind(answer.point, kinds, "other")
    leaves = [RubricNode(id=f"{answer.name}-value", description=f"Correct: {answer.description.rstrip('.')}",
                         critical=True, kind=kind, point=answer.point,
                         check=_pin(answer))]  # fmt: skip
    if answer.type == "text_list":
        assert isinstance(answer.value, list)
        leaves.append(RubricNode(id=f"{answer.name}-count", description=f"Exactly {len(answer.value)} items",
                                 critical=False, kind="other",
                                 check=Count(check="count", field=answer.name, min=len(answer.value),
                                             max=len(answer.value))))  # fmt: skip
    if answer.cited_on is not None:
        leaves.append(RubricNode(id=f"{answer.name}-on-page", description="The value is on the page cited for it",
                                 critical=False, kind="other",
                                 check=ClaimOnPage(check="claim_on_page", field=answer.name, url_field=answer.cited_on,
                                                   match="number" if answer.type == "number" else "text",
                                                   tolerance=answer.tolerance, claim=None)))  # fmt: skip
    return RubricNode(id=answer.name, description=answer.description, children=leaves)


def _pin(answer: Answer) -> NumericRange | SetMembership:
    if answer.type == "number":
        assert isinstance(answer.value, int | float)
        value = float(answer.value)
        return NumericRange(check="numeric_range", field=answer.name, min=value - answer.tolerance,
                            max=value + answer.tolerance)  # fmt: skip
    if answer.type == "text_list":
        assert isinstance(answer.value, list)
        return SetMembership(check="set_membership", field=answer.name, values=answer.value, mode="contains_all")
    assert isinstance(answer.value, str)
    return SetMembership(check="set_membership", field=answer.name, values=[answer.value, *answer.accept])


def _link_node(link: Link, kinds: dict[str, str]) -> RubricNode:
    leaves = [RubricNode(id=f"{link.name}-captured", description="The page is a page of the snapshot",
                         critical=True, kind="other", check=UrlInSnapshot(check="url_in_snapshot", field=link.name))]
    if link.pattern is not None:
        leaves.append(RubricNode(id=f"{link.name}-state", description="The page is in the state the task needs",
                                 critical=True, kind=_kind(link.point, kinds, "other"), point=link.point,
                                 check=Regex(check="regex", field=link.name, pattern=link.pattern)))  # fmt: skip
    return RubricNode(id=link.name, description=link.description, children=leaves)


def _first_sentence(text: str) -> str:
    return re.split(r"(?<=[.?!])\s", text.strip(), maxsplit=1)[0]
