"""The offline self-test of resolution and scoring: no model, only answers built from ground truth.

For every ACT task and representation, the answer a perfect model would give from what that
representation shows is built from the live page (a unique CSS selector; a text or label the Markdown
shows; the role and name of the target's node in the ARIA snapshot; its selector-map index; the centre
of its visible box). It must score correct exactly when the target is representable. Where the
representation does not carry the target, the perfect answer is the best guess from ground truth (the
target's own selector, name or role), which must then fail. The perfect answer for another ACT task on
the same page must score incorrect. For every READ task and representation, the gold answer must score
correct and another task's answer incorrect.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from capreplay.study.answers.resolve import deciding_strategy, index_of, match_index, png_size, role_locator
from capreplay.study.answers.score import Verdict
from capreplay.study.page.failures import PageFailure, PageFailures
from capreplay.study.page.session import ActTarget, PageSession, page_session, study_browser
from capreplay.study.representations import REPRESENTATIONS, Representation
from capreplay.study.representations.accessibility_tree import parse_node
from capreplay.study.run.tasks import StudyTasks
from capreplay.util.answer_text import normalize_answer
from capreplay.util.tables import format_table

Check = Literal["perfect", "other_target", "gold", "wrong_answer"]


class SelftestCheck(BaseModel):
    """One answer scored, and whether the score is the one expected."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    page: str
    task: str
    kind: Literal["READ", "ACT"]
    representation: str
    check: Check = Field(description="perfect/gold: expected correct exactly when representable (ACT) or always "
                         "(READ); other_target/wrong_answer: expected incorrect.")
    answer: Any = Field(description="The answer scored: an ACT answer object or a READ answer string.")
    verdict: Verdict
    expected_correct: bool

    @property
    def passed(self) -> bool:
        """Whether the answer scored as expected."""
        return self.verdict.correct == self.expected_correct


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
        lines.append(f"FAIL {c.task} {c.representation} {c.check}: expected "
                     f"{'correct' if c.expected_correct else 'incorrect'}, got {c.verdict.reason} ({c.verdict.detail})")
    total = sum(1 for c in report.checks if c.check in ("perfect", "gold"))
    lines.append(f"{total - len({(c.task, c.representation) for c in report.failures})} of {total} "
                 "task x representation pairs pass")
    return "\n".join(lines)


async def perfect_act_answer(session: PageSession, act: ActTarget, representation: Representation) -> dict[str, Any]:
    """The ACT answer a perfect model would give from ``representation`` of this page."""
    target = act.target
    match representation.answer_format:
        case "css_selector":
            return {"selector": target.selector or act.task.target[-1]}
        case "text":
            shown = normalize_answer(representation.searchable(session.views))
            names = [n for n in target.names if normalize_answer(n) and normalize_answer(n) in shown]
            for name in names:
                decided = await deciding_strategy(session.page, name)
                if decided is None:
                    continue
                _, matches, count = decided
                position = await match_index(session.page, matches, target.ref, session.page_target)
                if position is not None:
                    return {"text": name} if count == 1 else {"text": name, "occurrence": position + 1}
            # Nothing the Markdown shows names it: all a model could go on is the text a person sees on it,
            # which an icon-only control does not have.
            return {"text": names[0] if names else target.visible_name}
        case "role_name":
            parsed = parse_node(act.aria_node) if act.aria_node else None
            if parsed is None or parsed[0] == "text":
                return {"role": target.ax_role or "generic", "name": target.ax_name}
            role, name = parsed
            matches = role_locator(session.page, role, name)
            count = await matches.count()
            position = await match_index(session.page, matches, target.ref, session.page_target)
            if count > 1 and position is not None:
                return {"role": role, "name": name, "occurrence": position + 1}
            return {"role": role, "name": name}
        case "aria_ref":
            # Where no ref names the target, a perfect model can only guess one that names something else.
            return {"ref": act.aria_ref or "e1"}
        case "index":
            index = index_of(session.views.indexed_dom, target.ref)
            if index is None:  # a perfect model cannot name it: an index that names nothing
                index = max(session.views.indexed_dom.selector_map, default=0) + 1
            return {"index": index}
        case "point":
            if target.box is None:
                return {"x": -1, "y": -1}
            width, height = png_size(session.views.screenshot_png)
            box = target.box.clip(width, height) or target.box
            return {"x": box.x + box.width / 2, "y": box.y + box.height / 2}
    raise AssertionError(f"unhandled answer format {representation.answer_format!r}")


def _next(items: Sequence[str], item: str) -> str | None:
    """The item after ``item``, cyclically; None when there is no other."""
    if len(items) < 2:
        return None
    return items[(items.index(item) + 1) % len(items)]


async def selftest_page(session: PageSession, page_id: str,
                        representations: Sequence[Representation]) -> list[SelftestCheck]:
    """Every check on one page session."""
    checks: list[SelftestCheck] = []
    act_ids, read_ids = list(session.act), list(session.read)
    for representation in representations:
        perfect = {tid: await perfect_act_answer(session, session.act[tid], representation) for tid in act_ids}
        for tid in act_ids:
            verdict = await session.score_act(tid, representation, perfect[tid])
            checks.append(SelftestCheck(page=page_id, task=tid, kind="ACT", representation=representation.name,
                                        check="perfect", answer=perfect[tid], verdict=verdict,
                                        expected_correct=verdict.representable is True))
            other = _next(act_ids, tid)
            if other is not None:
                verdict = await session.score_act(tid, representation, perfect[other])
                checks.append(SelftestCheck(page=page_id, task=tid, kind="ACT", representation=representation.name,
                                            check="other_target", answer=perfect[other], verdict=verdict,
                                            expected_correct=False))
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


async def run_selftest(snapshot: Path, tasks: StudyTasks, tasks_path: Path | str,
                       representations: Sequence[Representation] | None = None) -> SelftestReport:
    """Serve ``snapshot``, open one page session per page of ``tasks``, and run every check."""
    chosen = list(representations or REPRESENTATIONS.values())
    checks: list[SelftestCheck] = []
    failed = PageFailures()
    async with study_browser(snapshot) as (context, adapter):
        for page in tasks.pages:
            page_tasks = tasks.page_tasks(page.id)
            async with failed.guard(page.id, page.url), page_session(context, adapter, page.url, page_tasks) as session:
                checks += await selftest_page(session, page.id, chosen)
    return SelftestReport(snapshot=str(snapshot), tasks=str(tasks_path), checks=checks,
                          page_failures=failed.failures)  # fmt: skip
