"""How often the judge agrees with human graders on pass/fail, with Cohen's kappa (CAP, appendix I).

Humans label episodes in ``labels.jsonl``, one object per line: ``{"episode": "<episode id>", "pass": true}``,
optionally with ``"grader"`` and ``"note"``. The judge's ``verdicts.jsonl`` holds, among other keys,
``{"episode": ..., "passed": true | false | null}`` (null: the judge could not score the episode).
:func:`join` pairs the two by episode id; episodes without a verdict, or that the judge left unscored, are
left out of the statistics and counted, so a judge cannot look better by failing to score hard cases.

Reading files (:func:`read_labels`, :func:`read_verdict_passes`) is kept apart from the pure parsing,
joining and statistics.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictStr, ValidationError

from capreplay.errors import InputError, os_reason, validation_reason
from capreplay.util.stats import cohen_kappa_2x2

Pair = tuple[bool, bool]
"""One episode's verdicts: (human says pass, judge says pass)."""


class Confusion(BaseModel):
    """Counts of the four ways a human and the judge can mark one answer."""

    model_config = ConfigDict(frozen=True)

    human_pass_judge_pass: int = Field(0, ge=0)
    human_pass_judge_fail: int = Field(0, ge=0)
    human_fail_judge_pass: int = Field(0, ge=0)
    human_fail_judge_fail: int = Field(0, ge=0)

    @classmethod
    def of(cls, pairs: Sequence[Pair]) -> Confusion:
        """The counts of ``pairs`` of (human pass, judge pass)."""
        return cls(
            human_pass_judge_pass=sum(1 for h, j in pairs if h and j),
            human_pass_judge_fail=sum(1 for h, j in pairs if h and not j),
            human_fail_judge_pass=sum(1 for h, j in pairs if not h and j),
            human_fail_judge_fail=sum(1 for h, j in pairs if not h and not j),
        )

    @property
    def n(self) -> int:
        """Answers both marked."""
        return (
            self.human_pass_judge_pass
            + self.human_pass_judge_fail
            + self.human_fail_judge_pass
            + self.human_fail_judge_fail
        )

    @property
    def agreed(self) -> int:
        """Answers both marked the same way."""
        return self.human_pass_judge_pass + self.human_fail_judge_fail


def cohen_kappa(confusion: Confusion) -> float | None:
    """Cohen's kappa of the judge against the human graders; None when undefined (see :func:`cohen_kappa_2x2`)."""
    c = confusion
    return cohen_kappa_2x2(c.human_pass_judge_pass, c.human_pass_judge_fail, c.human_fail_judge_pass,
                           c.human_fail_judge_fail)  # fmt: skip


class Agreement(BaseModel):
    """Agreement between human and judge verdicts on the same answers."""

    model_config = ConfigDict(frozen=True)

    n: int = Field(description="Answers both marked pass or fail.")
    agreed: int = Field(description="Answers both marked the same way.")
    agreement: float | None = Field(description="agreed / n; None when n is 0.")
    kappa: float | None = Field(description="Cohen's kappa; None when undefined (see kappa_note).")
    kappa_note: str | None = Field(None, description="Why kappa is undefined, when it is.")
    confusion: Confusion


def agreement(pairs: Sequence[Pair]) -> Agreement:
    """Raw agreement, Cohen's kappa and the confusion matrix of (human pass, judge pass) pairs."""
    confusion = Confusion.of(pairs)
    n = confusion.n
    kappa = cohen_kappa(confusion)
    note = None
    if n == 0:
        note = "no answer was marked by both a human and the judge"
    elif kappa is None:
        verdict = "pass" if confusion.human_pass_judge_pass else "fail"
        note = f"the human and the judge marked every answer {verdict}, so agreement by chance is certain"
    return Agreement(
        n=n,
        agreed=confusion.agreed,
        agreement=confusion.agreed / n if n else None,
        kappa=kappa,
        kappa_note=note,
        confusion=confusion,
    )


class Label(BaseModel):
    """A human grader's verdict on one episode: one line of ``labels.jsonl``."""

    # code may build a label with ``passed=``; a file must spell the key "pass" (see parse_labels)
    model_config = ConfigDict(frozen=True, extra="forbid", validate_by_name=True, validate_by_alias=True)

    episode: StrictStr = Field(min_length=1, description="The episode id, as the run records it.")
    passed: StrictBool = Field(alias="pass", description="The grader's verdict: the answer passes.")
    grader: StrictStr | None = Field(None, description="Who graded it.")
    note: StrictStr | None = Field(None, description="Why, in the grader's words.")


class _VerdictPass(BaseModel):
    # the judge's verdict lines hold much more; only these two keys matter here
    model_config = ConfigDict(extra="ignore")

    episode: StrictStr = Field(min_length=1)
    passed: StrictBool | None


def _problem(e: ValidationError) -> str:
    return validation_reason(e, top="")


def _lines(text: str, where: str | Path) -> list[tuple[int, Any]]:
    """The JSON value of each non-blank line, with its number; a line that is not JSON is an InputError."""
    values = []
    # split on "\n" only: JSON may hold other line separators (U+2028) unescaped inside a string
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            values.append((number, json.loads(line)))
        except json.JSONDecodeError as e:
            raise InputError(f"line {number}: not valid JSON: {e.msg} at column {e.colno}", where) from e
    return values


def _no_repeat(seen: dict[str, int], episode: str, number: int, where: str | Path) -> None:
    if episode in seen:
        raise InputError(f"line {number}: episode {episode!r} is listed again (first on line {seen[episode]})", where)
    seen[episode] = number


def parse_labels(text: str, where: str | Path) -> list[Label]:
    """The labels in the text of a ``labels.jsonl``; a bad line or a repeated episode is an InputError."""
    labels: list[Label] = []
    seen: dict[str, int] = {}
    for number, value in _lines(text, where):
        try:
            label = Label.model_validate(value, by_alias=True, by_name=False)
        except ValidationError as e:
            raise InputError(f"line {number}: not a label: {_problem(e)}", where) from e
        _no_repeat(seen, label.episode, number, where)
        labels.append(label)
    return labels


def parse_verdict_passes(text: str, where: str | Path) -> dict[str, bool | None]:
    """Each episode's pass (None: unscored) in the text of a ``verdicts.jsonl``; other keys are ignored."""
    passes: dict[str, bool | None] = {}
    seen: dict[str, int] = {}
    for number, value in _lines(text, where):
        try:
            verdict = _VerdictPass.model_validate(value)
        except ValidationError as e:
            raise InputError(f"line {number}: not a verdict: {_problem(e)}", where) from e
        _no_repeat(seen, verdict.episode, number, where)
        passes[verdict.episode] = verdict.passed
    return passes


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise InputError("not UTF-8 text", path) from e
    except OSError as e:
        raise InputError(f"cannot read: {os_reason(e)}", path) from e


def read_labels(path: Path) -> list[Label]:
    """The labels of the file ``path``; see :func:`parse_labels`."""
    return parse_labels(_read_text(path), path)


def read_verdict_passes(path: Path) -> dict[str, bool | None]:
    """Each episode's pass in the verdicts file ``path``; see :func:`parse_verdict_passes`."""
    return parse_verdict_passes(_read_text(path), path)


class JoinedPair(BaseModel):
    """One episode both a human and the judge marked."""

    model_config = ConfigDict(frozen=True)

    episode: str
    human: bool = Field(description="The human's verdict: pass.")
    judge: bool = Field(description="The judge's verdict: pass.")


class Joined(BaseModel):
    """Labels matched with verdicts by episode id, and the episodes that could not be compared."""

    model_config = ConfigDict(frozen=True)

    pairs: list[JoinedPair] = Field(description="Episodes with a label and a scored verdict, in label order.")
    not_judged: list[str] = Field(description="Labelled episodes with no verdict.")
    unscored: list[str] = Field(description="Labelled episodes the judge left unscored.")
    not_labelled: list[str] = Field(description="Judged episodes no human labelled, in verdict order.")

    def as_pairs(self) -> list[Pair]:
        """The (human pass, judge pass) pairs."""
        return [(p.human, p.judge) for p in self.pairs]


def join(labels: Sequence[Label], verdicts: Mapping[str, bool | None]) -> Joined:
    """Pair each label with the judge's verdict on the same episode."""
    pairs: list[JoinedPair] = []
    not_judged: list[str] = []
    unscored: list[str] = []
    for label in labels:
        if label.episode not in verdicts:
            not_judged.append(label.episode)
            continue
        judge = verdicts[label.episode]
        if judge is None:
            unscored.append(label.episode)
        else:
            pairs.append(JoinedPair(episode=label.episode, human=label.passed, judge=judge))
    labelled = {label.episode for label in labels}
    not_labelled = [episode for episode in verdicts if episode not in labelled]
    return Joined(pairs=pairs, not_judged=not_judged, unscored=unscored, not_labelled=not_labelled)


class AgreementReport(BaseModel):
    """The agreement of a judge's verdicts with human labels, and what was left out of it."""

    model_config = ConfigDict(frozen=True)

    agreement: Agreement
    not_judged: int = Field(description="Labelled episodes with no verdict.")
    unscored: int = Field(description="Labelled episodes the judge left unscored.")
    not_labelled: int = Field(description="Judged episodes without a label.")


def agreement_report(joined: Joined) -> AgreementReport:
    """The agreement over the joined pairs, with the counts of episodes left out."""
    return AgreementReport(
        agreement=agreement(joined.as_pairs()),
        not_judged=len(joined.not_judged),
        unscored=len(joined.unscored),
        not_labelled=len(joined.not_labelled),
    )


def agreement_table(result: AgreementReport) -> str:
    """A small Markdown table: the confusion matrix, then n, agreement, kappa and the episodes left out."""
    a = result.agreement
    c = a.confusion
    share = f"{a.agreement:.1%} ({a.agreed}/{a.n})" if a.agreement is not None else "n/a"
    kappa = f"{a.kappa:.4f}" if a.kappa is not None else f"undefined: {a.kappa_note}"
    rows = [
        "| | Judge: pass | Judge: fail |",
        "| --- | --- | --- |",
        f"| Human: pass | {c.human_pass_judge_pass} | {c.human_pass_judge_fail} |",
        f"| Human: fail | {c.human_fail_judge_pass} | {c.human_fail_judge_fail} |",
        "",
        "| | |",
        "| --- | --- |",
        f"| n | {a.n} |",
        f"| agreement | {share} |",
        f"| Cohen's kappa | {kappa} |",
        f"| left out: labelled, not judged | {result.not_judged} |",
        f"| left out: judged unscored | {result.unscored} |",
        f"| left out: judged, not labelled | {result.not_labelled} |",
    ]
    return "\n".join(rows) + "\n"
