"""``capreplay view`` in a real Chromium: every page of a gold run, a judged run with one failing leaf, a study
run and its calls, the offline study, a review sheet and the world snapshot renders with no console error and
no failed request, its links lead where they say, its images load; the static export opens from ``file://``
the same."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, sync_playwright

from capreplay.browser.launch import find_chromium
from capreplay.tasks.graph import SiteGraph
from tests.support.cli import cli
from tests.support.crawl_view import Walk, walk
from tests.support.paths import ROOT
from tests.support.signals import default_sigint
from tests.support.view_results import GOLD_TASKS, WRONG_PRICE, WRONG_TASK, make_view_results

pytestmark = [pytest.mark.browser, pytest.mark.slow]

WIDTH = 1280


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The results folder every test here looks at (made once: a minute of gold episodes)."""
    return make_view_results(tmp_path_factory.mktemp("view"))


@pytest.fixture(scope="module")
def served(results: Path) -> Iterator[str]:
    """``capreplay view RESULTS`` running; its first line is the front page's URL."""
    proc = subprocess.Popen([sys.executable, "-m", "capreplay", "view", str(results)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, preexec_fn=default_sigint)  # fmt: skip
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:"), (url, proc.stderr.read() if proc.poll() is not None else "")
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@pytest.fixture(scope="module")
def browser(results: Path) -> Iterator[Browser]:
    """Chromium under Playwright's sync API, started after ``results`` is made: the sync API runs an event loop
    in this thread, and making the study run needs one of its own."""
    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=find_chromium())
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": WIDTH, "height": 900})
    try:
        yield context.new_page()
    finally:
        context.close()


@pytest.fixture(scope="module")
def served_walk(browser: Browser, served: str) -> Walk:
    context = browser.new_context(viewport={"width": WIDTH, "height": 900})
    try:
        return walk(context.new_page(), served + "index.html")
    finally:
        context.close()


def _kinds(pages: list[str]) -> dict[str, int]:
    """How many pages of each kind, by their path under the viewer's root (``runs/gold/index.html``: a run)."""
    root = pages[0].rsplit("/", 1)[0] + "/"
    counts: dict[str, int] = {}
    for url in pages:
        parts = url.removeprefix(root).split("/")
        kind = parts[0] if len(parts) > 1 else "front"
        if kind == "runs" and len(parts) > 3:
            kind = "episode"
        counts[kind] = counts.get(kind, 0) + 1
    return counts


def test_every_served_page_renders_cleanly_and_every_link_leads_somewhere(served_walk: Walk) -> None:
    assert served_walk.problems == []
    kinds = _kinds(served_walk.pages)
    # Two runs of two episodes each, their run pages, the world snapshot, the offline study, the front page.
    assert kinds.get("episode") == 2 * len(GOLD_TASKS), kinds
    assert kinds.get("runs") == 2 and kinds.get("snapshots") == 1 and kinds.get("offline") == 1, kinds
    assert kinds.get("sheets") == 1, kinds
    # The study run's page and one page per call: 2 pages x 8 tasks x 3 representations.
    assert kinds.get("studies") == 1 + 48, kinds
    shots = [f for f in served_walk.files if f.endswith(".png")]
    assert len(shots) > 2 * len(GOLD_TASKS), "step screenshots and capture screenshots are linked"


def test_the_failing_leaf_is_shown_failing_with_its_evidence(page: Page, served: str, results: Path) -> None:
    page.goto(served + "index.html")
    page.get_by_role("link", name="wrong", exact=True).click()
    page.get_by_role("link", name=f"gold/0/{WRONG_TASK}").click()
    failed = page.locator("li.leaf.failed")
    assert failed.count() >= 1
    texts = failed.all_inner_texts()
    assert any(WRONG_PRICE in t for t in texts), texts
    assert all("failed" in t for t in texts)
    # Evidence: the cited URL, its WARC record and digest, for a leaf that reads a page.
    evidence = page.locator("li.leaf .evidence")
    assert evidence.count() >= 1
    assert "urn:uuid:" in evidence.first.inner_text() and "sha256:" in evidence.first.inner_text()
    # Every leaf the changed price does not touch still passes: the gold run's leaves are the same set.
    gold = next(v for line in (results / "runs" / "gold" / "verdicts.jsonl").read_text().splitlines()
                if (v := json.loads(line))["task"] == WRONG_TASK)  # fmt: skip
    assert page.locator("li.leaf").count() == len(gold["leaves"])
    # The gold run of the same task fails no leaf.
    page.goto(served + "runs/gold/gold/0/budget-tent.html")
    assert page.locator("li.leaf.failed").count() == 0
    assert page.locator("li.leaf").count() == len(gold["leaves"])


def test_an_episode_shows_each_step_with_its_screenshot_and_requests(page: Page, served: str, results: Path) -> None:
    record = next(json.loads(line) for line in (results / "runs" / "gold" / "episodes.jsonl").read_text().splitlines()
                  if json.loads(line)["key"]["task"] == "rain-tent")  # fmt: skip
    page.goto(served + "runs/gold/gold/0/rain-tent.html")
    steps = page.locator("ol.timeline > li.step")
    # The start page's load, then one item per recorded step.
    assert steps.count() == len(record["steps"]) + 1
    assert page.locator("ol.timeline img.shot").count() == len(record["steps"])
    first = record["steps"][0]
    assert first["action"] in steps.nth(1).inner_text()
    assert first["url"] in steps.nth(1).inner_text()
    assert page.locator("table.requests tbody tr").count() == len(record["requests"])
    # Every request is accounted to the start page or a step, in the record and on the page.
    assert all(r["step"] is not None for r in record["requests"])


def test_the_snapshot_page_draws_the_crawl_graph_and_the_last_verify_report(page: Page, served: str) -> None:
    graph = SiteGraph.model_validate_json((ROOT / "snapshots" / "world" / "graph.json").read_bytes())
    page.goto(served + "index.html")
    page.locator("table").filter(has_text="snapshots/world").get_by_role("link").first.click()
    assert page.locator("svg.graph rect").count() == len(graph.pages)
    assert "Verified" in page.locator("main").inner_text()
    assert "https://www.fellgear.test/" in page.locator("main").inner_text()


def test_the_static_export_opens_from_disk_the_same(browser: Browser, results: Path, served_walk: Walk,
                                                    tmp_path: Path) -> None:  # fmt: skip
    out = tmp_path / "export"
    done = cli("view", str(results), "--export", str(out))
    assert done.returncode == 0, done.stderr
    context = browser.new_context(viewport={"width": WIDTH, "height": 900})
    try:
        seen = walk(context.new_page(), (out / "index.html").as_uri())
    finally:
        context.close()
    assert seen.problems == []
    assert _kinds(seen.pages) == _kinds(served_walk.pages)
    assert len(seen.files) == len(served_walk.files)


def test_a_decision_made_in_the_page_is_written_to_the_sheet(page: Page, served: str, results: Path) -> None:
    sheet = results / "wf-view" / "review.md"
    page.goto(served + "index.html")
    page.get_by_role("link", name="review.md").click()
    form = page.locator(f"form.decide[data-task='{GOLD_TASKS[0]}']")
    form.locator("input[name=verdict][value=accept]").check()
    form.locator("input[name=reviewer]").fill("Ada Reviewer")
    form.locator("button[type=submit]").click()
    form.locator(".decide-message.saved").wait_for()
    text = sheet.read_text()
    section = text.split(f": {GOLD_TASKS[0]}", 1)[1].split("## Task", 1)[0]
    assert "- [x] accept" in section and "- [ ] reject" in section
    assert "Reviewer: Ada Reviewer" in text
    # The sheet is read back as `capreplay tasks accept` reads it: one accepted task, nothing else decided.
    done = cli("tasks", "accept", str(sheet), "--into", str(results / "accepted.json"))
    assert done.returncode == 0, done.stderr
    accepted = json.loads((results / "accepted.json").read_text())["workflows"]["tasks"]
    assert [t["id"] for t in accepted] == [GOLD_TASKS[0]]


def test_an_act_call_on_the_screenshot_shows_the_click_and_the_target_box(page: Page, served: str,
                                                                          results: Path) -> None:  # fmt: skip
    task = next(t for t in json.loads((ROOT / "tasks.json").read_text())["study"]["tasks"] if t["id"] == "login.act.2")
    box = task["measured"]["box"]
    call = next(c for line in (results / "runs" / "view-study" / "calls.jsonl").read_text().splitlines()
                if (c := json.loads(line))["cell"]["task"] == "login.act.2"
                and c["cell"]["representation"] == "screenshot")  # fmt: skip
    page.goto(served + "studies/view-study/index.html")
    page.locator("a[href='calls/0/login.act.2/screenshot.html']").first.click()
    # Drawn over the very screenshot the model was sent (1280 x 800 at scale 1, unscrolled): the target's box as
    # measured in tasks.json, and the click the model's reply named.
    overlay = page.locator("svg.act-overlay")
    assert page.locator("img").first.evaluate("i => [i.naturalWidth, i.naturalHeight]") == [1280, 800]
    target = overlay.locator("rect").first
    assert [float(target.get_attribute(a) or "nan") for a in ("x", "y", "width", "height")] == pytest.approx(
        [box["x"], box["y"], box["width"], box["height"]], abs=0.06)
    click = overlay.locator("circle")
    assert [float(click.get_attribute(a) or "nan") for a in ("cx", "cy")] == pytest.approx(
        [call["answer"]["x"], call["answer"]["y"]], abs=0.06)
