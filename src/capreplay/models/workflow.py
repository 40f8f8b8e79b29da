"""Workflow tasks: cross-site tasks an agent solves on a frozen world, and how they are judged. Pure models.

A :class:`WorkflowTask` is written as a user would ask it (first person), names the sites it spans and
how information flows between them, lists the covered points (the complex actions and the perception it
needs, coded with CAP's taxonomy: AT01-AT64, PT01-PT56), the outputs an answer must give, the rubric
tree the judge scores it with, and a gold path: the steps that solve it, which the ``gold`` agent
replays and the capture plan freezes. :func:`rubric_problems` is the validation a rubric must pass, used
both when the file is read and when a model writes a rubric.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Annotated, Literal, Self
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from capreplay.llm.messages import ModelSettings
from capreplay.models.capture_plan import (
    Action,
    Autoscroll,
    Click,
    Drag,
    Fill,
    Hover,
    PagePlan,
    Press,
    Scroll,
    Select,
    TypeText,
    Upload,
    Wait,
    WaitForNetworkIdle,
)
from capreplay.models.rubric import (
    ClaimOnPage,
    Count,
    NumericRange,
    RubricNode,
    SetMembership,
    UrlInSnapshot,
    check_fields,
)

ID_RE = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"
ACTION_CODE = re.compile(r"^AT(0[1-9]|[1-5][0-9]|6[0-4])$")
PERCEPTION_CODE = re.compile(r"^PT(0[1-9]|[1-4][0-9]|5[0-6])$")

OutputType = Literal["text", "number", "url", "text_list", "url_list"]
LIST_TYPES: frozenset[str] = frozenset({"text_list", "url_list"})
URL_TYPES: frozenset[str] = frozenset({"url", "url_list"})


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class CoveredPoint(_Model):
    """One complex action or perception the task cannot be solved without."""

    id: str = Field(pattern=ID_RE)
    type: Literal["action", "perception"]
    code: str = Field(description="CAP taxonomy code: AT01-AT64 for actions, PT01-PT56 for perception.")
    site: str = Field(min_length=1, description="The host it happens on.")
    description: str = Field(min_length=1)

    @model_validator(mode="after")
    def _code_matches_type(self) -> Self:
        pattern = ACTION_CODE if self.type == "action" else PERCEPTION_CODE
        if not pattern.match(self.code):
            expected = "AT01-AT64" if self.type == "action" else "PT01-PT56"
            raise ValueError(
                f"covered point {self.id!r} is {self.type}, so its code must be {expected}, not {self.code!r}"
            )
        return self


class ExpectedOutput(_Model):
    """A field the answer must give."""

    name: str = Field(pattern=r"^[a-z][a-z0-9_]{0,63}$")
    type: OutputType
    role: Literal["user_value", "condition_check", "provenance_url"] = Field(
        description="user_value: what the user asked for; condition_check: a value that shows a condition held; "
        "provenance_url: the page a value was read from."
    )
    description: str = Field(min_length=1)

    @model_validator(mode="after")
    def _provenance_is_url(self) -> Self:
        if self.role == "provenance_url" and self.type not in URL_TYPES:
            raise ValueError(f"output {self.name!r} is a provenance URL, so its type must be url or url_list")
        return self


class Goto(_Model):
    """Load a URL in the current tab."""

    type: Literal["goto"]
    url: str = Field(min_length=1)

    @field_validator("url")
    @classmethod
    def _http(cls, url: str) -> str:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http(s) URL with a host: {url!r}")
        return url


class Read(_Model):
    """Read an output from the current page: an element's text or attribute, or the page's URL.

    ``pattern``'s first group (or whole match) is kept; ``many`` reads every matching element into a list.
    """

    type: Literal["read"]
    output: str = Field(min_length=1, description="The expected output this fills.")
    source: Literal["text", "attribute", "url"] = "text"
    selector: str | None = Field(default=None, description="A Playwright selector; required unless source is url.")
    attribute: str | None = Field(default=None, description="For source attribute: the attribute's name.")
    pattern: str | None = Field(default=None, description="A regular expression applied to what was read.")
    many: bool = Field(default=False, description="Read every element the selector matches, in order, into a list.")

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        if self.source != "url" and not self.selector:
            raise ValueError(f"reading {self.output!r} from the page's {self.source} needs a selector")
        if (self.source == "attribute") != (self.attribute is not None):
            raise ValueError(f"reading {self.output!r}: 'attribute' goes with source attribute, and only with it")
        if self.pattern is not None:
            try:
                re.compile(self.pattern)
            except re.error as e:
                raise ValueError(f"reading {self.output!r}: bad pattern: {e}") from e
        return self


class EvidenceSnippet(_Model):
    """A passage of a page that a task's answer rests on."""

    url: str = Field(min_length=1)
    text: str = Field(min_length=1)


GoldStep = Annotated[
    Goto | Click | Fill | TypeText | Press | Upload | Select | Hover | Drag | Scroll | Wait | WaitForNetworkIdle
    | Autoscroll | Read,
    Field(discriminator="type"),
]


class WorkflowTask(_Model):
    """One cross-site task."""

    id: str = Field(pattern=ID_RE)
    description: str = Field(min_length=1, description="The task as a user asks it, in the first person.")
    sites: list[str] = Field(min_length=1, description="The hosts the task spans, in the order it visits them.")
    flow: Literal["sequential", "fan_in", "fan_out", "conditional", "multi_hop"] = Field(
        description="How information moves between the sites; multi_hop: GTA's question that needs two pages, "
        "on one site or two."
    )
    start_url: str = Field(min_length=1, description="Where the agent's browser starts.")
    covered_points: list[CoveredPoint] = Field(
        default_factory=list, description="CAP's covered points; a cross-site workflow has at least one."
    )
    outputs: list[ExpectedOutput] = Field(min_length=1)
    rubric: RubricNode
    gold_path: list[GoldStep] = Field(min_length=1, description="Steps that solve the task, in order.")
    expected: dict[str, str | list[str]] | None = Field(
        default=None,
        description="The answer as its generator read it from the pages (numbers as text); the proof checks that "
        "the gold path gives it. None for tasks written by hand.",
    )
    evidence: list[EvidenceSnippet] = Field(
        default_factory=list, description="Text each page of a multi-hop task contributes; the proof finds it there."
    )

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        problems = task_problems(self)
        if problems:
            raise ValueError(problems[0])
        return self

    def output(self, name: str) -> ExpectedOutput:
        """The expected output ``name``; KeyError if there is none."""
        return _named(self.outputs, lambda out: out.name, name)


def capture_pages(task: WorkflowTask) -> list[PagePlan]:
    """The gold path as capture plan pages, so every request a correct solution makes is archived.

    The first page is the start URL; each ``goto`` starts the next; the steps between become that page's
    actions. Reads only look at the page, so they are left out.
    """
    pages: list[tuple[str, list[Action]]] = [(task.start_url, [])]
    for step in task.gold_path:
        if isinstance(step, Goto):
            pages.append((step.url, []))
        elif not isinstance(step, Read):
            pages[-1][1].append(step)
    return [PagePlan(url=url, actions=actions) for url, actions in pages]


def _named[T](items: Iterable[T], name_of: Callable[[T], str], name: str) -> T:
    """The first of ``items`` called ``name``; KeyError if there is none."""
    found = next((item for item in items if name_of(item) == name), None)
    if found is None:
        raise KeyError(name)
    return found


def _duplicates(values: list[str]) -> list[str]:
    return sorted({v for v in values if values.count(v) > 1})


def rubric_problems(rubric: RubricNode, outputs: list[ExpectedOutput], points: list[CoveredPoint]) -> list[str]:
    """Why ``rubric`` cannot judge a task with these outputs and covered points; empty when it can.

    Node ids are unique; each check reads outputs that exist and have a type it can check; a leaf's point
    is a covered point of the leaf's kind; and every covered point is verified by at least one leaf of its
    type.
    """
    problems: list[str] = []
    nodes = list(rubric.walk())
    problems += [f"rubric node id {d!r} is used twice" for d in _duplicates([n.id for n in nodes])]
    by_name = {o.name: o for o in outputs}
    by_point = {p.id: p for p in points}
    for leaf in rubric.leaves():
        assert leaf.check is not None
        check = leaf.check
        for name in check_fields(check):
            if name not in by_name:
                problems.append(f"leaf {leaf.id!r}: {check.check} reads output {name!r}, which the task does not have")
        if any(name not in by_name for name in check_fields(check)):
            continue
        kind = by_name[check.field].type
        if isinstance(check, NumericRange) and kind != "number":
            problems.append(f"leaf {leaf.id!r}: numeric_range needs a number output, {check.field!r} is {kind}")
        if isinstance(check, Count) and kind not in LIST_TYPES:
            problems.append(f"leaf {leaf.id!r}: count needs a list output, {check.field!r} is {kind}")
        if isinstance(check, SetMembership) and (check.mode == "one_of") == (kind in LIST_TYPES):
            needs = "a single value" if check.mode == "one_of" else "a list"
            problems.append(f"leaf {leaf.id!r}: set_membership {check.mode} needs {needs}, {check.field!r} is {kind}")
        if isinstance(check, UrlInSnapshot) and kind not in URL_TYPES:
            problems.append(f"leaf {leaf.id!r}: url_in_snapshot needs a URL output, {check.field!r} is {kind}")
        if isinstance(check, ClaimOnPage):
            if kind in LIST_TYPES:
                problems.append(f"leaf {leaf.id!r}: claim_on_page checks a single value, {check.field!r} is {kind}")
            if check.match == "number" and kind != "number":
                problems.append(f"leaf {leaf.id!r}: a number claim needs a number output, {check.field!r} is {kind}")
            if by_name[check.url_field].type != "url":
                problems.append(f"leaf {leaf.id!r}: claim_on_page's url_field {check.url_field!r} must be a url output")
        if leaf.point is not None:
            point = by_point.get(leaf.point)
            if point is None:
                problems.append(f"leaf {leaf.id!r} names covered point {leaf.point!r}, which the task does not have")
            elif point.type != leaf.kind:
                problems.append(f"leaf {leaf.id!r} is {leaf.kind} but verifies {point.type} point {point.id!r}")
    reached = {leaf.point for leaf in rubric.leaves() if leaf.point is not None}
    for point in points:
        if point.id not in reached:
            problems.append(f"covered point {point.id!r} ({point.type} {point.code}) is verified by no leaf")
    return problems


def task_problems(task: WorkflowTask) -> list[str]:
    """Everything inconsistent within one task: ids, the rubric, the gold path's reads."""
    problems = [f"task {task.id!r}: output {d!r} is listed twice" for d in _duplicates([o.name for o in task.outputs])]
    problems += [
        f"task {task.id!r}: covered point {d!r} is listed twice"
        for d in _duplicates([p.id for p in task.covered_points])
    ]
    problems += [f"task {task.id!r}: site {d!r} is listed twice" for d in _duplicates(task.sites)]
    problems += [f"task {task.id!r}: {p}" for p in rubric_problems(task.rubric, task.outputs, task.covered_points)]
    if task.flow != "multi_hop" and len(task.sites) < 2:
        problems.append(f"task {task.id!r}: a {task.flow} workflow spans two or more sites")
    if task.flow != "multi_hop" and not task.covered_points:
        problems.append(f"task {task.id!r}: a {task.flow} workflow needs at least one covered point")
    names = {o.name for o in task.outputs}
    if task.expected is not None:
        problems += [f"task {task.id!r}: expected value of {n!r}, which is not an output"
                     for n in sorted(set(task.expected) - names)]  # fmt: skip
    read = [step.output for step in task.gold_path if isinstance(step, Read)]
    problems += [f"task {task.id!r}: the gold path reads {n!r}, which is not an output" for n in read if n not in names]
    problems += [f"task {task.id!r}: the gold path never reads output {n!r}" for n in sorted(names - set(read))]
    for step in task.gold_path:
        if not isinstance(step, Read) or step.output not in names:
            continue
        kind = task.output(step.output).type
        if step.many != (kind in LIST_TYPES):
            problems.append(f"task {task.id!r}: output {step.output!r} is read with many={step.many}, but is {kind}")
    for point in task.covered_points:
        if point.site not in task.sites:
            problems.append(f"task {task.id!r}: covered point {point.id!r} is on {point.site!r}, not one of its sites")
    return problems


class JudgeSettings(_Model):
    """The judge's model calls: extracting fields from free-text answers, and claims only a model can check."""

    model: ModelSettings
    max_attempts: int = Field(default=3, ge=1, le=10, description="make-rubric: attempts before giving up on a task.")


class Workflows(_Model):
    """The agents' cross-site tasks, the snapshot of the world they run on, and the judge's settings."""

    snapshot: str = Field(min_length=1, description="Name of the snapshot (in 'snapshots') of the world.")
    judge: JudgeSettings
    agent_model: ModelSettings | None = Field(
        None, description="The model of every model-driven agent (browser_use); None: only model-free agents run."
    )
    repeats: int = Field(default=1, ge=1, description="Episodes per task and agent.")
    seed: int = Field(default=0, description="Seed of the task order of each repeat.")
    step_limit: int = Field(default=40, ge=1, description="Steps an agent may take per episode.")
    episode_timeout_s: float = Field(default=600, gt=0, description="Wall-clock limit of one episode.")
    tasks: list[WorkflowTask] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique(self) -> Self:
        duplicates = _duplicates([t.id for t in self.tasks])
        if duplicates:
            raise ValueError(f"duplicate workflow task id {duplicates[0]!r}")
        return self

    def task(self, task_id: str) -> WorkflowTask:
        """The task ``task_id``; KeyError if there is none."""
        return _named(self.tasks, lambda task: task.id, task_id)
