"""What the judge decides about one episode, leaf by leaf, with its evidence. Pure models, no I/O."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from capreplay.llm.messages import Usage
from capreplay.models.rubric import LeafKind


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Evidence(_Model):
    """Where a check found (or looked for) what it checked."""

    url: str = Field(description="The URL looked at: the cited page, or the response of it that held the value.")
    record_id: str | None = Field(default=None, description="WARC-Record-ID of the archived response, if any.")
    payload_digest: str | None = Field(default=None, description="Its WARC-Payload-Digest.")
    snippet: str = Field(default="", description="Text around what was found (at most a few hundred characters).")


class LeafVerdict(_Model):
    """One leaf's check on one answer."""

    node: str = Field(description="The leaf's id.")
    kind: LeafKind
    point: str | None = Field(default=None, description="The covered point the leaf verifies.")
    check: str = Field(description="The whitelisted check it ran.")
    critical: bool
    passed: bool
    reason: str = Field(description="Why it passed or failed, in one line.")
    evidence: list[Evidence] = Field(default_factory=list)


class Extraction(_Model):
    """How the answer's free text became fields."""

    method: Literal["json", "model"] = Field(description="json: the answer was already the fields; model: a call.")
    request_sha256: str | None = Field(default=None, description="The response-cache key of the extraction call.")
    model: str | None = None
    cached: bool = False
    usage: Usage | None = None


class EpisodeVerdict(_Model):
    """The judge's verdict on one episode: ``verdicts.jsonl`` holds one per line."""

    episode: str = Field(description="The episode's id in its run.")
    task: str
    agent: str
    repeat: int = Field(ge=0)
    scored: bool = Field(description="False: the answer could not be scored (see ``unscored``); not a failure.")
    unscored: str | None = Field(default=None, description="Why the answer was not scored.")
    fields: dict[str, Any] | None = Field(default=None, description="The answer's fields as the judge read them.")
    extraction: Extraction | None = None
    leaves: list[LeafVerdict] = Field(default_factory=list)
    node_scores: dict[str, float] = Field(default_factory=dict, description="Every node's score, by node id.")
    score: float | None = Field(default=None, description="The root's score in [0, 1]; None when unscored.")
    passed: bool | None = Field(default=None, description="Success: every node scored 1. None when unscored.")
    off_snapshot: bool = Field(default=False, description="The episode requested URLs the snapshot does not hold.")
    judge_s: float = Field(default=0.0, description="Seconds the judge spent on this episode.")
