"""How often two reviewers of the same batch agree on accept and reject, with Cohen's kappa.

Two sheets are comparable when they are of the same batch as it was when they were written: the same batch,
snapshot, tasks file and tasks, each with the same sha256. Only tasks both reviewers decided count; a task
either left undecided is listed apart. Kappa is the project's one implementation
(:func:`capreplay.util.stats.cohen_kappa_2x2`), accept counting as pass.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from capreplay.errors import InputError
from capreplay.tasks.review.parse import KEY_BATCH, KEY_SNAPSHOT_ID, KEY_TASKS_SHA, Sheet, parse_sheet, read_sheet_text
from capreplay.util.stats import cohen_kappa_2x2


class SheetAgreement(BaseModel):
    """Two reviewers' decisions on one batch, side by side."""

    model_config = ConfigDict(frozen=True)

    batch: str
    reviewers: tuple[str, str]
    tasks: int = Field(description="Tasks on the sheets.")
    n: int = Field(description="Tasks both reviewers decided.")
    both_accept: int
    only_first_accepts: int = Field(description="The first reviewer accepted, the second rejected.")
    only_second_accepts: int = Field(description="The second reviewer accepted, the first rejected.")
    both_reject: int
    agreed: int
    agreement: float | None = Field(description="agreed / n; None when n is 0.")
    kappa: float | None = Field(description="Cohen's kappa; None when undefined (see kappa_note).")
    kappa_note: str | None = Field(default=None, description="Why kappa is undefined, when it is.")
    disagreed: list[str] = Field(description="Tasks decided both ways.")
    undecided: list[str] = Field(description="Tasks at least one reviewer left undecided (not counted).")

    def table(self) -> str:
        """A small Markdown table of the two reviewers' decisions and their agreement, for the command line."""
        a, b = self.reviewers
        share = f"{self.agreement:.1%} ({self.agreed}/{self.n})" if self.agreement is not None else "n/a"
        kappa = f"{self.kappa:.4f}" if self.kappa is not None else f"undefined: {self.kappa_note}"
        rows = [
            f"| batch {self.batch} | {b}: accept | {b}: reject |",
            "| --- | --- | --- |",
            f"| {a}: accept | {self.both_accept} | {self.only_first_accepts} |",
            f"| {a}: reject | {self.only_second_accepts} | {self.both_reject} |",
            "",
            "| | |",
            "| --- | --- |",
            f"| tasks decided by both | {self.n} of {self.tasks} |",
            f"| agreement | {share} |",
            f"| Cohen's kappa | {kappa} |",
            f"| disagreed | {', '.join(self.disagreed) or 'none'} |",
            f"| left undecided by one or both | {', '.join(self.undecided) or 'none'} |",
        ]
        return "\n".join(rows) + "\n"


def _same_batch(first: Sheet, second: Sheet, where: str | Path) -> None:
    """An InputError naming the second sheet's line where it stops being of the first sheet's batch."""
    lines = second.header_lines

    def same(key: str, mine: str, theirs: str) -> None:
        if mine != theirs:
            raise InputError(f"line {lines[key]}: {key.removeprefix('- ').rstrip(':')} {theirs!r} is not the other "
                             f"sheet's {mine!r}: the sheets are not of the same batch", where)  # fmt: skip

    same(KEY_BATCH, first.batch, second.batch)
    same(KEY_SNAPSHOT_ID, first.snapshot_id, second.snapshot_id)
    ours = {t.task: t for t in first.tasks}
    for task in second.tasks:
        if task.task not in ours:
            raise InputError(f"line {task.line}: task {task.task!r} is not on the other sheet", where)
        if task.sha256 != ours[task.task].sha256:
            raise InputError(f"line {task.sha_line}: task {task.task!r} has another sha256 than on the other "
                             "sheet: they reviewed different versions of it", where)  # fmt: skip
    reviewed = {t.task for t in second.tasks}
    missing = [t.task for t in first.tasks if t.task not in reviewed]
    if missing:
        raise InputError(f"line {second.last_line}: the sheet has no section for task {missing[0]!r}, which the "
                         "other sheet reviews", where)  # fmt: skip
    # the tasks are the same: a tasks file that still differs differs around them (its header)
    same(KEY_TASKS_SHA, first.tasks_sha256, second.tasks_sha256)


def agreement_of(first: Sheet, second: Sheet, where_second: str | Path) -> SheetAgreement:
    """The agreement of two parsed sheets of the same batch; ``where_second`` names the second in errors."""
    _same_batch(first, second, where_second)
    verdicts = {t.task: t.verdict for t in second.tasks}
    pairs = [(t.task, t.verdict, verdicts[t.task]) for t in first.tasks]
    decided = [(task, a == "accept", b == "accept") for task, a, b in pairs if a is not None and b is not None]
    both_accept = sum(1 for _, a, b in decided if a and b)
    only_first = sum(1 for _, a, b in decided if a and not b)
    only_second = sum(1 for _, a, b in decided if b and not a)
    both_reject = sum(1 for _, a, b in decided if not a and not b)
    n = len(decided)
    kappa = cohen_kappa_2x2(both_accept, only_first, only_second, both_reject)
    note = None
    if n == 0:
        note = "no task was decided on both sheets"
    elif kappa is None:
        note = f"both reviewers {'accepted' if both_accept else 'rejected'} every task, so chance agreement is certain"
    return SheetAgreement(
        batch=first.batch,
        reviewers=(first.reviewer, second.reviewer),
        tasks=len(first.tasks),
        n=n,
        both_accept=both_accept,
        only_first_accepts=only_first,
        only_second_accepts=only_second,
        both_reject=both_reject,
        agreed=both_accept + both_reject,
        agreement=(both_accept + both_reject) / n if n else None,
        kappa=kappa,
        kappa_note=note,
        disagreed=[task for task, a, b in decided if a != b],
        undecided=[task for task, a, b in pairs if a is None or b is None],
    )


def sheet_agreement(first: Path, second: Path) -> SheetAgreement:
    """The agreement of the sheets at ``first`` and ``second`` (their form checked; the batch need not be there)."""
    return agreement_of(parse_sheet(read_sheet_text(first), first), parse_sheet(read_sheet_text(second), second),
                           second)  # fmt: skip
