"""A small valid workflow task on the committed fixture snapshot, and a tasks file holding such tasks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.support.paths import ROOT

FIXTURES = ROOT / "snapshots" / "fixtures"
HOME = "https://www.shop.test/"


def sample_task(task_id: str, gold_path: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "id": task_id,
        "description": "I want the name of the shop's first product and the page I found it on.",
        "sites": ["www.shop.test", "static.cdn.test"],
        "flow": "sequential",
        "start_url": HOME,
        "covered_points": [
            {"id": "p1", "type": "perception", "code": "PT18", "site": "www.shop.test", "description": "read a card"}
        ],
        "outputs": [
            {"name": "product", "type": "text", "role": "user_value", "description": "the first product's name"},
            {"name": "product_url", "type": "url", "role": "provenance_url", "description": "where it was read"},
        ],
        "rubric": {
            "id": "root",
            "description": "the product is named",
            "children": [
                {
                    "id": "named",
                    "description": "the product",
                    "critical": True,
                    "kind": "perception",
                    "point": "p1",
                    "check": {"check": "claim_on_page", "field": "product", "url_field": "product_url"},
                },
                {
                    "id": "cited",
                    "description": "the page is archived",
                    "kind": "other",
                    "check": {"check": "url_in_snapshot", "field": "product_url"},
                },
            ],
        },
        "gold_path": gold_path,
    }


GOOD_PATH = [
    {"type": "click", "selector": "a[href='/lazy']"},
    {"type": "goto", "url": HOME},
    {"type": "read", "output": "product", "selector": "#products .product h3"},
    {"type": "read", "output": "product_url", "source": "url"},
]


def write_tasks(folder: Path, tasks: list[dict[str, Any]], repeats: int = 1) -> Path:
    """A tasks file whose workflows run on the fixture snapshot."""
    doc = {
        "schema_version": 1,
        "snapshots": {"fixtures": str(FIXTURES)},
        "workflows": {
            "snapshot": "fixtures",
            "judge": {"model": {"model": "claude-test", "max_tokens": 1000}},
            "repeats": repeats,
            "seed": 7,
            "step_limit": 10,
            "episode_timeout_s": 120,
            "tasks": tasks,
        },
    }
    path = folder / "tasks.json"
    path.write_text(json.dumps(doc, indent=1))
    return path
