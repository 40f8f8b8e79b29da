"""What the self-test's ``selftest.json`` holds, as the viewer reads it (``capreplay study selftest --json`` and the
offline script write it).

The viewer may not import the study, so the file is read through models of its own that keep what the viewer
shows (other keys are passed over), and whether a check passed is decided by the self-test's own rule
(:attr:`capreplay.study.offline.selftest.SelftestCheck.passed`), restated in :meth:`OfflineCheck.passed`.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class _Read(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class OfflineVerdict(_Read):
    """A check's verdict as the scorer gave it."""

    correct: bool
    reason: str | None = None
    detail: str | None = None
    representable: bool | None = None


class OfflineCheck(_Read):
    """One answer the self-test scored, and what it expected."""

    page: str
    task: str
    kind: str
    representation: str
    check: str = Field(description="perfect, no_occurrence, other_target, gold or wrong_answer.")
    answer: Any = None
    verdict: OfflineVerdict
    expected_correct: bool | None
    expected_representable: bool | None = None

    @property
    def passed(self) -> bool:
        """The self-test's rule: the expected representability if one is expected, and the expected score if any."""
        if self.expected_representable is not None and self.verdict.representable != self.expected_representable:
            return False
        return self.expected_correct is None or self.verdict.correct == self.expected_correct


class OfflineSummary(_Read):
    """The self-test's figures for one representation, as its file lists them."""

    representation: str
    act_pairs: int
    act_representable: int
    act_failed: int
    read_pairs: int
    read_present: int
    read_failed: int


class OfflinePageFailure(_Read):
    """A page the self-test could not check."""

    page: str
    url: str = ""
    error: str


class SelftestFile(_Read):
    """``selftest.json``."""

    snapshot: str = ""
    tasks: str = ""
    checks: list[OfflineCheck]
    summary: list[OfflineSummary] = Field(default_factory=list)
    page_failures: list[OfflinePageFailure] = Field(default_factory=list)
    failures: int | None = Field(default=None, description="How many checks the writer counted as failed.")
