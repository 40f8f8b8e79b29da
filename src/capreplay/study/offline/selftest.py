"""The offline self-test of resolution and scoring: no model, only answers built from measured records.

For every ACT task and representation, the answer a perfect model would give from what that representation
shows is built from the task's measured record (:mod:`capreplay.study.offline.expected`), written when the
task was measured, in a page load of its own and through another code path than the scorer's. What it must
score comes from the same record: correct exactly when the record says the representation carries the
target, and the verdict's representability must agree. Where the name it uses matches several elements, the
answer without its ``occurrence`` must not score; the perfect answer for another ACT task on the same page
must score incorrect. For every READ task and representation, the gold answer must score correct and
another task's answer incorrect.

A page whose screenshot is laid out otherwise than its tasks were measured stops with both layouts named.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from capreplay.errors import BrowserError
from capreplay.study.answers.score import Verdict
from capreplay.study.offline.expected import expected_act
from capreplay.study.page.failures import PageFailure
from capreplay.study.page.session import PageSession
from capreplay.study.representations import Representation
from capreplay.util.tables import format_table

Check = Literal["perfect", "no_occurrence", "other_target", "gold", "wrong_answer"]


class SelftestCheck(BaseModel):
    """One answer scored, and whether the score is the one expected."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    page: str
    task: str
    kind: Literal["READ", "ACT"]
    representation: str
    check: Check = Field(description="perfect: expected correct exactly when the measured record says the "
                         "representation carries the target (a guess otherwise, checked for its representability "
                         "only); gold: expected correct; no_occurrence, other_target, "
                         "wrong_answer: expected incorrect.")
    answer: Any = Field(description="The answer scored: an ACT answer object or a READ answer string.")
    verdict: Verdict
    expected_correct: bool | None = Field(description="None: a guess at a target the representation does not "
                                          "carry, which may score either way.")
    expected_representable: bool | None = Field(
        default=None, description="perfect: what the verdict's representability must be (from the record)."
    )

    @property
    def passed(self) -> bool:
        """Whether the answer scored as expected (and, for a perfect answer, with the expected representability)."""
        if self.expected_representable is not None and self.verdict.representable != self.expected_representable:
            return False
        return self.expected_correct is None or self.verdict.correct == self.expected_correct


class RepresentationSummary(BaseModel):
    """The self-test's figures for one representation."""

    representation: str
    act_pairs: int = Field(description="ACT tasks checked.")
    act_representable: int = Field(description="ACT targets the representation carries.")
    act_failed: int = Field(description="ACT tasks with any check that did not score as expected.")
    read_pairs: int
    read_present: int = Field(description="READ answers present in the representation (audit only).")
    read_failed: int


class SelftestReport(BaseModel):
    """Every check of a self-test run, and the pages that could not be checked."""

    snapshot: str
    tasks: str
    checks: list[SelftestCheck]
    page_failures: list[PageFailure] = Field(default_factory=list, description="Pages whose session failed.")

    @property
    def failures(self) -> list[SelftestCheck]:
        """The checks that did not score as expected."""
        return [c for c in self.checks if not c.passed]

    def summary(self) -> list[RepresentationSummary]:
        """Per representation, in registry order: pairs, representable pairs and failed pairs."""
        rows = []
        for name in dict.fromkeys(c.representation for c in self.checks):
            mine = [c for c in self.checks if c.representation == name]
            rows.append(RepresentationSummary(
                representation=name,
                act_pairs=_count(mine, "ACT", lambda c: c.check == "perfect"),
                act_representable=_count(mine, "ACT",
                                         lambda c: c.check == "perfect" and c.verdict.representable is True),
                act_failed=len({c.task for c in mine if c.kind == "ACT" and not c.passed}),
                read_pairs=_count(mine, "READ", lambda c: c.check == "gold"),
                read_present=_count(mine, "READ", lambda c: c.check == "gold" and c.verdict.representable is True),
                read_failed=len({c.task for c in mine if c.kind == "READ" and not c.passed}),
            ))  # fmt: skip
        return rows


def _count(checks: Sequence[SelftestCheck], kind: str, keep: Callable[[SelftestCheck], bool]) -> int:
    return sum(1 for c in checks if c.kind == kind and keep(c))


def selftest_table(report: SelftestReport) -> str:
    """The summary as a plain-text table, with a line per failed check."""
    header = ("representation", "ACT", "representable", "failed", "READ", "present", "failed")
    rows = [header] + [
        (s.representation, str(s.act_pairs), str(s.act_representable), str(s.act_failed), str(s.read_pairs),
         str(s.read_present), str(s.read_failed))
        for s in report.summary()
    ]  # fmt: skip
    lines = [format_table(rows)]
    for c in report.failures:
        representable = "" if c.expected_representable is None else (
            f" ({'' if c.expected_representable else 'not '}representable)")
        outcome = {True: "correct", False: "incorrect", None: "either"}[c.expected_correct]
        lines.append(f"FAIL {c.task} {c.representation} {c.check}: expected {outcome}{representable}, "
                     f"got {c.verdict.reason} (representable {c.verdict.representable}; {c.verdict.detail})")
    total = sum(1 for c in report.checks if c.check in ("perfect", "gold"))
    lines.append(f"{total - len({(c.task, c.representation) for c in report.failures})} of {total} "
                 "task x representation pairs pass")
    return "\n".join(lines)


def _next(items: Sequence[str], item: str) -> str | None:
    """The item after ``item``, cyclically; None when there is no other."""
    if len(items) < 2:
        return None
    return items[(items.index(item) + 1) % len(items)]


def measured_layout(session: PageSession, url: str) -> None:
    """A ``BrowserError`` if any ACT task of the session was measured in another layout than the screenshot's."""
    shown = session.views.layouts["screenshot"]
    for tid, act in session.act.items():
        record = act.task.measured
        if record is not None and record.layout != shown:
            raise BrowserError(f"the screenshot is laid out {shown}, but task {tid} was measured in {record.layout}: "
                               "measure the tasks again on this machine", url)


async def selftest_page(session: PageSession, page_id: str,
                        representations: Sequence[Representation]) -> list[SelftestCheck]:
    """Every check on one page session; each ACT task must carry its measured record."""
    checks: list[SelftestCheck] = []
    act_ids, read_ids = list(session.act), list(session.read)

    def check(tid: str, representation: str, kind: Check, answer: Any, verdict: Verdict, correct: bool | None,
              representable: bool | None = None) -> SelftestCheck:  # fmt: skip
        return SelftestCheck(page=page_id, task=tid, kind="ACT", representation=representation, check=kind,
                             answer=answer, verdict=verdict, expected_correct=correct,
                             expected_representable=representable)  # fmt: skip

    for representation in representations:
        name = representation.name
        expected = {}
        for tid in act_ids:
            task = session.act[tid].task
            assert task.measured is not None  # the pass refuses a task without its record
            expected[tid] = expected_act(task, task.measured, representation, session.views)
        for tid in act_ids:
            want = expected[tid]
            verdict = await session.score_act(tid, representation, want.answer)
            checks.append(check(tid, name, "perfect", want.answer, verdict, want.correct, want.representable))
            if want.without_occurrence is not None:
                verdict = await session.score_act(tid, representation, want.without_occurrence)
                checks.append(check(tid, name, "no_occurrence", want.without_occurrence, verdict, False))
            other = _next(act_ids, tid)
            if other is not None:
                verdict = await session.score_act(tid, representation, expected[other].answer)
                checks.append(check(tid, name, "other_target", expected[other].answer, verdict, False))
        for tid in read_ids:
            gold = session.read[tid].answer
            checks.append(SelftestCheck(page=page_id, task=tid, kind="READ", representation=representation.name,
                                        check="gold", answer=gold, expected_correct=True,
                                        verdict=session.score_read(tid, representation, gold)))
            other = _next(read_ids, tid)
            if other is not None:
                wrong = session.read[other].answer
                checks.append(SelftestCheck(page=page_id, task=tid, kind="READ", representation=representation.name,
                                            check="wrong_answer", answer=wrong, expected_correct=False,
                                            verdict=session.score_read(tid, representation, wrong)))
    return checks
