"""Writing one decision into a review sheet's text: the lines it changes, the ones it leaves, and the decisions it
refuses. The sheet is a real one (tests/support/view_sheet.py: a batch of three world tasks and the sheet
``capreplay tasks review`` writes of it); the expected lines are the sheet format's, written out here."""

from __future__ import annotations

import pytest

from capreplay.errors import InputError
from capreplay.tasks.review.decide import decide
from capreplay.tasks.review.parse import parse_sheet
from tests.support.view_sheet import make_review_sheet

WHERE = "review.md"


@pytest.fixture(scope="module")
def text(tmp_path_factory: pytest.TempPathFactory) -> str:
    return make_review_sheet(tmp_path_factory.mktemp("decide")).read_text(encoding="utf-8")


def section(lines: list[str], task_id: str) -> range:
    """The indexes of the task's section, found by its heading as the sheet format writes it."""
    start = next(i for i, line in enumerate(lines) if line.startswith("## Task ") and line.endswith(f": {task_id}"))
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    return range(start, end)


def changed(before: str, after: str) -> list[tuple[str, str]]:
    """The lines that differ, as (before, after) pairs: the two texts must have as many lines."""
    old, new = before.split("\n"), after.split("\n")
    assert len(old) == len(new)
    return [(a, b) for a, b in zip(old, new, strict=True) if a != b]


def _signed(text: str) -> str:
    return decide(text, "budget-tent", "accept", "", "Ada Lindqvist", where=WHERE)


def test_an_accept_ticks_the_box_and_signs_the_sheet_and_changes_nothing_else(text: str) -> None:
    after = decide(text, "rain-tent", "accept", "", "Ada Lindqvist", where=WHERE)
    assert changed(text, after) == [("Reviewer: ", "Reviewer: Ada Lindqvist"), ("- [ ] accept", "- [x] accept")]
    lines = after.split("\n")
    assert "- [x] accept" in [lines[i] for i in section(lines, "rain-tent")]
    sheet = parse_sheet(after, WHERE)
    assert [(t.task, t.verdict) for t in sheet.tasks] == [("budget-tent", None), ("rain-tent", "accept"),
                                                         ("kell-hut-choice", None)]  # fmt: skip
    assert sheet.reviewer == "Ada Lindqvist"


def test_a_reject_writes_its_reason_on_one_line(text: str) -> None:
    after = decide(text, "budget-tent", "reject", "Too easy:\n  the comparison\ttable alone answers it. ", "Ada",
                   where=WHERE)  # fmt: skip
    reason = "Reason: Too easy: the comparison table alone answers it."
    assert changed(text, after) == [("Reviewer: ", "Reviewer: Ada"), ("- [ ] reject", "- [x] reject"),
                                    ("Reason:", reason)]  # fmt: skip
    lines = after.split("\n")
    at = lines.index("Reason: Too easy: the comparison table alone answers it.")
    assert lines[at + 1 : at + 3] == ["", "---"]
    assert parse_sheet(after, WHERE).task("budget-tent").reason == "Too easy: the comparison table alone answers it."


def test_a_decision_can_be_changed_and_then_cleared(text: str) -> None:
    accepted = decide(text, "kell-hut-choice", "accept", "Needs both sites.", "Ada", where=WHERE)
    rejected = decide(accepted, "kell-hut-choice", "reject", "The hut calendar is ambiguous.", "", where=WHERE)
    reasons = ("Reason: Needs both sites.", "Reason: The hut calendar is ambiguous.")
    assert changed(accepted, rejected) == [("- [x] accept", "- [ ] accept"), ("- [ ] reject", "- [x] reject"), reasons]
    assert parse_sheet(rejected, WHERE).reviewer == "Ada"  # an empty name keeps the sheet's
    cleared = decide(rejected, "kell-hut-choice", None, "", "", where=WHERE)
    assert changed(text, cleared) == [("Reviewer: ", "Reviewer: Ada")]


def test_nothing_a_person_types_becomes_a_line_of_the_form(text: str) -> None:
    reason = "fine\n## Task 9: other\n- [x] reject\nReason: forged\n---"
    after = decide(text, "budget-tent", "accept", reason, "Ada\nReviewer: Eve", where=WHERE)
    sheet = parse_sheet(after, WHERE)
    assert [t.task for t in sheet.tasks] == ["budget-tent", "rain-tent", "kell-hut-choice"]
    assert sheet.task("budget-tent").reason == "fine ## Task 9: other - [x] reject Reason: forged ---"
    assert sheet.task("budget-tent").verdict == "accept"
    assert sheet.reviewer == "Ada Reviewer: Eve"
    assert len(after.split("\n")) == len(text.split("\n"))


def test_a_hand_written_reason_over_several_lines_is_replaced_whole(text: str) -> None:
    lines = _signed(text).split("\n")
    span = section(lines, "rain-tent")
    lines[next(i for i in span if lines[i] == "- [ ] accept")] = "- [x] accept"
    at = next(i for i in span if lines[i] == "Reason:")
    lines[at : at + 1] = ["Reason: The chart's tooltip", "shows 171 mm,", "", "which is right."]
    start = "\n".join(lines)
    assert parse_sheet(start, WHERE).task("rain-tent").reason == "The chart's tooltip shows 171 mm, which is right."

    after = decide(start, "rain-tent", "accept", "Clear.", "", where=WHERE)
    out = after.split("\n")
    at = out.index("Reason: Clear.")
    assert out[at + 1 : at + 3] == ["", "---"]
    assert "which is right." not in out and "shows 171 mm," not in out
    assert parse_sheet(after, WHERE).task("rain-tent").reason == "Clear."


def test_crlf_line_ends_and_a_byte_order_mark_are_kept(text: str) -> None:
    windows = "\ufeff" + text.replace("\n", "\r\n")
    after = decide(windows, "rain-tent", "reject", "Dull.", "Ada", where=WHERE)
    assert after.startswith("\ufeff<!-- capreplay review sheet 1 -->\r\n")
    assert all(line.endswith("\r") for line in after.split("\n")[:-1])
    assert after.replace("\r\n", "\n").lstrip("\ufeff") == decide(text, "rain-tent", "reject", "Dull.", "Ada",
                                                                   where=WHERE)  # fmt: skip
    assert parse_sheet(after, WHERE).task("rain-tent").verdict == "reject"


@pytest.mark.parametrize(("make", "task", "verdict", "reason", "reviewer", "message"), [
    (str, "rain-tent", "reject", "  ", "Ada", "task 'rain-tent': a reject needs a reason: say why the task should "
                                              "not be kept"),
    (str, "rain-tent", None, "Hmm.", "Ada", "task 'rain-tent': a reason but neither accept nor reject: choose one, "
                                            "or clear the reason to leave the task undecided"),
    (str, "rain-tent", "accept", "", " ", "task 'rain-tent': no reviewer: write your name as the sheet's reviewer"),
    (str, "no-such-task", "accept", "", "Ada", "has no task 'no-such-task'"),
    (_signed, "rain-tent", "accept", "", "Bo Ekdahl", "the sheet is signed by 'Ada Lindqvist', who decided 1 other "
                                                      "task(s) on it; a second reviewer writes a sheet of their own "
                                                      "(capreplay tasks review BATCH -o OTHER.md)"),
])  # fmt: skip
def test_a_decision_that_breaks_a_rule_is_refused(text: str, make: object, task: str, verdict: str | None,
                                                   reason: str, reviewer: str, message: str) -> None:  # fmt: skip
    assert callable(make)
    start = make(text)
    with pytest.raises(InputError) as caught:
        decide(start, task, verdict, reason, reviewer, where=WHERE)  # type: ignore[arg-type]
    assert caught.value.line() == f"{WHERE}: {message}"


def test_the_one_reviewer_may_correct_their_name_while_no_other_task_is_decided(text: str) -> None:
    first = decide(text, "budget-tent", "accept", "", "Ada Lindq", where=WHERE)
    again = decide(first, "budget-tent", "accept", "", "Ada Lindqvist", where=WHERE)
    assert parse_sheet(again, WHERE).reviewer == "Ada Lindqvist"


def test_a_sheet_broken_by_hand_is_refused_with_the_parsers_line(text: str) -> None:
    lines = text.split("\n")
    span = section(lines, "kell-hut-choice")
    for i in span:
        if lines[i] in ("- [ ] accept", "- [ ] reject"):
            lines[i] = lines[i].replace("[ ]", "[x]")
    broken = "\n".join(lines)
    reject_line = next(i for i in span if lines[i] == "- [x] reject") + 1
    with pytest.raises(InputError) as caught:
        decide(broken, "budget-tent", "accept", "", "Ada", where=WHERE)
    assert caught.value.line() == (f"{WHERE}: line {reject_line}: task 'kell-hut-choice' has both accept and reject "
                                   "ticked: tick one")  # fmt: skip
