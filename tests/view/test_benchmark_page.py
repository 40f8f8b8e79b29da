"""The viewer's benchmark page: every application with its capture, the tasks, and their coverage of CAP."""

from __future__ import annotations

import json
from pathlib import Path

from capreplay.benchmark.recipes import Recipe, expand
from capreplay.benchmark.roster import names
from capreplay.view.assemble import ViewInputs, assemble
from capreplay.view.benchmark_page import coverage

SNAPSHOTS = Path(__file__).resolve().parents[2] / "snapshots"
SHOP = "https://www.shop.test/"


def _recipe(task_id: str, sites: list[str], flow: str, codes: list[tuple[str, str]]) -> Recipe:
    kinds = {"AT": "action", "PT": "perception"}
    return Recipe.model_validate({
        "id": task_id, "description": "I want the shop's first product.", "sites": sites, "flow": flow,
        "start_url": SHOP,
        "covered_points": [{"id": f"p{n}", "type": kinds[code[:2]], "code": code, "site": site,
                            "description": "a point"} for n, (code, site) in enumerate(codes)],
        "answers": [{"name": f"a{n}", "type": "text", "description": "a value", "value": "x", "point": f"p{n}"}
                    for n in range(len(codes)) if codes[n][0].startswith("PT")] or
                   [{"name": "a", "type": "text", "description": "a value", "value": "x"}],
        "links": [{"name": f"l{n}", "description": "a page", "value": SHOP, "pattern": "shop", "point": f"p{n}"}
                  for n in range(len(codes)) if codes[n][0].startswith("AT")],
        "gold_path": [{"type": "read", "output": name, "selector": "h1"} for name in
                      ([f"a{n}" for n in range(len(codes)) if codes[n][0].startswith("PT")] or ["a"])]
                     + [{"type": "read", "output": f"l{n}", "source": "url"} for n in range(len(codes))
                        if codes[n][0].startswith("AT")],
        "provenance": "Written by hand for this test.",
    })  # fmt: skip


TASKS = [
    expand(_recipe("one", ["www.shop.test", "api.data.test"], "sequential",
                   [("AT33", "www.shop.test"), ("PT18", "api.data.test")])),
    expand(_recipe("two", ["www.shop.test"], "multi_hop", [("PT18", "www.shop.test"), ("PT01", "www.shop.test")])),
]  # fmt: skip


def test_coverage_counts_flows_sites_and_codes() -> None:
    found = coverage(TASKS, ["AT01", "AT33", "AT40"], ["PT01", "PT18", "PT22"])
    assert (found.tasks, found.cross_site) == (2, 1)
    assert found.by_flow == {"multi_hop": 1, "sequential": 1}
    assert found.by_sites == {1: 1, 2: 1}
    assert (found.actions, found.missing_actions) == (["AT33"], ["AT01", "AT40"])
    assert (found.perceptions, found.missing_perceptions) == (["PT01", "PT18"], ["PT22"])


def test_the_page_lists_every_application_the_tasks_and_the_coverage(tmp_path: Path) -> None:
    folder = tmp_path / "bench"
    folder.mkdir()
    (folder / "snapshot").symlink_to(SNAPSHOTS / "fixtures", target_is_directory=True)
    (folder / "tasks.json").write_text(json.dumps({
        "schema_version": 1, "snapshots": {"benchmark": "snapshot"},
        "workflows": {"snapshot": "benchmark", "judge": {"model": {"model": "m", "max_tokens": 10}},
                      "tasks": [t.model_dump(mode="json") for t in TASKS]}}))  # fmt: skip
    site = assemble(ViewInputs(tmp_path, benchmarks=[folder]))
    entry = site.get("benchmark/index.html")
    assert entry is not None
    html = entry.body().decode()
    for name in names():
        assert f"<b>{name}</b>" in html
    assert html.count("not in the snapshot") == len(names())  # the fixture snapshot holds no application
    assert "2, 1 of them spanning two sites or more" in html
    assert "1 of 64: <span" in html and "2 of 56: <span" in html
    assert ">one</td>" in html and ">two</td>" in html
    front = site.get("index.html")
    assert front is not None and "Benchmarks (1)" in front.body().decode()


def test_a_benchmark_folder_without_tasks_is_listed_as_unreadable(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    front = assemble(ViewInputs(tmp_path, benchmarks=[tmp_path / "empty"])).get("index.html")
    assert front is not None
    text = front.body().decode()
    assert "Benchmarks (1)" in text and "unreadable" in text and "tasks.json" in text
