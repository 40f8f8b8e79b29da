"""Agent runs: the planned episodes and what each one did. Pure models, no I/O.

An agent run lives in ``results/runs/<run_id>/``: ``run.json`` (an :class:`AgentRunInfo`, written once),
``episodes.jsonl`` (one :class:`EpisodeRecord` per finished episode, appended durably) and one folder per
episode with the screenshot of every step.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, model_validator


class AgentUsage(BaseModel):
    """Model usage of a whole episode (an agent's final answer carries it too)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    input_tokens: int = Field(default=0, ge=0)
    output_tokens: int = Field(default=0, ge=0)
    calls: int = Field(default=0, ge=0)
    model: str | None = None


RequestResult = Literal["hit", "fuzzy", "miss", "blocked"]
EpisodeStatus = Literal["answered", "failed", "timeout", "step_limit"]
Settling = Literal["network-idle", "server-quiet"]
"""How the harness lets a page settle before it loads the start page's record and each step's screenshot.
``network-idle``: Playwright's ``networkidle`` (500 ms without a request, in the browser) for the start page, and
the screenshot as soon as the agent reports a step (the agent waits as it likes). ``server-quiet``: the replay
server says when this browser has had no request in flight for ``STEP_QUIET_MS`` (see
:mod:`capreplay.replay.quiet`), then running animations end and two frames pass with still none (else the wait
begins again), then the screenshot."""
SETTLING_VARIABLE = "CAPREPLAY_SETTLING"
"""Every agent's environment says how the harness settles pages (a :data:`Settling`): with ``server-quiet`` the
harness waits for the server's quiet signal before it records a step, and the agent's next step begins only
after that (the gold agent then leaves its own waits to the harness)."""
DEFAULT_SETTLING: Settling = "server-quiet"
"""How new runs settle. Runs planned before settling was recorded settled by ``network-idle``."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class EpisodeKey(_Model):
    """One planned episode: an agent on a task, in one repeat."""

    repeat: int = Field(ge=0)
    task: str
    agent: str

    def id(self) -> str:
        """``<agent>/<repeat>/<task>``: the episode's name in records, verdicts and folder names."""
        return f"{self.agent}/{self.repeat}/{self.task}"


class StepRecord(_Model):
    """One step the agent reported."""

    n: int = Field(ge=1)
    action: str
    args: dict[str, Any] = Field(default_factory=dict)
    url: str = Field(description="The URL the agent's tab showed after the step.")
    thought: str | None = None
    screenshot: str | None = Field(default=None, description="The screenshot after the step, relative to the run.")
    at_s: float = Field(description="Seconds since the episode started.")


class RequestRecord(_Model):
    """One request the browser made during the episode, and how the replay answered it."""

    method: str
    url: str
    result: RequestResult = Field(description="hit, fuzzy (by a matching rule), miss (not in snapshot), blocked.")
    rule: str | None = None
    status: int | None = None
    nearest: str | None = Field(
        default=None, description="For a miss, the archived URL most like it; for a fuzzy match, the URL served."
    )
    step: int | None = Field(
        default=None,
        ge=0,
        description="When it was made: 0 while the start page loaded, n between step n-1's screenshot and step n's, "
        "one past the last step after it; None in records made before requests were told apart by step.",
    )


class EpisodeRecord(_Model):
    """One line of ``episodes.jsonl``: everything an episode did."""

    key: EpisodeKey
    started_at: AwareDatetime = Field(description="When the harness began loading the start page (see launch_s).")
    duration_s: float = Field(
        description="Seconds from started_at to the episode's end (in records without launch_s, from before the "
        "browser's launch)."
    )
    status: EpisodeStatus
    error: str | None = Field(default=None, description="Why the episode failed, in one line.")
    answer: str | None = Field(default=None, description="The agent's final answer, as free text.")
    usage: AgentUsage = Field(default_factory=AgentUsage)
    steps: list[StepRecord] = Field(default_factory=list)
    requests: list[RequestRecord] = Field(default_factory=list)
    start_url: str
    final_url: str | None = None
    launch_s: float | None = Field(
        default=None,
        description="Seconds the episode's fresh browser and agent process took to get ready (launched together, "
        "often while the episode before ran), before started_at; None in records made before it was kept.",
    )

    @property
    def off_snapshot(self) -> list[RequestRecord]:
        """Requests the snapshot could not answer (missed or blocked): the episode left the captured paths."""
        return [r for r in self.requests if r.result in ("miss", "blocked")]


SHARD_RULE = "episode k of the plan (counted from 0, in plan order) belongs to shard k mod count"
"""How a plan is cut into shards: round robin over the seeded plan order, so every shard gets a share of every
repeat and the shards' sizes differ by at most one."""


class ShardInfo(_Model):
    """The part of a whole run that one shard runs (``capreplay run --shard INDEX/COUNT``)."""

    index: int = Field(ge=0, description="This shard's number, from 0 to count - 1.")
    count: int = Field(ge=1, description="How many shards the whole run is cut into.")
    run_id: str = Field(description="The whole run's id: the run the shards merge into by default.")
    rule: str = Field(default=SHARD_RULE, description="Which planned episodes belong to which shard.")
    plan_sha256: str = Field(description="sha256 of the whole plan's canonical JSON (the list of episode keys).")
    plan: list[EpisodeKey] = Field(description="The whole run's plan, every shard's episodes, in plan order.")

    @model_validator(mode="after")
    def _index_below_count(self) -> ShardInfo:
        if self.index >= self.count:
            raise ValueError(f"shard index {self.index} is not below the count {self.count}")
        return self


class AgentRunInfo(_Model):
    """``run.json`` of an agent run: what it was planned with."""

    run_id: str
    kind: Literal["agents"] = "agents"
    registration: str | None
    created_at: AwareDatetime
    tasks_file: str
    snapshot: str
    snapshot_id: str = Field(description="The id of the snapshot the episodes ran on; the judge checks it.")
    agents: list[str]
    agent_models: dict[str, dict[str, Any] | None] = Field(description="Each agent's model settings (or None).")
    seed: int
    repeats: int
    step_limit: int
    episode_timeout_s: float
    planned: list[EpisodeKey] = Field(description="The episodes this folder runs, in order (a shard's: its slice).")
    shard: ShardInfo | None = Field(
        default=None, description="For one shard of a run cut into several: which one, and the whole plan."
    )
    settling: Settling = Field(
        default="network-idle",
        description="How the harness settled pages (see Settling); a run.json without it settled by network-idle, "
        "and a resumed run settles as its run.json says.",
    )
