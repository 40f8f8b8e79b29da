"""The four answer-only checks, each on good and bad input, and the reasons they give."""

from __future__ import annotations

from typing import Any

import pytest

from capreplay.judge.checks import run_value_check
from capreplay.models.rubric import RubricNode


def leaf(
    check: dict[str, Any], *, critical: bool = True, kind: str = "perception", point: str | None = "p1"
) -> RubricNode:
    return RubricNode.model_validate(
        {"id": "leaf-1", "description": "d", "critical": critical, "kind": kind, "point": point, "check": check}
    )


PRICE = leaf({"check": "numeric_range", "field": "price", "min": 1000, "max": 1500})


def test_verdict_carries_the_leaf() -> None:
    verdict = run_value_check(leaf({"check": "regex", "field": "code", "pattern": "x"}, critical=False, kind="action",
                                   point="a7"), {"code": "x"})  # fmt: skip
    assert (verdict.node, verdict.kind, verdict.point, verdict.check, verdict.critical) == (
        "leaf-1", "action", "a7", "regex", False)  # fmt: skip
    assert verdict.passed
    assert verdict.evidence == []


@pytest.mark.parametrize(
    ("value", "passed", "reason"),
    [
        ("$1,249.50", True, "field 'price' = '$1,249.50' reads as 1249.5, within [1000, 1500]"),
        (1000, True, "field 'price' = 1000 reads as 1000, within [1000, 1500]"),
        (1500.0, True, "within [1000, 1500]"),
        ("1,500.01", False, "field 'price' = '1,500.01' reads as 1500.01, above the maximum 1500"),
        ("999", False, "reads as 999, below the minimum 1000"),
        ("1 249", False, "reads as 1, below the minimum 1000"),
        ("n/a", False, "field 'price' holds no number: 'n/a'"),
        (True, False, "field 'price' holds no number: True"),
        (["1200"], False, "field 'price' holds no number: ['1200']"),
    ],
)
def test_numeric_range(value: object, passed: bool, reason: str) -> None:
    verdict = run_value_check(PRICE, {"price": value})
    assert verdict.passed is passed
    assert reason in verdict.reason


def test_numeric_range_open_ends_and_negative_numbers() -> None:
    below = leaf({"check": "numeric_range", "field": "t", "max": 0})
    assert run_value_check(below, {"t": "−3 °C"}).passed
    assert run_value_check(below, {"t": "3 °C"}).reason == "field 't' = '3 °C' reads as 3, above the maximum 0"
    above = leaf({"check": "numeric_range", "field": "t", "min": 4.5})
    verdict = run_value_check(above, {"t": "4.6 / 5"})
    assert verdict.passed
    assert verdict.reason.endswith("reads as 4.6, at least 4.5")


@pytest.mark.parametrize("fields", [{}, {"price": None}, {"other": "1200"}])
def test_missing_field_fails_with_its_name(fields: dict[str, object]) -> None:
    verdict = run_value_check(PRICE, fields)
    assert not verdict.passed
    assert verdict.reason == "field 'price' is missing"


def test_regex_partial_full_and_case() -> None:
    partial = leaf({"check": "regex", "field": "code", "pattern": r"SKU-\d{4}"})
    assert run_value_check(partial, {"code": "item sku-1234 (blue)"}).passed
    full = leaf({"check": "regex", "field": "code", "pattern": r"SKU-\d{4}", "full": True})
    verdict = run_value_check(full, {"code": "item sku-1234 (blue)"})
    assert not verdict.passed
    assert verdict.reason == r"field 'code' = 'item sku-1234 (blue)' does not match /SKU-\d{4}/ in full"
    assert run_value_check(full, {"code": "  sku-1234 "}).passed
    cased = leaf({"check": "regex", "field": "code", "pattern": r"SKU-\d{4}", "ignore_case": False})
    assert not run_value_check(cased, {"code": "sku-1234"}).passed
    assert run_value_check(cased, {"code": "SKU-1234"}).passed


def test_regex_collapses_whitespace() -> None:
    check = leaf({"check": "regex", "field": "name", "pattern": "^New York City$"})
    verdict = run_value_check(check, {"name": "New\n  York\tCity"})
    assert verdict.passed
    assert verdict.reason == "field 'name' = 'New York City' matches /^New York City$/ somewhere"


def test_regex_reads_numbers_as_text_and_refuses_lists() -> None:
    check = leaf({"check": "regex", "field": "n", "pattern": r"^\d+$"})
    assert run_value_check(check, {"n": 42}).passed
    verdict = run_value_check(check, {"n": ["1", "2"]})
    assert not verdict.passed
    assert verdict.reason == "field 'n' holds no single text: ['1', '2']"


def test_set_membership_one_of_normalises_case_dashes_and_spaces() -> None:
    check = leaf({"check": "set_membership", "field": "route", "values": ["Boston–New York", "Chicago"]})
    verdict = run_value_check(check, {"route": "  BOSTON -  new york. "})
    assert not verdict.passed  # "boston - new york" keeps its spaces around the dash
    assert run_value_check(check, {"route": "boston—new  YORK."}).passed
    assert run_value_check(check, {"route": "ＣＨＩＣＡＧＯ"}).passed
    verdict = run_value_check(check, {"route": "Denver"})
    assert not verdict.passed
    assert verdict.reason == "field 'route' = 'Denver' is not one of ['Boston–New York', 'Chicago']"
    assert run_value_check(check, {"route": {"a": 1}}).reason == "field 'route' holds no single text: {'a': 1}"


def test_set_membership_all_in() -> None:
    check = leaf({"check": "set_membership", "field": "genres", "values": ["Sci-Fi", "Drama", "Thriller"],
                  "mode": "all_in"})  # fmt: skip
    assert run_value_check(check, {"genres": "sci‑fi\ndrama"}).passed  # non-breaking hyphen, one per line
    assert run_value_check(check, {"genres": ["DRAMA", "Thriller"]}).passed
    verdict = run_value_check(check, {"genres": "Drama; Comedy; Horror"})
    assert not verdict.passed
    assert verdict.reason == "field 'genres': ['Comedy', 'Horror'] not among ['Sci-Fi', 'Drama', 'Thriller']"
    verdict = run_value_check(check, {"genres": []})
    assert not verdict.passed
    assert verdict.reason == "field 'genres' holds no items: []"
    assert run_value_check(check, {"genres": {"x": 1}}).reason == "field 'genres' holds no list: {'x': 1}"


def test_set_membership_contains_all() -> None:
    check = leaf({"check": "set_membership", "field": "cities", "values": ["Paris", "Rome"], "mode": "contains_all"})
    assert run_value_check(check, {"cities": "- rome\n- Berlin\n- PARIS"}).passed
    verdict = run_value_check(check, {"cities": ["Rome", "Berlin"]})
    assert not verdict.passed
    assert verdict.reason == "field 'cities' = ['Rome', 'Berlin'] lacks ['Paris']"


def test_count_counts_distinct_normalised_items() -> None:
    check = leaf({"check": "count", "field": "films", "min": 3, "max": 5})
    verdict = run_value_check(check, {"films": "Alien\nALIEN\nHeat\nBrazil"})
    assert verdict.passed
    assert verdict.reason == "field 'films' = ['Alien', 'ALIEN', 'Heat', 'Brazil'] has 3 distinct items, within [3, 5]"
    verdict = run_value_check(check, {"films": ["Alien", "alien.", "Heat"]})
    assert not verdict.passed
    assert verdict.reason.endswith("has 2 distinct items, below the minimum 3")
    assert not run_value_check(check, {"films": "a;b;c;d;e;f"}).passed
    assert run_value_check(check, {"films": "a;b;c;d;e;f"}).reason.endswith("6 distinct items, above the maximum 5")
    at_most = leaf({"check": "count", "field": "films", "max": 0})
    assert run_value_check(at_most, {"films": ""}).passed
    assert run_value_check(at_most, {"films": True}).reason == "field 'films' holds no list: True"


def test_long_values_are_shortened_to_one_line() -> None:
    verdict = run_value_check(PRICE, {"price": "no price here\n" * 20})
    assert "\n" not in verdict.reason
    assert verdict.reason.endswith("...")
    assert len(verdict.reason) < 130


@pytest.mark.parametrize(
    "check",
    [{"check": "url_in_snapshot", "field": "link"},
     {"check": "claim_on_page", "field": "price", "url_field": "link", "match": "number"}],
)  # fmt: skip
def test_grounded_checks_are_refused(check: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="needs the snapshot"):
        run_value_check(leaf(check), {"link": "https://shop.example/", "price": 3})


def test_an_inner_node_is_refused() -> None:
    child = {"id": "x", "description": "d", "kind": "other", "check": {"check": "regex", "field": "a", "pattern": "."}}
    node = RubricNode.model_validate({"id": "root", "description": "d", "children": [child]})
    with pytest.raises(ValueError, match="not a leaf"):
        run_value_check(node, {"a": "x"})
