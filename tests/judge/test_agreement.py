"""Judge-human agreement: hand-worked kappas, the label and verdict files, and the join."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, strategies as st

from capreplay.errors import InputError
from capreplay.judge.agreement import (
    Confusion,
    Label,
    agreement,
    agreement_report,
    agreement_table,
    cohen_kappa,
    join,
    parse_labels,
    read_labels,
    read_verdict_passes,
)


def pairs_of(pp: int, pf: int, fp: int, ff: int) -> list[tuple[bool, bool]]:
    """(human pass, judge pass) pairs counted as: pass & pass, pass & fail, fail & pass, fail & fail."""
    return [(True, True)] * pp + [(True, False)] * pf + [(False, True)] * fp + [(False, False)] * ff


def test_cap_table_i1() -> None:
    # CAP, table I.1: p_o = 96/100; p_e = (13*17 + 87*83) / 100**2 = 0.7442; kappa = 0.2158 / 0.2558
    result = agreement(pairs_of(13, 0, 4, 83))
    assert (result.n, result.agreed, result.agreement) == (100, 96, 0.96)
    assert result.kappa is not None and round(result.kappa, 4) == 0.8436
    assert result.kappa_note is None
    assert result.confusion == Confusion(
        human_pass_judge_pass=13, human_pass_judge_fail=0, human_fail_judge_pass=4, human_fail_judge_fail=83
    )


def test_a_second_hand_worked_case() -> None:
    # p_o = 35/50 = 0.7; human pass 25/50, judge pass 30/50; p_e = (25*30 + 25*20) / 2500 = 0.5; kappa = 0.2/0.5
    result = agreement(pairs_of(20, 5, 10, 15))
    assert (result.n, result.agreed, result.agreement) == (50, 35, 0.7)
    assert result.kappa == pytest.approx(0.4, abs=1e-12)


def test_complete_disagreement_is_minus_one_and_independent_verdicts_zero() -> None:
    assert agreement(pairs_of(0, 5, 5, 0)).kappa == pytest.approx(-1.0)
    # the human passes everything, the judge half: agreement 0.5 is exactly chance
    assert agreement(pairs_of(4, 4, 0, 0)).kappa == pytest.approx(0.0)


@pytest.mark.parametrize(("counts", "verdict"), [((7, 0, 0, 0), "pass"), ((0, 0, 0, 3), "fail")])
def test_kappa_is_undefined_when_both_sides_give_one_verdict(counts: tuple[int, int, int, int], verdict: str) -> None:
    result = agreement(pairs_of(*counts))
    assert result.agreement == 1.0 and result.kappa is None
    assert (
        result.kappa_note == f"the human and the judge marked every answer {verdict}, so agreement by chance is certain"
    )


def test_no_pairs_has_no_agreement() -> None:
    result = agreement([])
    assert (result.n, result.agreement, result.kappa) == (0, None, None)
    assert result.kappa_note == "no answer was marked by both a human and the judge"


@given(st.tuples(*[st.integers(0, 60)] * 4))
def test_kappa_matches_the_textbook_formula(counts: tuple[int, int, int, int]) -> None:
    pp, pf, fp, ff = counts
    n = pp + pf + fp + ff
    kappa = cohen_kappa(Confusion.of(pairs_of(*counts)))
    if n == 0 or (pp + pf, pp + fp) in ((n, n), (0, 0)):
        assert kappa is None
        return
    p_o = (pp + ff) / n
    p_e = ((pp + pf) / n) * ((pp + fp) / n) + ((fp + ff) / n) * ((pf + ff) / n)
    assert kappa == pytest.approx((p_o - p_e) / (1 - p_e), abs=1e-9)
    assert -1.0 <= kappa <= 1.0


def write(path: Path, *lines: str) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def test_labels_are_read_with_grader_and_note(tmp_path: Path) -> None:
    path = write(
        tmp_path / "labels.jsonl",
        '{"episode": "ep-1", "pass": true, "grader": "ana", "note": "cites the filtered page"}',
        "",
        '{"episode": "ep-2", "pass": false}',
    )
    assert read_labels(path) == [
        Label(episode="ep-1", passed=True, grader="ana", note="cites the filtered page"),
        Label(episode="ep-2", passed=False),
    ]


@pytest.mark.parametrize(
    ("third_line", "message"),
    [
        ('{"episode": "ep-3", "pass": tru}', "line 3: not valid JSON: Expecting value at column 29"),
        ('{"episode": "ep-3"}', "line 3: not a label: pass: Field required"),
        ('{"episode": "ep-3", "pass": "yes"}', "line 3: not a label: pass: Input should be a valid boolean"),
        ('{"episode": "ep-3", "pass": 1}', "line 3: not a label: pass: Input should be a valid boolean"),
        ('{"episode": 3, "pass": true}', "line 3: not a label: episode: Input should be a valid string"),
        ('{"episode": "ep-3", "passed": true}', "line 3: not a label: pass: Field required"),
        ('{"episode": "ep-3", "pass": true, "grade": "A"}', "line 3: not a label: grade: Extra inputs are not"),
        ('["ep-3", true]', "line 3: not a label: Input should be a valid dictionary"),
        ('{"episode": "ep-1", "pass": false}', "line 3: episode 'ep-1' is listed again (first on line 1)"),
    ],
)
def test_a_bad_label_line_is_an_input_error_naming_file_and_line(tmp_path: Path, third_line: str, message: str) -> None:
    path = write(tmp_path / "labels.jsonl", '{"episode": "ep-1", "pass": true}', "", third_line)
    with pytest.raises(InputError) as caught:
        read_labels(path)
    assert caught.value.exit_code == 2
    assert caught.value.line().startswith(f"{path}: {message}")


def test_an_unreadable_label_file_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="cannot read"):
        read_labels(tmp_path / "missing.jsonl")
    (tmp_path / "latin1.jsonl").write_bytes(b'{"episode": "\xe9", "pass": true}\n')
    with pytest.raises(InputError, match="not UTF-8"):
        read_labels(tmp_path / "latin1.jsonl")


def test_a_line_separator_inside_a_string_does_not_split_a_line() -> None:
    [label] = parse_labels('{"episode": "ep-1", "pass": true, "note": "a\u2028b"}\n', "labels.jsonl")
    assert label.note == "a\u2028b"


def test_verdicts_are_read_leniently_but_need_episode_and_passed(tmp_path: Path) -> None:
    verdict = {"episode": "ep-1", "passed": True, "score": 1.0, "leaves": [{"id": "x"}]}
    path = write(
        tmp_path / "verdicts.jsonl",
        json.dumps(verdict),
        '{"episode": "ep-2", "passed": null, "reason": "answer not parseable"}',
        '{"episode": "ep-3", "passed": false}',
    )
    assert read_verdict_passes(path) == {"ep-1": True, "ep-2": None, "ep-3": False}

    bad = write(tmp_path / "bad.jsonl", json.dumps(verdict), '{"episode": "ep-2", "score": 0.5}')
    with pytest.raises(InputError) as caught:
        read_verdict_passes(bad)
    assert caught.value.line() == f"{bad}: line 2: not a verdict: passed: Field required"

    repeated = write(tmp_path / "repeated.jsonl", json.dumps(verdict), json.dumps(verdict))
    with pytest.raises(InputError, match="line 2: episode 'ep-1' is listed again"):
        read_verdict_passes(repeated)


def test_join_pairs_labels_with_scored_verdicts_and_counts_the_rest() -> None:
    labels = [
        Label(episode="a", passed=True),
        Label(episode="b", passed=False),
        Label(episode="c", passed=True),
        Label(episode="d", passed=False),
    ]
    verdicts = {"e": True, "d": True, "b": None, "a": True}
    joined = join(labels, verdicts)
    assert [(p.episode, p.human, p.judge) for p in joined.pairs] == [("a", True, True), ("d", False, True)]
    assert (joined.not_judged, joined.unscored, joined.not_labelled) == (["c"], ["b"], ["e"])

    report = agreement_report(joined)
    assert (report.not_judged, report.unscored, report.not_labelled) == (1, 1, 1)
    assert (report.agreement.n, report.agreement.agreed) == (2, 1)


def test_the_table_shows_the_matrix_agreement_kappa_and_what_was_left_out() -> None:
    labels = [Label(episode=f"ep-{i}", passed=h) for i, (h, _) in enumerate(pairs_of(13, 0, 4, 83))]
    verdicts: dict[str, bool | None] = {f"ep-{i}": j for i, (_, j) in enumerate(pairs_of(13, 0, 4, 83))}
    verdicts["ep-0"] = None  # one human pass the judge could not score
    labels.append(Label(episode="ep-unjudged", passed=False))
    table = agreement_table(agreement_report(join(labels, verdicts)))
    assert table == (
        "| | Judge: pass | Judge: fail |\n"
        "| --- | --- | --- |\n"
        "| Human: pass | 12 | 0 |\n"
        "| Human: fail | 4 | 83 |\n"
        "\n"
        "| | |\n"
        "| --- | --- |\n"
        "| n | 99 |\n"
        "| agreement | 96.0% (95/99) |\n"
        "| Cohen's kappa | 0.8342 |\n"
        "| left out: labelled, not judged | 1 |\n"
        "| left out: judged unscored | 1 |\n"
        "| left out: judged, not labelled | 0 |\n"
    )


def test_the_table_says_why_kappa_is_undefined() -> None:
    table = agreement_table(agreement_report(join([Label(episode="a", passed=True)], {"a": True})))
    assert "| Cohen's kappa | undefined: the human and the judge marked every answer pass" in table


@pytest.mark.parametrize(
    ("counts", "kappa", "printed"),
    [
        # Wikipedia, "Cohen's kappa", simple example (50 grant proposals, two readers): p_o 0.70, p_e 0.50, 0.40
        ((20, 5, 10, 15), 0.40, "| agreement | 70.0% (35/50) |\n| Cohen's kappa | 0.4000 |"),
        # the same article, same percentages but different numbers: kappa 0.1304 (p_o 0.60, p_e 0.54)
        ((45, 15, 25, 15), 0.1304, "| agreement | 60.0% (60/100) |\n| Cohen's kappa | 0.1304 |"),
    ],
)
def test_the_agreement_read_from_files_is_the_published_kappa(
    tmp_path: Path, counts: tuple[int, int, int, int], kappa: float, printed: str
) -> None:
    # the human is the first rater, the judge the second, as the files a user writes give them
    pairs = pairs_of(*counts)
    (tmp_path / "labels.jsonl").write_text(
        "".join(json.dumps({"episode": f"ep-{i}", "pass": h}) + "\n" for i, (h, _) in enumerate(pairs))
    )
    (tmp_path / "verdicts.jsonl").write_text(
        "".join(json.dumps({"episode": f"ep-{i}", "passed": j}) + "\n" for i, (_, j) in enumerate(pairs))
    )
    joined = join(read_labels(tmp_path / "labels.jsonl"), read_verdict_passes(tmp_path / "verdicts.jsonl"))
    report = agreement_report(joined)
    assert report.agreement.kappa == pytest.approx(kappa, abs=5e-5)
    assert cohen_kappa(report.agreement.confusion) == report.agreement.kappa
    assert printed in agreement_table(report)
