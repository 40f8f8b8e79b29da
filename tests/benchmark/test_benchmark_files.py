"""The benchmark folder is whole: one capture plan per application or part, each only on its application's host,
and a registration of the committed tasks and snapshot."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from capreplay.benchmark.application import HOST_SUFFIX
from capreplay.benchmark.roster import BUILDERS, application, part_application, part_names
from capreplay.capture.plan_file import load_plan

BENCHMARK = Path(__file__).resolve().parents[2] / "benchmark"


def test_every_application_and_part_has_a_plan_and_every_plan_one() -> None:
    assert sorted(p.stem for p in (BENCHMARK / "plans").glob("*.json")) == sorted(part_names())


@pytest.mark.parametrize("name", sorted(part_names()))
def test_a_plan_captures_its_own_application_only(name: str) -> None:
    plan = load_plan(BENCHMARK / "plans" / f"{name}.json")
    urls = [page.url for page in plan.pages] + (plan.crawl.seeds if plan.crawl else [])
    assert urls, name
    assert {urlsplit(url).hostname for url in urls} == {part_application(name).host}
    assert part_application(name).host.endswith(HOST_SUFFIX)
    assert all(url.startswith("http://") for url in urls)  # the applications are served on plain http


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_an_application_says_what_it_is_and_where_it_comes_from(name: str) -> None:
    app = application(name)
    assert app.name == name and app.host == f"{name}.bench.test"
    for text in (app.title, app.kind, app.version, app.source, app.licence, app.data):
        assert text.strip(), name
    assert any(registry in app.source for registry in ("Debian", "PyPI", "npm")), app.source


def test_the_committed_registration_names_the_committed_tasks_and_snapshot() -> None:
    """``run --registration benchmark-v1`` refuses changed inputs: the committed tasks file and snapshot must be
    the ones it registered (its code digest changes with every commit to the source and is made again there)."""
    registration = json.loads((BENCHMARK / "registrations" / "benchmark-v1.json").read_text())
    inputs = registration["inputs"]
    assert registration["tasks_file"] == "benchmark/tasks.json"
    assert inputs["tasks_sha256"] == hashlib.sha256((BENCHMARK / "tasks.json").read_bytes()).hexdigest()
    manifest = (BENCHMARK / "snapshot" / "manifest.json").read_bytes()
    assert inputs["snapshots"]["benchmark"]["manifest_sha256"] == hashlib.sha256(manifest).hexdigest()


def test_the_shops_admin_part_stays_in_the_admin() -> None:
    """The admin part is joined after the shop's part on the same host, and the replay serves a URL's recordings in
    capture order over the server's life: no admin page may be a URL of the shop's part."""
    plan = load_plan(BENCHMARK / "plans" / "shopadmin.json")
    assert all(urlsplit(page.url).path.startswith("/admin/") for page in plan.pages)
    shop = {page.url for page in load_plan(BENCHMARK / "plans" / "shop.json").pages}
    assert not shop & {page.url for page in plan.pages}
