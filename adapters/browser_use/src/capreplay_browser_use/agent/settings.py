"""What the agent is built from: the model settings of the ``start`` line, the key, and the task's text.

Pure: no browser, no network. Settings left out keep browser-use's own defaults, so an episode with only
``{"model": ...}`` runs browser-use as it ships (vision on, five failures in a row allowed, ten SDK retries).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from browser_use import ChatAnthropic
from pydantic import BaseModel, ConfigDict, Field

from capreplay_browser_use.agent.messages import AgentTask


class SettingsError(Exception):
    """The agent cannot be built from what the harness gave it."""


class AgentModelSettings(BaseModel):
    """``start.model``: capreplay's model settings, plus a few of browser-use's own agent settings."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    provider: Literal["anthropic"] = Field(default="anthropic", description="Only Anthropic's Messages API.")
    model: str = Field(min_length=1, description="Model name as Anthropic spells it.")
    max_tokens: int | None = Field(default=None, gt=0, description="Most output tokens per call.")
    thinking: dict[str, Any] | None = Field(default=None, description="Anthropic thinking configuration, as is.")
    timeout_s: float | None = Field(default=None, gt=0, description="HTTP timeout of one call, seconds.")
    base_url: str | None = Field(default=None, description="Endpoint root; None uses $ANTHROPIC_BASE_URL.")
    temperature: float | None = Field(default=None, ge=0, description="Sampling temperature.")
    max_retries: int | None = Field(default=None, ge=0, description="Retries of one call by the Anthropic SDK.")
    use_vision: bool | Literal["auto"] | None = Field(default=None, description="Screenshots to the model.")
    max_failures: int | None = Field(
        default=None, ge=1, description="Failed steps in a row (model or action errors) before the agent gives up."
    )


def model_settings(raw: Mapping[str, Any] | None) -> AgentModelSettings:
    """The settings of ``start.model``; SettingsError if there are none or they are invalid."""
    if raw is None:
        raise SettingsError("browser-use needs a model: start.model is null")
    try:
        return AgentModelSettings.model_validate(raw)
    except ValueError as e:
        first = str(e).splitlines()
        raise SettingsError(f"invalid start.model: {' '.join(first[:3])}") from e


def chat_model(settings: AgentModelSettings, environ: Mapping[str, str]) -> ChatAnthropic:
    """browser-use's own Anthropic model, with the key from ``$ANTHROPIC_API_KEY``."""
    key = environ.get("ANTHROPIC_API_KEY")
    if not key:
        raise SettingsError("ANTHROPIC_API_KEY is not set: the harness passes the agent's key in its environment")
    options: dict[str, Any] = {
        "max_tokens": settings.max_tokens,
        "thinking": settings.thinking,
        "timeout": settings.timeout_s,
        "base_url": settings.base_url or environ.get("ANTHROPIC_BASE_URL") or None,
        "temperature": settings.temperature,
        "max_retries": settings.max_retries,
    }
    return ChatAnthropic(model=settings.model, api_key=key, **{k: v for k, v in options.items() if v is not None})


def agent_options(settings: AgentModelSettings) -> dict[str, Any]:
    """The browser-use ``Agent`` arguments the settings change (the rest keep browser-use's defaults)."""
    options = {"use_vision": settings.use_vision, "max_failures": settings.max_failures}
    return {k: v for k, v in options.items() if v is not None}


def task_text(task: AgentTask) -> str:
    """The task as browser-use's agent gets it: the user's words, then how the answer must look."""
    lines = [
        task.description,
        "",
        f"The browser's current tab already shows {task.start_url}: start there.",
        "Finish with the done action. Its text must give each of these outputs on a line of its own, as",
        "`name: value (source: URL)`, where URL is the address of the page the value was read on:",
    ]
    lines += [f"- {output.name} ({output.type}): {output.description}" for output in task.outputs]
    return "\n".join(lines)
