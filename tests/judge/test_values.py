"""Reading answer fields as numbers, texts and lists, by the strict documented rules."""

from __future__ import annotations

import pytest

from capreplay.judge.fields import as_list, as_text, format_number, iter_numbers, parse_number


@pytest.mark.parametrize(
    ("raw", "number"),
    [
        ("$1,249.50", 1249.5),
        ("1,249.50 USD", 1249.5),
        ("EUR 12,000,000", 12_000_000.0),
        ("4.6 / 5", 4.6),
        ("−3 °C", -3.0),  # U+2212 MINUS SIGN
        ("–7", -7.0),  # en dash as a minus
        ("Price: -12.5", -12.5),
        ("-$5", -5.0),
        ("12%", 12.0),
        ("1.5k", 1.5),
        (".5", 0.5),
        ("5.", 5.0),
        ("１２３", 123.0),  # full-width digits
        # Strict grouping: only commas between groups of exactly three digits.
        ("1 249", 1.0),
        ("1\u202f249", 1.0),
        ("1,5", 1.0),
        ("1,2345", 1.0),
        ("12,34,567", 12.0),
        ("3.14.15", 3.14),
        # A hyphen after a letter or digit joins, it is no minus.
        ("2019-2020", 2019.0),
        ("AT-15", 15.0),
        ("1e5", 1.0),
        ("rated 4 of 5", 4.0),
    ],
)
def test_parse_number_from_text(raw: str, number: float) -> None:
    assert parse_number(raw) == pytest.approx(number)


@pytest.mark.parametrize("raw", ["n/a", "", "-", "—", "approx. a dozen", "...", "$"])
def test_parse_number_finds_no_number(raw: str) -> None:
    assert parse_number(raw) is None


@pytest.mark.parametrize(
    ("raw", "number"),
    [(3, 3.0), (-2, -2.0), (4.25, 4.25), (True, None), (False, None), (None, None), (float("nan"), None),
     (float("inf"), None), (10**400, None), ([5], None), ({"v": 5}, None)],
)  # fmt: skip
def test_parse_number_of_non_strings(raw: object, number: float | None) -> None:
    assert parse_number(raw) == number


def test_iter_numbers_gives_positions_in_the_original_text() -> None:
    text = "Was −1,249.50, now 38 (12,34,567; 2019–2020)"
    found = list(iter_numbers(text))
    assert [f.value for f in found] == [-1249.5, 38.0, 12.0, 34.0, 567.0, 2019.0, 2020.0]
    assert [text[f.start : f.end] for f in found] == ["−1,249.50", "38", "12", "34", "567", "2019", "2020"]


def test_comma_lists_of_small_numbers_stay_apart() -> None:
    assert [f.value for f in iter_numbers("sizes 38,40,42")] == [38.0, 40.0, 42.0]


@pytest.mark.parametrize(("number", "text"), [(12.0, "12"), (-3.0, "-3"), (1249.5, "1249.5"), (1e20, "1e+20")])
def test_format_number(number: float, text: str) -> None:
    assert format_number(number) == text


@pytest.mark.parametrize(
    ("raw", "text"),
    [(" Boston ", "Boston"), (12.0, "12"), (4.5, "4.5"), (["only"], "only"), ([7], "7"), ("", ""),
     (["a", "b"], None), (True, None), (None, None), ({"a": 1}, None), ([], None)],
)  # fmt: skip
def test_as_text(raw: object, text: str | None) -> None:
    assert as_text(raw) == text


@pytest.mark.parametrize(
    ("raw", "items"),
    [
        (["a", " b ", "", None, 3, 2.5], ["a", "b", "3", "2.5"]),
        ("- Alpha\n- Beta\n\n* Gamma\n• Delta", ["Alpha", "Beta", "Gamma", "Delta"]),
        ("1. First\r\n2) Second\n3.5 stars", ["First", "Second", "3.5 stars"]),
        ("red; green ;blue;", ["red", "green", "blue"]),
        ("Paris, France", ["Paris, France"]),
        ('["x", "y", 3]', ["x", "y", "3"]),
        ("[not json]", ["[not json]"]),
        ("one", ["one"]),
        ("", []),
        (42, ["42"]),
    ],
)
def test_as_list(raw: object, items: list[str]) -> None:
    assert as_list(raw) == items


@pytest.mark.parametrize("raw", [None, True, {"a": 1}, [["nested"]], [{"a": 1}], [True]])
def test_as_list_refuses_what_is_not_a_list_of_texts(raw: object) -> None:
    assert as_list(raw) is None
