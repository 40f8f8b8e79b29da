"""The suite's worker groups: tests sharing a module or a fixture made once stay on one worker."""

from __future__ import annotations

import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

from tests.support.paths import ROOT
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


def test_under_two_workers_each_module_runs_on_one_worker() -> None:
    """The groups reach pytest-xdist's scheduler: a real two-worker run keeps each module's tests on one worker
    (with pytest 9.2 or a hook that never marked the workers' tests, it dealt them out one by one)."""
    this = f"{Path(__file__).relative_to(ROOT).as_posix()}::test_under_two_workers_each_module_runs_on_one_worker"
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-n", "2", "--dist", "loadgroup", "-v", "-p", "no:cacheprovider",
         "tests/llm/test_access.py", "tests/test_worker_groups.py", "--deselect", this],
        cwd=ROOT, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    workers: dict[str, set[str]] = defaultdict(set)
    for worker, module in re.findall(r"^\[(gw\d+)\] \[ *\d+%\] PASSED (\S+?)::", run.stdout, re.MULTILINE):
        workers[module].add(worker)
    assert set(workers) == {"tests/llm/test_access.py", "tests/test_worker_groups.py"}, run.stdout[-3000:]
    assert all(len(ran_on) == 1 for ran_on in workers.values()), dict(workers)
