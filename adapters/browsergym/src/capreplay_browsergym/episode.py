"""One BrowserGym episode of a capreplay task, recorded as ``capreplay run`` records an episode, and judged.

The environment opens an :class:`Episode` at every ``reset`` (with ports of the episode's own on the replay server)
and hands it to the task; the environment adds a step after every action, the browser reports the requests it could
not make, and :meth:`Episode.finish` takes the episode's requests out of the server's log, builds the
:class:`~capreplay.models.episode.EpisodeRecord`, judges it on the same snapshot and, when the user named a results
folder, appends the record and the verdict to ``episodes.jsonl`` and ``verdicts.jsonl`` there.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from capreplay.agents.harness import BLOCKED_ERRORS
from capreplay.judge.verdict import EpisodeVerdict
from capreplay.models.episode import EpisodeKey, EpisodeRecord, EpisodeStatus, RequestRecord, StepRecord
from capreplay.models.workflow import WorkflowTask
from capreplay.replay.server import ServeInfo
from capreplay.runs.episode_log import EpisodeLog
from capreplay.runs.log import LineFile

from capreplay_browsergym.records import action_name
from capreplay_browsergym.service import ReplayService

AGENT = "browsergym"
"""The agent's name in episode keys (``browsergym/<repeat>/<task>``)."""
VERDICTS_FILE = "verdicts.jsonl"


class Results:
    """A results folder: ``episodes.jsonl`` (as ``capreplay run`` writes it) and ``verdicts.jsonl``, appended."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.episodes = EpisodeLog(folder)
        self.verdicts = LineFile(folder / VERDICTS_FILE)

    def next_repeat(self, task: str) -> int:
        """How many episodes of ``task`` the folder holds: the next one's repeat number."""
        return sum(1 for r in self.episodes.records if r.key.task == task and r.key.agent == AGENT)

    def write(self, record: EpisodeRecord, verdict: EpisodeVerdict) -> None:
        """Append one episode and its verdict, each durably."""
        self.episodes.append(record)
        self.verdicts.write_line(verdict.model_dump_json().encode("utf-8"), "a verdict")

    def close(self) -> None:
        """Close both files."""
        self.episodes.close()
        self.verdicts.close()


@dataclass
class Episode:
    """What one episode did so far, and its record and verdict once it is over."""

    task: WorkflowTask
    service: ReplayService
    serve: ServeInfo
    """The episode's own ports on the replay server, and the Chromium arguments that use them."""
    key: EpisodeKey
    hosts: frozenset[str] = frozenset()
    """Every host the snapshot's resolver rules map; the browser refuses every other one (see the task's setup)."""
    results: Results | None = None
    started_at: datetime = field(default_factory=lambda: datetime.now(UTC))
    clock: float = field(default_factory=time.monotonic)
    steps: list[StepRecord] = field(default_factory=list)
    blocked: list[RequestRecord] = field(default_factory=list)
    record: EpisodeRecord | None = None
    verdict: EpisodeVerdict | None = None

    def on_request_failed(self, method: str, url: str, failure: str | None) -> None:
        """A request the browser could not make: one to a host outside the snapshot is recorded as blocked."""
        if any(err in (failure or "") for err in BLOCKED_ERRORS):
            self.blocked.append(RequestRecord(method=method, url=url, result="blocked"))

    def on_refused(self, method: str, url: str) -> None:
        """A request to a host outside the snapshot, refused before the browser resolved its name."""
        self.blocked.append(RequestRecord(method=method, url=url, result="blocked"))

    def add_step(self, action: str, url: str, error: str) -> None:
        """One action the agent sent, and the URL its tab showed after it."""
        args: dict[str, Any] = {"action": action}
        if error:
            args["error"] = error
        self.steps.append(
            StepRecord(
                n=len(self.steps) + 1,
                action=action_name(action),
                args=args,
                url=url,
                at_s=round(time.monotonic() - self.clock, 3),
            )
        )

    @property
    def finished(self) -> bool:
        """Whether :meth:`finish` has run."""
        return self.record is not None

    def finish(
        self, status: EpisodeStatus, answer: str | None, error: str | None, final_url: str | None
    ) -> tuple[EpisodeRecord, EpisodeVerdict]:
        """End the episode: its requests taken, its record built, judged, and written to the results folder."""
        if self.record is not None and self.verdict is not None:
            return self.record, self.verdict
        requests = self.service.take_requests(self.serve) + self.blocked
        record = EpisodeRecord(
            key=self.key,
            started_at=self.started_at,
            duration_s=round(time.monotonic() - self.clock, 3),
            status=status,
            error=error,
            answer=answer,
            steps=self.steps,
            requests=requests,
            start_url=self.task.start_url,
            final_url=final_url,
        )
        verdict = self.service.judge(record, self.task)
        self.record, self.verdict = record, verdict
        if self.results is not None:
            self.results.write(record, verdict)
        return record, verdict

    def task_info(self) -> dict[str, Any]:
        """What ``validate`` reports once the episode is over: the verdict, the requests and the episode's name."""
        assert self.record is not None and self.verdict is not None
        return {
            "episode": self.key.id(),
            "verdict": self.verdict.model_dump(mode="json"),
            "requests": [r.model_dump(mode="json") for r in self.record.requests],
            "off_snapshot": [r.model_dump(mode="json") for r in self.record.off_snapshot],
        }
