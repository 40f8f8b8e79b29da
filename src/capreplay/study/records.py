"""A study run's records: its cells, the record of each model call, and ``run.json``. Data only."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field

from capreplay.errors import ModelErrorKind
from capreplay.llm.messages import Usage
from capreplay.models.geometry import Box, Layout
from capreplay.models.task import Location, Representation, Study


class Cell(BaseModel):
    """One model call of a run."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    repeat: int = Field(ge=0, description="Which repeat, from 0.")
    page: str = Field(description="The page id.")
    task: str = Field(description="The task id.")
    representation: Representation

    def key(self) -> str:
        """A readable unique name: ``<repeat>/<page>/<task>/<representation>``."""
        return f"{self.repeat}/{self.page}/{self.task}/{self.representation}"


class ActGeometry(BaseModel):
    """Where an ACT call's target is and where its answer landed, in the layout of the page session's screenshot.

    Boxes and points are in CSS pixels of the top page scrolled as ``layout`` says (a screenshot pixel is
    ``(x - scroll_x) * device_pixel_ratio``), so they can be drawn on the screenshot the model was shown.
    """

    model_config = ConfigDict(extra="forbid")

    layout: Layout = Field(description="The screenshot's layout, which the target and the answer were resolved in.")
    target_box: Box | None = Field(description="The target's border box, as the scorer compared with; None: not "
                                   "rendered.")
    point: tuple[float, float] | None = Field(default=None, description="A screenshot answer's click point.")
    resolved_box: Box | None = Field(
        default=None, description="The border box of the element the answer resolved to; None when it resolved to "
        "none, to a point, to an element that is not rendered, or to one whose box the page session cannot place "
        "(an iframe inside an out-of-process iframe, or a Stagehand XPath that crosses a frame or shadow root)."
    )


class CallVerdict(BaseModel):
    """How the scorer judged a call; absent until the run is scored."""

    model_config = ConfigDict(extra="forbid")

    correct: bool = Field(description="Whether the answer scored correct.")
    reason: str | None = Field(
        default=None, description="Why not correct: wrong, not representable, unparseable, error, ..."
    )
    detail: str | None = Field(default=None, description="The underlying cause, for audit.")
    representable: bool | None = Field(
        default=None, description="Whether the task was representable (None: not decided)."
    )
    screenshot: str | None = Field(
        default=None, description="The page session's screenshot (what the screenshot representation shows), as a "
        "path relative to the run folder; None in runs recorded before screenshots were kept."
    )
    geometry: ActGeometry | None = Field(
        default=None, description="ACT calls: the target's box and where the answer landed; None for READ calls and "
        "in runs recorded before it was kept."
    )


class RunRecord(BaseModel):
    """One model call of a run, as one line of ``calls.jsonl``."""

    model_config = ConfigDict(extra="forbid")

    cell: Cell
    request_sha256: str = Field(description="The response-cache key of the request (settings and whole request).")
    started_at: AwareDatetime = Field(description="When the call was sent.")
    latency_s: float = Field(description="Seconds the call took (of the original call if it was answered from cache).")
    answer_text: str | None = Field(default=None, description="The model's reply as sent; None if the call failed.")
    answer: dict[str, Any] | None = Field(default=None, description="The parsed answer; None if unparseable or failed.")
    unparseable: str | None = Field(
        default=None, description="Why the reply holds no answer of the format, if it does not."
    )
    usage: Usage | None = Field(default=None, description="Tokens billed, as the provider reported them.")
    stop_reason: str | None = None
    model: str | None = Field(default=None, description="The model that answered, as the response names it.")
    request_id: str | None = Field(default=None, description="The provider's id of the request.")
    cached: bool = Field(default=False, description="Answered from the response cache.")
    error_kind: ModelErrorKind | None = Field(default=None, description="Why the call failed; None if it did not.")
    error: str | None = Field(default=None, description="The failure in one line.")
    verdict: CallVerdict | None = Field(default=None, description="Filled in by the scorer.")


class RunInfo(BaseModel):
    """``run.json``: what a run was planned with, written once when it starts."""

    model_config = ConfigDict(extra="forbid")

    run_id: str
    registration: str | None = Field(description="The registration the run was checked against.")
    created_at: AwareDatetime
    seed: int
    repeats: int
    representations: list[Representation]
    model_settings: dict[str, Any] = Field(description="The model settings of every call (endpoint left out).")
    planned: list[Cell] = Field(description="Every cell, in the order the run calls them.")


class CallTokens(BaseModel):
    """What the page representation added to one call's prompt."""

    model_config = ConfigDict(extra="forbid")

    cell: Cell
    method: Literal["o200k_base", "image_rule"] = Field(
        description="How ``offline`` was counted: o200k_base text tokens, or Anthropic's image rule."
    )
    offline: int = Field(ge=0, description="Tokens the representation added, counted offline.")
    o200k_full: int = Field(ge=0, description="o200k_base tokens of the full prompt's texts.")
    o200k_empty: int = Field(ge=0, description="o200k_base tokens of the empty-slot prompt's texts.")
    api_count: int | None = Field(
        default=None, description="The provider's count of the full prompt minus that of the empty-slot prompt."
    )
    api_empty: int | None = Field(default=None, description="The provider's count of the empty-slot prompt.")
    api_usage: int | None = Field(
        default=None, description="Input tokens billed for the call minus the provider's count of the empty prompt."
    )
    api_error: str | None = Field(default=None, description="Why the provider's count is missing, if it failed.")


class TaskInfo(BaseModel):
    """What the report needs to know about a task."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    page: str
    kind: str = Field(description="READ or ACT.")
    location: Location | None


class TaskIndex(BaseModel):
    """``task_index.json``: the run's tasks, so a run folder can be reported on its own."""

    model_config = ConfigDict(extra="forbid")

    tasks: list[TaskInfo]


def task_index(study: Study) -> TaskIndex:
    """The index of a study's tasks."""
    return TaskIndex(tasks=[TaskInfo(id=t.id, page=t.page, kind=t.kind, location=t.location) for t in study.tasks])


class PageFailureRecord(BaseModel):
    """A page session of a run that did not load or broke: its cells stay unrecorded, and a rerun retries them."""

    model_config = ConfigDict(extra="forbid")

    repeat: int = Field(ge=0)
    page: str = Field(description="The page id.")
    cells: list[Cell] = Field(description="The session's cells that were not recorded.")
    error: str = Field(description="What went wrong, in one line.")
    at: AwareDatetime = Field(description="When the session failed.")
