"""The shop admin's category tree (django-treebeard's drag and drop): the plan's moves and the tasks' moves agree.

The tree's list is one URL (``/admin/catalogue/category/``) whose page after each move is served by count: the
replay gives a browser the list's recordings in capture order, one per load. So every task must make the plan's
moves in the plan's order, each one of the plan's first moves, and the moves must come after every other admin page
of the plan (they change the category filter of the product lists captured before them).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from capreplay.benchmark.recipes import RecipeFile
from capreplay.capture.plan_file import load_plan
from capreplay.models.capture_plan import Drag

BENCHMARK = Path(__file__).resolve().parents[2] / "benchmark"
TREE = "http://shop.bench.test/admin/catalogue/category/"
_NODE = re.compile(r'tr\[data-node-id="(\d+)"\] \.drag-handler$')


def _dragged(selectors: list[str]) -> list[int]:
    """The node ids of the rows whose drag handles the selectors name, in order."""
    found = [_NODE.search(selector) for selector in selectors]
    assert all(found), selectors
    return [int(match.group(1)) for match in found if match]


def _plan_moves() -> list[int]:
    pages = [page for page in load_plan(BENCHMARK / "plans" / "shopadmin.json").pages if page.url == TREE]
    assert len(pages) == 1
    return _dragged([action.selector for action in pages[0].actions if isinstance(action, Drag)])


def test_the_tree_is_the_last_page_of_the_admin_plan() -> None:
    assert load_plan(BENCHMARK / "plans" / "shopadmin.json").pages[-1].url == TREE


def test_the_plan_files_arctic_under_europe_then_no_time_zone_under_antarctica() -> None:
    assert _plan_moves() == [4, 10]  # Arctic (id 4, onto Europe), then No time zone (id 10, onto Antarctica)


def test_every_tree_task_makes_the_first_of_the_plans_moves_in_its_order() -> None:
    recipes = RecipeFile.model_validate(json.loads((BENCHMARK / "tasks" / "shop-admin-tree.json").read_text()))
    moves = {
        recipe.id: _dragged([s.selector for s in recipe.gold_path if isinstance(s, Drag)]) for recipe in recipes.tasks
    }
    assert moves == {
        "shop-admin-tree-northernmost-region": [4],
        "shop-admin-tree-two-moves": [4, 10],
        "shop-admin-tree-polar-regions": [4, 10],
    }
    assert all(found == _plan_moves()[: len(found)] for found in moves.values())
