"""The suite's worker groups: tests sharing a module or a fixture made once stay on one worker."""

from __future__ import annotations

from tests.support.worker_groups import worker_groups


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
