"""The suite's worker groups: tests sharing a module or a fixture made once stay on one worker."""

from __future__ import annotations

from tests.support.worker_groups import heaviest_first, worker_groups


def test_tests_of_one_module_share_a_group_and_unrelated_modules_do_not() -> None:
    groups = worker_groups([("a.py", []), ("b.py", []), ("a.py", [])])
    assert groups == ["a.py", "b.py", "a.py"]


def test_a_shared_fixture_joins_modules_and_joining_is_transitive() -> None:
    groups = worker_groups(
        [
            ("a.py", ["gold_run"]),
            ("b.py", ["cluster"]),
            ("c.py", ["gold_run", "cluster"]),
            ("d.py", ["pywb"]),
            ("b.py", []),
        ]
    )
    assert groups == ["a.py", "a.py", "a.py", "d.py", "a.py"]


def test_cheap_fixtures_join_nothing() -> None:
    groups = worker_groups([("a.py", ["private_cache", "committed_snapshot"]), ("b.py", ["committed_snapshot"])])
    assert groups == ["a.py", "b.py"]


def test_the_costliest_groups_go_first_and_stay_whole() -> None:
    groups = ["a", "b", "a", "c", "b", "c", "c", "d"]
    costs = [0, 1, 0, 1, 1, 0, 1, 11]
    # d costs 11, b 2 and c 2 (b is met first), a nothing; each group's tests keep their order
    assert heaviest_first(groups, costs) == [7, 1, 4, 3, 5, 6, 0, 2]


def test_without_costs_groups_keep_the_order_they_are_first_met_in() -> None:
    assert heaviest_first(["x", "y", "x"], [0, 0, 0]) == [0, 2, 1]
