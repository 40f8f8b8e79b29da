"""Task generation on a snapshot: site cards, workflow proposals, multi-hop drafts, proofs and costs. Pure models.

The stages of ``capreplay tasks`` write these, one file each, so every stage can be inspected, reviewed and
re-run on its own:

- :class:`CardsFile` (``tasks cards``): one :class:`SiteCard` per site (registrable domain), CAP's
  ⟨functions, execution items, perception items⟩, every item located on a page of the snapshot by a
  selector chain, and the items dropped because the replay did not bear them out;
- :class:`ProposalsFile` (``tasks propose``): the functional affinity of each pair of sites and the
  workflow :class:`Proposal` s, each an information flow as a DAG of steps over the sites;
- a batch folder (``tasks instantiate``, ``tasks multihop``): :class:`BatchInfo`, the proven tasks as a
  tasks file, every :class:`TaskProof` and every :class:`Rejection` with its reason.

Every file records the snapshot id it was made from, the sha256 of each prompt it used and the model
calls it cost (:class:`StageCost`), so a file of another snapshot is refused and a batch's cost is known.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

from capreplay.models.schema import check_schema
from capreplay.models.workflow import ACTION_CODE, ID_RE, PERCEPTION_CODE, OutputType

GENERATION_SCHEMA_VERSION = 1
"""The schema of every file this module describes."""

FlowPattern = Literal["sequential", "conditional", "fan_in", "fan_out"]
"""CAP's four information-flow patterns (its parallel and chain patterns are fan-in and sequential here)."""
FLOW_PATTERNS: tuple[FlowPattern, ...] = ("sequential", "conditional", "fan_in", "fan_out")

Stage = Literal[
    "cards", "affinity", "propose", "proposal_check", "instantiate", "rubric", "multihop", "filter", "retrieval"
]
"""The model-calling stages, as costs and rejections name them ("retrieval": embeddings calls, no output tokens)."""

_STEP_ID = r"^S[0-9]{1,3}$"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _schema(value: int) -> int:
    return check_schema(value, supported=GENERATION_SCHEMA_VERSION)


# ---------------------------------------------------------------------------------------------- costs


class CallCost(_Model):
    """One model call: its stage, tokens and time, and whether the response cache answered it."""

    stage: Stage
    input_tokens: int = Field(ge=0)
    output_tokens: int = Field(ge=0)
    seconds: float = Field(ge=0, description="The call's latency (of the original call when cached).")
    cached: bool


class StageCost(_Model):
    """What a stage's model calls cost in all, as the provider billed them.

    Whether the response cache answered a call is left out, so a batch re-run from the cache writes the same
    bytes; the command line says how many calls the cache answered.
    """

    calls: int = Field(default=0, ge=0)
    input_tokens: int = Field(default=0, ge=0)
    output_tokens: int = Field(default=0, ge=0)
    seconds: float = Field(default=0.0, ge=0, description="Sum of the calls' latencies.")

    def plus(self, call: CallCost) -> StageCost:
        """This cost with one more call."""
        return StageCost(
            calls=self.calls + 1,
            input_tokens=self.input_tokens + call.input_tokens,
            output_tokens=self.output_tokens + call.output_tokens,
            seconds=round(self.seconds + call.seconds, 3),
        )


def add_costs(*costs: dict[str, StageCost]) -> dict[str, StageCost]:
    """Per-stage costs summed over several files."""
    total: dict[str, StageCost] = {}
    for cost in costs:
        for stage, part in cost.items():
            have = total.get(stage, StageCost())
            total[stage] = StageCost(
                calls=have.calls + part.calls,
                input_tokens=have.input_tokens + part.input_tokens,
                output_tokens=have.output_tokens + part.output_tokens,
                seconds=round(have.seconds + part.seconds, 3),
            )
    return dict(sorted(total.items()))


class Made(_Model):
    """How a generated file was made: from which snapshot, with which prompts and model, at what cost."""

    snapshot_id: str = Field(min_length=1, description="The id of the snapshot the file was made from.")
    model: dict[str, Any] = Field(description="The model settings that change answers (no endpoint).")
    prompts: dict[str, str] = Field(description="sha256 of each prompt file the stage used, by prompt name.")
    cost: dict[str, StageCost] = Field(default_factory=dict, description="Model calls by stage.")


# ---------------------------------------------------------------------------------------------- site cards


class ItemLocation(_Model):
    """Where an item is: a page of the snapshot and the selector chain of its element there."""

    url: str = Field(min_length=1, description="The page's URL, as the snapshot lists it.")
    selector: list[Annotated[str, Field(min_length=1)]] = Field(
        min_length=1,
        description="One CSS selector per hop: the first in the top document, each next in the iframe document "
        "or shadow root the previous one matched (the study's target chains).",
    )


class CardFunction(_Model):
    """A user-facing function of a site: what a user can get done there."""

    id: str = Field(pattern=r"^F[0-9]{1,3}$")
    name: str = Field(min_length=1, description="Verb and domain noun, e.g. 'Tent price filtering'.")
    tags: list[Literal["core", "standard", "read", "write"]] = Field(default_factory=list)
    description: str = Field(min_length=1)


class _Item(_Model):
    component: str = Field(min_length=1, description="The UI component, as CAP's taxonomy names it.")
    code: str
    function: str = Field(pattern=r"^F[0-9]{1,3}$", description="The id of the function it serves.")
    description: str = Field(min_length=1, description="What it does or shows, and where.")
    location: ItemLocation


class ExecutionItem(_Item):
    """A non-trivial interaction: ⟨UI component, action type, associated function⟩ and where it is."""

    id: str = Field(pattern=r"^A[0-9]{1,3}$")

    @model_validator(mode="after")
    def _action_code(self) -> Self:
        if not ACTION_CODE.match(self.code):
            raise ValueError(f"execution item {self.id!r}: {self.code!r} is not an action type (AT01-AT64)")
        return self


class PerceptionItem(_Item):
    """Something to understand by looking: ⟨UI component, perception type, associated function⟩ and where."""

    id: str = Field(pattern=r"^P[0-9]{1,3}$")

    @model_validator(mode="after")
    def _perception_code(self) -> Self:
        if not PERCEPTION_CODE.match(self.code):
            raise ValueError(f"perception item {self.id!r}: {self.code!r} is not a perception type (PT01-PT56)")
        return self


class SiteCard(_Model):
    """CAP's site card of one site, every item of it checked on the replay."""

    site: str = Field(min_length=1, description="The registrable domain, e.g. fellgear.test.")
    hosts: list[str] = Field(min_length=1, description="The snapshot's hosts of this site.")
    pages: list[str] = Field(description="The pages the card was made from.")
    functions: list[CardFunction]
    execution_items: list[ExecutionItem]
    perception_items: list[PerceptionItem]

    @model_validator(mode="after")
    def _references(self) -> Self:
        functions = {f.id for f in self.functions}
        for ids, what in (
            ([f.id for f in self.functions], "function"),
            ([i.id for i in self.execution_items], "execution item"),
            ([i.id for i in self.perception_items], "perception item"),
        ):
            twice = sorted({i for i in ids if ids.count(i) > 1})
            if twice:
                raise ValueError(f"card of {self.site}: {what} id {twice[0]!r} is used twice")
        items: list[ExecutionItem | PerceptionItem] = [*self.execution_items, *self.perception_items]
        for item in items:
            if item.function not in functions:
                raise ValueError(f"card of {self.site}: item {item.id!r} serves function {item.function!r}, "
                                 "which the card does not list")  # fmt: skip
        return self

    def item(self, item_id: str) -> ExecutionItem | PerceptionItem:
        """The execution or perception item ``item_id``; KeyError if there is none."""
        items: list[ExecutionItem | PerceptionItem] = [*self.execution_items, *self.perception_items]
        for item in items:
            if item.id == item_id:
                return item
        raise KeyError(item_id)


class DroppedItem(_Model):
    """An item a model proposed that the replay did not bear out, or a page reply that could not be read."""

    site: str
    page: str
    item: dict[str, Any] | None = Field(description="The item as the model wrote it; None for a whole reply.")
    reason: str = Field(min_length=1)


class CardsFile(_Model):
    """``cards.json``: the site cards of one snapshot."""

    schema_version: Annotated[int, Field(ge=1)] = GENERATION_SCHEMA_VERSION
    kind: Literal["cards"] = "cards"
    method: Literal["pages", "explore", "hand"] = Field(
        description="pages: one model call per crawled page; explore: the browser_use agent explored each site on "
        "the replay; hand: written by hand from the frozen pages (the benchmark's), every item checked on the "
        "replay.",
    )
    made: Made
    cards: list[SiteCard]
    dropped: list[DroppedItem] = Field(default_factory=list)

    @model_validator(mode="after")
    def _version(self) -> Self:
        _schema(self.schema_version)
        return self

    def card(self, site: str) -> SiteCard:
        """The card of ``site``; KeyError if there is none."""
        for card in self.cards:
            if card.site == site:
                return card
        raise KeyError(site)


class Rejection(_Model):
    """A candidate that did not make it into the tasks file, with the stage that refused it and why."""

    candidate: str = Field(description="The id of the proposal, draft or task.")
    stage: Literal["proposal", "instance", "rubric", "multihop", "filter", "proof", "review"]
    reason: str = Field(min_length=1)


# ---------------------------------------------------------------------------------------------- proposals


class Affinity(_Model):
    """CAP's functional affinity of two sites: how naturally information flows between them."""

    sites: tuple[str, str]
    level: Literal["high", "medium", "low"]
    reason: str = Field(min_length=1)


class UserScenario(_Model):
    """Who needs the task and why (CAP's user intent)."""

    persona: str = Field(min_length=1)
    situation: str = Field(min_length=1)
    pain_point: str = Field(min_length=1)
    decision_goal: str = Field(min_length=1)


class FlowStep(_Model):
    """One step of a workflow: what is done on which site with which function, and what it needs first."""

    id: str = Field(pattern=_STEP_ID)
    site: str = Field(min_length=1, description="The registrable domain of a card.")
    function: str = Field(pattern=r"^F[0-9]{1,3}$", description="The function of that site's card it uses.")
    does: str = Field(min_length=1, description="What the step does, with the values it takes from earlier steps.")
    needs: list[Annotated[str, Field(pattern=_STEP_ID)]] = Field(
        default_factory=list, description="Steps whose results this step takes (the DAG's edges)."
    )
    condition: str | None = Field(
        default=None, description="When the step runs only if an earlier result meets a condition: that condition."
    )
    produces: str = Field(min_length=1, description="The information the step yields.")


class ProposalCheck(_Model):
    """A review of a proposal against CAP's two criteria, by a model or a person."""

    by: Literal["model", "person"]
    meaningful: bool = Field(description="The intent is a real need, not a contrived combination of features.")
    dynamic: bool = Field(description="Values passed between sites are obtained during execution, not given.")
    reason: str = Field(default="", description="Why, in a sentence.")

    @property
    def passed(self) -> bool:
        """Both criteria hold."""
        return self.meaningful and self.dynamic


class Proposal(_Model):
    """CAP's task proposal ⟨user intent, planned output, information flow⟩."""

    id: str = Field(pattern=ID_RE)
    scenario: UserScenario
    pattern: FlowPattern
    steps: list[FlowStep] = Field(min_length=2)
    planned_outputs: list[Annotated[str, Field(min_length=1)]] = Field(min_length=1)
    checks: list[ProposalCheck] = Field(
        default_factory=list, description="The model's review, and a person's if one reviewed it (edit to add)."
    )

    @model_validator(mode="after")
    def _flow(self) -> Self:
        problems = flow_problems(self.pattern, self.steps)
        if problems:
            raise ValueError(f"proposal {self.id!r}: {problems[0]}")
        return self

    @property
    def sites(self) -> list[str]:
        """The sites of its steps, in the order they first appear."""
        return list(dict.fromkeys(step.site for step in self.steps))

    @property
    def rejected(self) -> ProposalCheck | None:
        """The first check that failed, if any: a rejected proposal is never instantiated."""
        return next((c for c in self.checks if not c.passed), None)


def flow_problems(pattern: FlowPattern, steps: list[FlowStep]) -> list[str]:
    """Why ``steps`` are not a DAG of ``pattern`` over two or more sites; empty when they are.

    Steps are listed in an order their ``needs`` respect (a step needs only earlier ones), which also makes the
    graph acyclic. sequential: a chain, each step needing the one before; fan_out: one step two or more others
    need; fan_in: one step needing two or more others; conditional: some step runs under a condition on a step
    it needs.
    """
    problems: list[str] = []
    seen: set[str] = set()
    dependents: dict[str, int] = {}
    for step in steps:
        if step.id in seen:
            problems.append(f"step id {step.id!r} is used twice")
        for need in step.needs:
            if need not in seen:
                problems.append(f"step {step.id!r} needs {need!r}, which is not an earlier step")
            dependents[need] = dependents.get(need, 0) + 1
        seen.add(step.id)
    if len({s.site for s in steps}) < 2:
        problems.append("a workflow spans two or more sites")
    if problems:
        return problems
    later = steps[1:]
    if any(not s.needs for s in later) and pattern != "fan_in":
        loose = next(s.id for s in later if not s.needs)
        problems.append(f"step {loose!r} takes nothing from earlier steps: every site must depend on another")
    if pattern == "sequential" and any(s.needs != [steps[i].id] for i, s in enumerate(later)):
        problems.append("a sequential flow is a chain: each step needs exactly the step before it")
    if pattern == "fan_out" and not any(n >= 2 for n in dependents.values()):
        problems.append("a fan-out flow has a step that two or more later steps need")
    if pattern == "fan_in" and not any(len(s.needs) >= 2 for s in steps):
        problems.append("a fan-in flow has a step that needs two or more earlier steps")
    if pattern == "conditional" and not any(s.condition and s.needs for s in steps):
        problems.append("a conditional flow has a step that runs under a condition on an earlier result")
    return problems


class ProposalsFile(_Model):
    """``proposals.json``: affinities between the cards' sites and the workflow proposals made from them."""

    schema_version: Annotated[int, Field(ge=1)] = GENERATION_SCHEMA_VERSION
    kind: Literal["proposals"] = "proposals"
    made: Made
    cards_sha256: str = Field(pattern=r"^[0-9a-f]{64}$", description="sha256 of the cards file's bytes.")
    affinities: list[Affinity]
    proposals: list[Proposal]
    rejected: list[Rejection] = Field(default_factory=list, description="Replies that gave no valid proposal.")

    @model_validator(mode="after")
    def _version(self) -> Self:
        _schema(self.schema_version)
        ids = [p.id for p in self.proposals]
        twice = sorted({i for i in ids if ids.count(i) > 1})
        if twice:
            raise ValueError(f"proposal id {twice[0]!r} is used twice")
        return self


# ---------------------------------------------------------------------------------------------- multi-hop


class PagePair(_Model):
    """A seed page and a partner retrieved for it (GTA's retrieval and pairing)."""

    seed: str
    partner: str
    score: float = Field(description="The partner's retrieval score for the seed (BM25 or cosine).")


# ---------------------------------------------------------------------------------------------- proofs and batches


class ProofCheck(_Model):
    """One condition a task must meet on the frozen pages."""

    name: Literal["gold_run", "on_snapshot", "values_on_pages", "evidence_on_pages", "gold_scores_1", "mutations"]
    passed: bool
    detail: str = Field(description="What was found, or why the check failed, in one line.")


class Mutation(_Model):
    """The gold answer with one output's value changed, and which leaves it failed."""

    output: str
    value: Any = Field(description="The changed value.")
    failed: list[str] = Field(description="Leaves that failed.")
    expected: list[str] = Field(description="Leaves that must fail: those that ground or pin this output.")
    passed: bool = Field(description="Every expected leaf failed and no other leaf changed its verdict.")


class TaskProof(_Model):
    """The proof that a task is solvable on the frozen pages, or where it fails."""

    task: str
    passed: bool
    checks: list[ProofCheck]
    reached: list[str] = Field(description="The pages the gold path reached, in order.")
    answer: dict[str, Any] | None = Field(description="The gold agent's answer, as JSON.")
    score: float | None = Field(description="The judge's score of the gold answer.")
    mutations: list[Mutation] = Field(default_factory=list)

    @property
    def reason(self) -> str:
        """The first failed check, as one line; empty when the proof holds."""
        failed = next((c for c in self.checks if not c.passed), None)
        return f"{failed.name}: {failed.detail}" if failed else ""


class BatchInfo(_Model):
    """``batch.json`` of a batch folder: what was generated, from what, at what cost, and what survived."""

    schema_version: Annotated[int, Field(ge=1)] = GENERATION_SCHEMA_VERSION
    kind: Literal["batch"] = "batch"
    batch: str = Field(pattern=ID_RE, description="The batch's name (its folder name).")
    generator: Literal["workflows", "multihop"]
    snapshot: str = Field(description="The snapshot folder, as given.")
    made: Made
    inputs: dict[str, str] = Field(default_factory=dict, description="sha256 of each input file, by role.")
    candidates: int = Field(ge=0, description="Tasks drafted before the proof.")
    proven: list[str] = Field(description="Ids of the tasks that passed the proof, in the tasks file.")
    rejected: dict[str, int] = Field(description="Rejections by stage.")
    proof_s: float = Field(ge=0, description="Wall time of the proof (gold run and judging).")

    @model_validator(mode="after")
    def _version(self) -> Self:
        _schema(self.schema_version)
        return self


_SLUG = re.compile(r"[^a-z0-9]+")


def slug(text: str, limit: int = 40) -> str:
    """A lower-case id made of ``text``'s words, at most ``limit`` characters."""
    return _SLUG.sub("-", text.lower()).strip("-")[:limit].strip("-") or "task"


OUTPUT_TYPES: tuple[OutputType, ...] = ("text", "number", "url", "text_list", "url_list")


class ReviewRejection(_Model):
    """One line of a tasks file's rejection log: a proven task a person rejected on a review sheet, and why."""

    task: str = Field(pattern=ID_RE)
    task_sha256: str = Field(pattern=r"^[0-9a-f]{64}$", description="sha256 of the task's JSON as reviewed.")
    reviewer: str = Field(min_length=1)
    reason: str = Field(min_length=1, description="The reviewer's reason, as written on the sheet.")
    sheet: str = Field(min_length=1, description="The review sheet, relative to the log's folder.")
    batch: str = Field(pattern=ID_RE, description="The batch the task came from.")
    snapshot_id: str = Field(min_length=1, description="The snapshot the batch was made and proven on.")
