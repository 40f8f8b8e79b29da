"""Benchmark task recipes: what a recipe expands to, and the recipes refused."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from capreplay.benchmark.recipes import Recipe, expand


def _recipe(**changes: Any) -> dict[str, Any]:
    recipe: dict[str, Any] = {
        "id": "cheapest-flag",
        "description": "I want the cheapest flag of an island country. Which is it, and what does it cost?",
        "sites": ["data.bench.test", "shop.bench.test"],
        "flow": "sequential",
        "start_url": "http://data.bench.test/",
        "covered_points": [
            {"id": "facet", "type": "action", "code": "AT33", "site": "data.bench.test", "description": "Filter."},
            {"id": "compare", "type": "perception", "code": "PT22", "site": "shop.bench.test", "description": "See."},
        ],
        "answers": [
            {"name": "country", "type": "text", "description": "The country.", "value": "Nauru",
             "accept": ["Republic of Nauru"], "point": "compare"},
            {"name": "price", "type": "number", "description": "Its price.", "value": 12.5, "tolerance": 0.01,
             "cited_on": "product_url"},
            {"name": "islands", "type": "text_list", "description": "The islands.", "value": ["Nauru", "Tuvalu"]},
        ],
        "links": [
            {"name": "list_url", "description": "The filtered list.", "value": "http://data.bench.test/c?island=1",
             "pattern": "island=1", "point": "facet"},
            {"name": "product_url", "description": "The product.", "value": "http://shop.bench.test/p/nr"},
        ],
        "gold_path": [
            {"type": "goto", "url": "http://data.bench.test/c?island=1"},
            {"type": "read", "output": "list_url", "source": "url"},
            {"type": "read", "output": "islands", "selector": "td.name", "many": True},
            {"type": "goto", "url": "http://shop.bench.test/p/nr"},
            {"type": "read", "output": "product_url", "source": "url"},
            {"type": "read", "output": "country", "selector": "h1"},
            {"type": "read", "output": "price", "selector": ".price"},
        ],
        "provenance": "Written by hand for this test.",
    }
    return recipe | changes


def _leaves(task: Any) -> dict[str, tuple[bool, str, str | None, dict[str, Any]]]:
    return {leaf.id: (leaf.critical, leaf.kind, leaf.point, leaf.check.model_dump(exclude_none=True))
            for leaf in task.rubric.leaves()}  # fmt: skip


def test_a_recipe_expands_to_outputs_a_rubric_without_a_model_and_expected_values() -> None:
    task = expand(Recipe.model_validate(_recipe()))
    assert [(o.name, o.type, o.role) for o in task.outputs] == [
        ("country", "text", "user_value"), ("price", "number", "user_value"), ("islands", "text_list", "user_value"),
        ("list_url", "url", "provenance_url"), ("product_url", "url", "provenance_url"),
    ]  # fmt: skip
    assert _leaves(task) == {
        "country-value": (True, "perception", "compare", {"check": "set_membership", "field": "country",
                                                          "values": ["Nauru", "Republic of Nauru"], "mode": "one_of"}),
        "price-value": (True, "other", None, {"check": "numeric_range", "field": "price", "min": 12.49, "max": 12.51}),
        "price-on-page": (False, "other", None, {"check": "claim_on_page", "field": "price", "url_field": "product_url",
                                                 "match": "number", "tolerance": 0.01}),
        "islands-value": (True, "other", None, {"check": "set_membership", "field": "islands",
                                                "values": ["Nauru", "Tuvalu"], "mode": "contains_all"}),
        "islands-count": (False, "other", None, {"check": "count", "field": "islands", "min": 2, "max": 2}),
        "list_url-captured": (True, "other", None, {"check": "url_in_snapshot", "field": "list_url"}),
        "list_url-state": (True, "action", "facet", {"check": "regex", "field": "list_url", "pattern": "island=1",
                                                     "full": False, "ignore_case": True}),
        "product_url-captured": (True, "other", None, {"check": "url_in_snapshot", "field": "product_url"}),
    }  # fmt: skip
    assert task.rubric.description == "I want the cheapest flag of an island country."
    assert task.expected == {"country": "Nauru", "price": "12.5", "islands": ["Nauru", "Tuvalu"],
                             "list_url": "http://data.bench.test/c?island=1",
                             "product_url": "http://shop.bench.test/p/nr"}  # fmt: skip


@pytest.mark.parametrize(("value", "text"), [(4740, "4740"), (139.7447, "139.7447"), (-78.4, "-78.4"),
                                             (1234567.25, "1234567.25")])
def test_numbers_are_expected_as_the_page_writes_them(value: float, text: str) -> None:
    answers = _recipe()["answers"]
    answers[1] = answers[1] | {"value": value}
    assert expand(Recipe.model_validate(_recipe(answers=answers))).expected["price"] == text  # type: ignore[index]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"answers": [{"name": "price", "type": "number", "description": "x", "value": "cheap"}]}, "is number"),
        ({"links": [{"name": "list_url", "description": "x", "value": "http://data.bench.test/c",
                     "pattern": "island=1"}]}, "does not match"),
        ({"links": []}, "cites 'product_url', not a link"),
        ({"covered_points": []}, "shows point 'compare', not a covered point"),
        ({"sites": ["data.bench.test"]}, "spans two or more sites"),
    ],
)
def test_inconsistent_recipes_are_refused(change: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        Recipe.model_validate(_recipe(**change))
