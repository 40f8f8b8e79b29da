"""Tasks and the study protocol: the models of ``tasks.json``. Pure models, no I/O.

The repository's ``tasks.json`` is a :class:`TasksFile`: a schema version, the snapshots it runs on
(``{name: path}``, relative to the file), and one section per family of tasks, each naming its snapshot:

- ``study``: the representation study, with its :class:`Protocol` (prompt template, answer formats,
  READ normalisation, scoring rules, model settings, concurrency, repeats, seed), its pages, and the READ
  and ACT tasks on them;
- ``replay_checks``: small end-to-end checks that the fixture snapshot replays what it captured;
- ``workflows``: the agents' cross-site tasks on a frozen world, with their rubrics and gold paths
  (:mod:`capreplay.models.workflow`).

Each family is an optional section, so files written before one was added still load. :class:`PagesAndTasks`
is the bare pages-and-tasks file the study's fixture sites ship with.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Annotated, Any, Literal, Self, get_args

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from capreplay.errors import InputError, validation_reason
from capreplay.llm.messages import ModelSettings
from capreplay.models.geometry import Box, Layout
from capreplay.models.schema import check_schema
from capreplay.models.workflow import Workflows

TASKS_SCHEMA_VERSION = 1
"""The ``tasks.json`` schema this code reads."""
SchemaVersion = Annotated[int, AfterValidator(partial(check_schema, supported=TASKS_SCHEMA_VERSION))]
"""A ``schema_version`` that must be TASKS_SCHEMA_VERSION."""

Location = Literal[
    "above_fold",
    "below_fold",
    "far_below_fold",
    "attribute_only",
    "iframe_same_origin",
    "iframe_cross_site",
    "shadow_closed",
    "derived",
]
"""Where a READ answer or an ACT target is on its page, measured from page geometry; ``derived`` for an answer
worked out from the page (a count, a sum), which has no one place."""

Boundary = Literal["iframe_same_origin", "iframe_cross_site", "shadow_open", "shadow_closed"]
"""What a hop of an ACT chain crosses: an iframe of the top document's origin or of another, or a shadow root."""

Representation = Literal[
    "raw_html", "markdown", "accessibility_tree", "screenshot", "indexed_dom", "aria_ai", "stagehand_snapshot"
]
"""A way of showing a page to a model."""
REPRESENTATIONS: tuple[Representation, ...] = get_args(Representation)

PAGE_SLOT = "{page}"
QUESTION_SLOT = "{question}"
ANSWER_FORMAT_SLOT = "{answer_format}"
USER_SLOTS = (PAGE_SLOT, QUESTION_SLOT, ANSWER_FORMAT_SLOT)
"""The slots of the user template; each occurs exactly once."""

FieldType = Literal["string", "integer", "number"]

# The answer shapes the resolvers read: (name, type, required). A protocol may word its instructions as
# it likes, but a shape other than these would be answers no resolver understands.
READ_ANSWER_SHAPE: tuple[tuple[str, FieldType, bool], ...] = (("answer", "string", True),)
ACT_ANSWER_SHAPES: dict[Representation, tuple[tuple[str, FieldType, bool], ...]] = {
    "raw_html": (("selector", "string", True),),
    "markdown": (("text", "string", True), ("occurrence", "integer", False)),
    "accessibility_tree": (("role", "string", True), ("name", "string", True), ("occurrence", "integer", False)),
    "indexed_dom": (("index", "integer", True),),
    "screenshot": (("x", "number", True), ("y", "number", True)),
    "aria_ai": (("ref", "string", True),),
    "stagehand_snapshot": (("id", "string", True),),
}

NormalizationStepName = Literal["nfkc", "dashes", "markdown_unescape", "whitespace", "trailing_period", "casefold"]
READ_NORMALIZATION: tuple[NormalizationStepName, ...] = get_args(NormalizationStepName)
"""The steps :func:`capreplay.util.answer_text.normalize_answer` applies, in its order."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


# ---------------------------------------------------------------------------------------------- pages, tasks


class StudyPage(_Model):
    """One page the tasks run on, as captured in the snapshot."""

    id: str = Field(min_length=1, description="Short name the tasks refer to.")
    kind: str = Field(min_length=1, description="The page kind (article, docs, product_listing, ...).")
    url: str = Field(min_length=1, description="The captured URL the page session loads.")
    settle_ms: int = Field(
        default=500, ge=0, le=30_000,
        description="How long the page is left after the network went quiet (as the replay server sees it) before "
        "anything is read. Longer for a page that changes on a timer once loaded (a newsletter pop-up a few seconds "
        "in), so that every view, box and answer of its session sees one state of it.",
    )  # fmt: skip


class ReadTask(_Model):
    """A question with one exact answer on the page."""

    id: str = Field(min_length=1)
    page: str = Field(description="The id of the page the question is about.")
    kind: Literal["READ"]
    question: str = Field(min_length=1)
    answer: str = Field(min_length=1, description="The answer, exactly as the page shows it.")
    aliases: list[str] = Field(default_factory=list, description="Other spellings that also count as correct.")
    location: Location | None = Field(default=None, description="Where the answer is; measured, never hand-written.")
    derived: bool = Field(
        default=False,
        description="The answer is worked out from the page (a count, a sum), not shown on it: whether a "
        "representation holds it is then not decided (a substring such as '8' is found anywhere).",
    )


class NameMatch(_Model):
    """How a name finds an ACT target: how many elements the name matches, and which of them is the target."""

    name: str
    matches: int = Field(ge=0, description="Elements the name matches on the page, in the answer format's own sense.")
    occurrence: int | None = Field(ge=1, description="1-based position of the target among them, in page order; "
                                   "None when the name matches other elements only.")


class RoleMatch(NameMatch):
    """The target's own node in Playwright's ARIA snapshot, and how ``get_by_role`` with it finds the target."""

    role: str
    line: str = Field(description="The node's line, as the accessibility tree shows it (``- button \"Save\"``).")


class TargetRecord(_Model):
    """An ACT target as the measuring step saw it in a page load of its own, in the screenshot's layout.

    Measured through Playwright's locators, element handles and the page's own scripts, not the scorer's
    CDP lookups: the self-test builds its perfect answers and its expected outcomes from this record, so a
    scorer that finds the wrong element, or measures it in another layout, fails it.
    """

    layout: Layout = Field(description="The window the record was measured in (the screenshot's).")
    boundaries: list[Boundary] = Field(description="What each hop of the chain after the first crossed.")
    box: Box | None = Field(description="The target's border box in the top page's CSS pixels; None: not rendered.")
    click: tuple[float, float] | None = Field(
        description="The centre of the box's part inside the viewport (where a person clicks what the screenshot "
        "shows); None when no part is inside."
    )
    visible_text: str = Field(description="The text a person sees that names it; empty for an icon-only control.")
    accessible_role: str = Field(description="Its role as Chromium's accessibility tree computes it.")
    accessible_name: str = Field(description="Its accessible name as Chromium computes it.")
    names: list[NameMatch] = Field(
        description="Every name a person could use for it (its text, labels, value, placeholder, aria-label, "
        "title) and how the ``text`` answer format's first matching strategy finds it with that name; empty "
        "outside the top document."
    )
    role: RoleMatch | None = Field(description="Its own node in the ARIA snapshot; None: none, or only text.")
    aria_ref: str | None = Field(description="Its ref in the AI-mode ARIA snapshot; None when no ref names it.")
    xpath: str = Field(description="browser-use's form of its XPath, within its own document.")
    stagehand_xpath: str = Field(description="Stagehand's form of its XPath, from the top document through "
                                 "iframes (``//`` for a shadow root).")
    frame_depth: int = Field(ge=0, description="How many iframes it is inside.")

    @property
    def in_top_document(self) -> bool:
        """Outside every iframe and closed shadow root."""
        return all(b == "shadow_open" for b in self.boundaries)


class ActTask(_Model):
    """An element to click or type into, identified by a chain of CSS selectors."""

    id: str = Field(min_length=1)
    page: str = Field(description="The id of the page the element is on.")
    kind: Literal["ACT"]
    instruction: str = Field(min_length=1)
    target: list[Annotated[str, Field(min_length=1)]] = Field(
        min_length=1,
        description="One selector per boundary hop: the first runs in the top document; each next one runs in "
        "the document of the iframe, or the shadow root (closed ones too) of the host, the previous one matched.",
    )
    location: Location | None = Field(default=None, description="Where the target is; measured, never hand-written.")
    measured: TargetRecord | None = Field(default=None, description="The target as measured; never hand-written.")


Task = Annotated[ReadTask | ActTask, Field(discriminator="kind")]


def _check_pages_and_tasks(pages: Sequence[StudyPage], tasks: Sequence[ReadTask | ActTask]) -> None:
    """Raise ValueError on a duplicate page or task id, or a task naming a page that is not listed."""
    page_ids = [p.id for p in pages]
    task_ids = [t.id for t in tasks]
    for ids, what in ((page_ids, "page"), (task_ids, "task")):
        duplicates = sorted({i for i in ids if ids.count(i) > 1})
        if duplicates:
            raise ValueError(f"duplicate {what} id {duplicates[0]!r}")
    for task in tasks:
        if task.page not in page_ids:
            raise ValueError(f"task {task.id!r} names page {task.page!r}, which is not in 'pages'")


class PagesAndTasks(_Model):
    """Pages and the tasks on them, without a protocol: the file the study's fixture sites ship with."""

    pages: list[StudyPage] = Field(min_length=1)
    tasks: list[Task] = Field(min_length=1)

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        _check_pages_and_tasks(self.pages, self.tasks)
        return self

    def page_tasks(self, page_id: str) -> list[ReadTask | ActTask]:
        """The tasks on one page, in file order."""
        return [t for t in self.tasks if t.page == page_id]


# ---------------------------------------------------------------------------------------------- protocol


class PromptTemplate(_Model):
    """The one prompt every representation gets; only the page, the question and the answer format change."""

    system: str = Field(min_length=1, description="The system prompt, sent as is.")
    user: str = Field(
        description="The user message. '{page}' is where the page goes (text verbatim; a screenshot as an image "
        "block between the text before and after it), '{question}' the READ question or ACT instruction, "
        "'{answer_format}' the instruction of the task's answer format. Each occurs exactly once."
    )

    @model_validator(mode="after")
    def _slots(self) -> Self:
        for slot in USER_SLOTS:
            if self.user.count(slot) != 1:
                raise ValueError(f"the user template must hold {slot} exactly once, not {self.user.count(slot)} times")
            if slot in self.system:
                raise ValueError(f"the system prompt has no slots, but holds {slot}")
        return self


class AnswerField(_Model):
    """One key of the JSON object a model answers with."""

    name: str = Field(min_length=1)
    type: FieldType = Field(description="JSON type: string, integer or number.")
    required: bool = Field(default=True, description="False: the key may be left out (or null).")
    minimum: float | None = Field(default=None, description="Smallest allowed value of a number or integer.")
    description: str = Field(min_length=1, description="What the value means.")


class AnswerFormat(_Model):
    """What a model must answer: the instruction put in the prompt and the JSON object's keys."""

    instruction: str = Field(min_length=1, description="Text for the '{answer_format}' slot.")
    fields: list[AnswerField] = Field(min_length=1)

    def shape(self) -> tuple[tuple[str, FieldType, bool], ...]:
        """(name, type, required) of every field, in order."""
        return tuple((f.name, f.type, f.required) for f in self.fields)


def _shape_text(shape: tuple[tuple[str, FieldType, bool], ...]) -> str:
    return "{" + ", ".join(f"{name}: {kind}{'' if required else '?'}" for name, kind, required in shape) + "}"


class AnswerFormats(_Model):
    """One answer format for every READ task, and one per representation for ACT tasks."""

    read: AnswerFormat
    act: dict[Representation, AnswerFormat]

    @model_validator(mode="after")
    def _shapes(self) -> Self:
        if self.read.shape() != READ_ANSWER_SHAPE:
            raise ValueError(f"the READ answer must be {_shape_text(READ_ANSWER_SHAPE)}")
        for representation, answer in self.act.items():
            expected = ACT_ANSWER_SHAPES[representation]
            if answer.shape() != expected:
                raise ValueError(f"the {representation} ACT answer must be {_shape_text(expected)}")
        return self


class NormalizationStep(_Model):
    """One step of READ normalisation, named as the scorer implements it."""

    name: NormalizationStepName
    description: str = Field(min_length=1)


class ScoringRules(_Model):
    """How answers are scored, in words: registered with the protocol, implemented by the scorer."""

    read: str = Field(min_length=1, description="When a READ answer is correct.")
    act: str = Field(min_length=1, description="How an ACT answer is resolved to an element and compared.")
    representability: str = Field(min_length=1, description="When a task counts as representable.")
    unparseable: str = Field(min_length=1, description="What happens to an answer that is not the format.")
    errors: str = Field(min_length=1, description="What happens to a call that failed.")


class Protocol(_Model):
    """Everything a study run does the same way for every call, fixed before any model answers."""

    prompt: PromptTemplate
    answer_formats: AnswerFormats
    read_normalization: list[NormalizationStep] = Field(
        description="The READ normalisation steps, in the order applied; must be the scorer's own."
    )
    scoring: ScoringRules
    model: ModelSettings = Field(description="Provider, model, max_tokens, thinking and timeout of every call.")
    representations: list[Representation] = Field(min_length=1, description="The representations compared.")
    concurrency: int = Field(ge=1, description="Model calls in flight at once.")
    repeats: int = Field(ge=1, description="How many times every (page, task, representation) is called.")
    seed: int = Field(description="Seed of the page order of every repeat and the call order within a page.")

    @field_validator("read_normalization")
    @classmethod
    def _scorer_steps(cls, steps: list[NormalizationStep]) -> list[NormalizationStep]:
        if tuple(s.name for s in steps) != READ_NORMALIZATION:
            raise ValueError(f"the steps must be the scorer's, in its order: {', '.join(READ_NORMALIZATION)}")
        return steps

    @model_validator(mode="after")
    def _formats_cover_representations(self) -> Self:
        if len(set(self.representations)) != len(self.representations):
            raise ValueError("representations are listed twice")
        missing = [r for r in self.representations if r not in self.answer_formats.act]
        if missing:
            raise ValueError(f"answer_formats.act has no format for {missing[0]}")
        return self

    def answer_format(self, task: ReadTask | ActTask, representation: Representation) -> AnswerFormat:
        """The format ``task`` is answered in when shown as ``representation``."""
        return self.answer_formats.read if task.kind == "READ" else self.answer_formats.act[representation]


class Study(PagesAndTasks):
    """The representation study: its protocol, the snapshot its pages are in, the pages and the tasks."""

    protocol: Protocol
    snapshot: str = Field(min_length=1, description="Name of the snapshot (in 'snapshots') the pages are in.")

    def task(self, task_id: str) -> ReadTask | ActTask:
        """The task ``task_id``; KeyError if there is none."""
        for task in self.tasks:
            if task.id == task_id:
                return task
        raise KeyError(task_id)


# ---------------------------------------------------------------------------------------------- replay checks


class _ReplayCheck(_Model):
    """What every replay check names: itself, its snapshot, and where it starts."""

    id: str = Field(min_length=1)
    snapshot: str = Field(description="Name of the snapshot (in 'snapshots').")
    start_url: str = Field(min_length=1, description="Where the check starts.")


class ReplayReadCheck(_ReplayCheck):
    """A fact the replayed snapshot must show, and the URL it comes from."""

    kind: Literal["READ"]
    question: str = Field(min_length=1)
    answer: str = Field(min_length=1)
    evidence_url: str = Field(min_length=1, description="The archived URL whose response holds the answer.")


class ReplayActCheck(_ReplayCheck):
    """An interaction the replayed snapshot must support, and what it must end on."""

    kind: Literal["ACT"]
    goal: str = Field(min_length=1)
    expected_url: str = Field(min_length=1, description="The URL the interaction ends on.")
    expected_text: str = Field(min_length=1, description="Text the final page shows.")


ReplayCheck = Annotated[ReplayReadCheck | ReplayActCheck, Field(discriminator="kind")]


# ---------------------------------------------------------------------------------------------- the file


class TasksFile(_Model):
    """The whole ``tasks.json``: the snapshots, then one section per family of tasks."""

    schema_version: SchemaVersion = Field(description="Version of this schema; this code reads 1.")
    description: str = Field(default="", description="What the file is for, in a sentence or two.")
    snapshots: dict[str, str] = Field(
        min_length=1, description="Snapshot folders by name, relative to the folder of the tasks file."
    )
    study: Study | None = Field(default=None, description="The representation study; None if the file has none.")
    replay_checks: list[ReplayCheck] = Field(default_factory=list, description="End-to-end replay checks.")
    workflows: Workflows | None = Field(default=None, description="The agents' cross-site tasks; None if none.")

    @field_validator("snapshots")
    @classmethod
    def _paths(cls, value: dict[str, str]) -> dict[str, str]:
        for name, path in value.items():
            if not name or not path:
                raise ValueError("a snapshot needs a name and a path")
        return value

    @model_validator(mode="after")
    def _names_resolve(self) -> Self:
        named = [("study", self.study.snapshot)] if self.study else []
        named += [(f"replay check {c.id!r}", c.snapshot) for c in self.replay_checks]
        named += [("workflows", self.workflows.snapshot)] if self.workflows else []
        for who, snapshot in named:
            if snapshot not in self.snapshots:
                raise ValueError(f"{who} names snapshot {snapshot!r}, which is not in 'snapshots'")
        ids = [c.id for c in self.replay_checks]
        duplicates = sorted({i for i in ids if ids.count(i) > 1})
        if duplicates:
            raise ValueError(f"duplicate replay check id {duplicates[0]!r}")
        return self

    def snapshot_path(self, name: str, tasks_path: Path) -> Path:
        """The folder of snapshot ``name``, resolved against the folder of the tasks file at ``tasks_path``."""
        return tasks_path.parent / self.snapshots[name]


def parse_tasks_file(data: bytes | str, where: str | Path) -> TasksFile:
    """Decode and validate the text of a tasks file; any problem is one :class:`InputError` line naming ``where``."""
    try:
        raw: Any = json.loads(data)
    except json.JSONDecodeError as e:
        raise InputError(f"not valid JSON: {e.msg} at line {e.lineno} column {e.colno}", where) from e
    except UnicodeDecodeError as e:
        raise InputError("not valid JSON: not UTF-8 text", where) from e
    try:
        return TasksFile.model_validate(raw)
    except ValidationError as e:
        raise InputError(f"invalid tasks file: {validation_reason(e)}", where) from e
