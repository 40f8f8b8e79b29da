"""Which tests must share a pytest-xdist worker: those that share a fixture made once per session or package.

The suite runs on several workers (``--dist loadgroup``, see ``scripts/test.sh``). A session fixture is made once
per worker that needs it, so a capture, a gold run or a Ray cluster used from two workers would be made twice, and
a tool installed into one shared folder would be installed twice at once. Tests are therefore joined into groups:
two tests are in one group when they share a module (module fixtures stay made once) or a shared fixture, and
joining is transitive. Fixtures in ``CHEAP`` are not worth joining for.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

CHEAP = frozenset({"private_cache", "committed_snapshot"})
"""Session fixtures that are cheap to make again and hold no shared state: they join nothing."""


def worker_groups(tests: Sequence[tuple[str, Iterable[str]]]) -> list[str]:
    """One group name per test, given each test's module and the names of the session or package fixtures it uses.

    A group is named after the first module (in the order given) that belongs to it.
    """
    parent: dict[str, str] = {}

    def find(node: str) -> str:
        parent.setdefault(node, node)
        while parent[node] != node:
            parent[node] = parent[parent[node]]
            node = parent[node]
        return node

    def join(a: str, b: str) -> None:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[rb] = ra

    for module, fixtures in tests:
        find(f"module:{module}")
        for name in fixtures:
            if name not in CHEAP:
                join(f"module:{module}", f"fixture:{name}")
    names: dict[str, str] = {}
    for module, _ in tests:
        names.setdefault(find(f"module:{module}"), module)
    return [names[find(f"module:{module}")] for module, _ in tests]


def heaviest_first(groups: Sequence[str], costs: Sequence[int]) -> list[int]:
    """The order in which to hand the tests out: whole groups, those whose tests' ``costs`` add up to the most
    first, ties in the order given, each group's tests in the order given.

    Workers take groups in collection order, so a costly group left to the end runs alone while the other workers
    have finished; handing the costly ones out first leaves cheap groups for the end.
    """
    total: dict[str, int] = {}
    first: dict[str, int] = {}
    for index, (group, cost) in enumerate(zip(groups, costs, strict=True)):
        total[group] = total.get(group, 0) + cost
        first.setdefault(group, index)
    return sorted(range(len(groups)), key=lambda i: (-total[groups[i]], first[groups[i]], i))
