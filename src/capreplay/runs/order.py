"""Seeded run orders: the same seed always gives the same plan, and no two repeats share an order."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence


def seeded_plan[G, C](seed: int, repeats: int, groups: Sequence[G], cells: Callable[[int, G], list[C]], *,
                      shuffle_cells: bool) -> list[C]:  # fmt: skip
    """Every repeat's cells: the groups in a seeded random order, each group's cells in a row.

    One random generator serves the whole plan, so each repeat has its own order; with ``shuffle_cells``
    the cells of each group are shuffled by it too (a study page session's calls), else they keep the
    order ``cells`` gives (an agent run's agents on one task).
    """
    rng = random.Random(seed)
    plan: list[C] = []
    for repeat in range(repeats):
        order = list(groups)
        rng.shuffle(order)
        for group in order:
            chunk = cells(repeat, group)
            if shuffle_cells:
                rng.shuffle(chunk)
            plan.extend(chunk)
    return plan
