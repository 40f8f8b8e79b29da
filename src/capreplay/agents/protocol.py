"""The agent protocol: JSON lines between the harness and an agent subprocess. Pure models, no I/O.

The harness launches the offline Chromium (with a CDP port) and opens the task's start URL in a tab; then it
starts the agent as a subprocess and speaks to it one JSON object per line, UTF-8, ``\\n``-terminated:

harness -> agent (the agent's stdin)
    ``start``  once, first: the task as the agent may see it (never the rubric, the gold path or the
               expected values), the CDP endpoint to attach to, the start URL, the step limit, and the
               agent's model settings (or null for agents that call no model).
    ``ack``    after each ``step``: the harness has recorded it (and taken the step's screenshot); the
               agent waits for it before acting again, so the screenshot shows the page the step left.
    ``stop``   the episode is over (time or step limit): the agent must answer now or exit.

agent -> harness (the agent's stdout; anything else goes to stderr)
    ``step``   one action taken: its name and arguments, the URL the tab shows after it, an optional
               thought. Numbered from 1.
    ``answer`` once, last: the final answer as free text, the model usage of the whole episode.
    ``error``  the agent cannot go on (and then exits); the episode is recorded as failed with this message.

The agent gets the key for its own model in its environment and no other; the judge's key never reaches
it. An agent may attach to the browser only through ``cdp_url``; the browser can reach nothing but the
snapshot.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from capreplay.models.episode import AgentUsage as AgentUsage  # the answer's field, part of the protocol's JSON

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
    model: dict[str, Any] | None = Field(
        description="The agent's model settings (provider, model, max_tokens, ...), or null."
    )


class Ack(_Message):
    """Harness -> agent: step ``n`` is recorded."""

    type: Literal["ack"] = "ack"
    n: int = Field(ge=1)


class Stop(_Message):
    """Harness -> agent: answer now or exit."""

    type: Literal["stop"] = "stop"
    reason: str


class StepAction(_Message):
    """One action, as the agent names it (``click``, ``fill``, ``navigate``, ``scroll``, ...)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1)
    args: dict[str, Any] = Field(default_factory=dict)


class Step(_Message):
    """Agent -> harness: one action taken."""

    type: Literal["step"] = "step"
    n: int = Field(ge=1)
    action: StepAction
    url: str = Field(description="The URL the agent's tab shows after the action.")
    thought: str | None = None


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
FromAgent = Annotated[Step | Answer | AgentFailed, Field(discriminator="type")]

TO_AGENT: TypeAdapter[Start | Ack | Stop] = TypeAdapter(ToAgent)
FROM_AGENT: TypeAdapter[Step | Answer | AgentFailed] = TypeAdapter(FromAgent)


def encode(message: _Message) -> bytes:
    """One protocol line."""
    return message.model_dump_json().encode("utf-8") + b"\n"
