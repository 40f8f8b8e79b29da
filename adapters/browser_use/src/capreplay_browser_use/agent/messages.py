"""The agent protocol's messages, as this adapter sees them. Pure models, no I/O.

A copy of the shapes in ``capreplay.agents.protocol`` (the adapter runs in its own environment and cannot
import capreplay); the harness validates every line against the original, so a field that drifts here fails
loudly there. harness -> agent: ``start``, ``ack``, ``stop``; agent -> harness: ``step``, ``answer``,
``error``. One JSON object per line, UTF-8.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

PROTOCOL_VERSION = 1


class _Message(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class TaskOutput(_Message):
    """An output the answer must give, as the agent is told it."""

    name: str
    type: str
    description: str


class AgentTask(_Message):
    """What the agent is told about the task."""

    id: str
    description: str = Field(description="The task in the user's words.")
    start_url: str
    outputs: list[TaskOutput] = Field(description="The fields the answer must give (name, type, meaning).")


class Start(_Message):
    """Harness -> agent, first line."""

    type: Literal["start"] = "start"
    protocol: int = PROTOCOL_VERSION
    task: AgentTask
    cdp_url: str = Field(description="http://127.0.0.1:PORT of the harness's browser.")
    start_url: str = Field(description="The URL the harness's tab has loaded.")
    step_limit: int = Field(ge=1)
    model: dict[str, Any] | None = Field(description="The agent's model settings, or null.")


class Ack(_Message):
    """Harness -> agent: step ``n`` is recorded."""

    type: Literal["ack"] = "ack"
    n: int = Field(ge=1)


class Stop(_Message):
    """Harness -> agent: answer now or exit."""

    type: Literal["stop"] = "stop"
    reason: str


class StepAction(_Message):
    """One action, as browser-use names it (``click``, ``input``, ``navigate``, ``scroll``, ``done``, ...)."""

    name: str = Field(min_length=1)
    args: dict[str, Any] = Field(default_factory=dict)


class Step(_Message):
    """Agent -> harness: one action taken."""

    type: Literal["step"] = "step"
    n: int = Field(ge=1)
    action: StepAction
    url: str = Field(description="The URL the agent's tab shows after the action.")
    thought: str | None = None


class AgentUsage(_Message):
    """Model usage of a whole episode."""

    input_tokens: int = Field(default=0, ge=0)
    output_tokens: int = Field(default=0, ge=0)
    calls: int = Field(default=0, ge=0)
    model: str | None = None


class Answer(_Message):
    """Agent -> harness: the final answer."""

    type: Literal["answer"] = "answer"
    text: str
    usage: AgentUsage = Field(default_factory=AgentUsage)


class AgentFailed(_Message):
    """Agent -> harness: the agent cannot go on."""

    type: Literal["error"] = "error"
    message: str


ToAgent = Annotated[Start | Ack | Stop, Field(discriminator="type")]
TO_AGENT: TypeAdapter[Start | Ack | Stop] = TypeAdapter(ToAgent)

FromAgent = Step | Answer | AgentFailed
"""What the agent may send."""
