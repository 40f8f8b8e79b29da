"""What a study run keeps for the viewer to draw: each page session's screenshot (the very image the model was
sent) and, per ACT call, the target's box, the click point or the box of the element the answer resolved to, in
the screenshot's layout. A real run (tests/support/view_study.py): the committed study snapshot replayed to
Chromium and browser-use, the real SDK over HTTP to the fake model API, answers scored on the live page.

Expected boxes come from the tasks file's measured records (taken in page loads of their own, through
Playwright rather than the scorer's CDP) and from the screenshot's own pixels.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path

import pytest
from PIL import Image

from capreplay.models.geometry import Box
from capreplay.models.task import ActTask, TargetRecord
from capreplay.study.records import RunRecord
from capreplay.study.run_files import CALLS_FILE, read_records
from capreplay.testing.fake_llm import Received
from tests.support.paths import ROOT
from tests.support.study_run import WRONG_ACT
from tests.support.view_study import CALLS, CHOICES, PAGES, RUN_ID, make_study_run

pytestmark = pytest.mark.browser

MEASURED: dict[str, TargetRecord] = {}
for _task in json.loads((ROOT / "tasks.json").read_text())["study"]["tasks"]:
    if _task["kind"] == "ACT" and _task["page"] in PAGES:
        _act = ActTask.model_validate(_task)
        assert _act.measured is not None
        MEASURED[_act.id] = _act.measured


def _next(task: str) -> str:
    same = sorted(t for t in MEASURED if t.split(".")[0] == task.split(".")[0])
    return same[(same.index(task) + 1) % len(same)]


NEXT = {task: _next(task) for task in MEASURED}
"""The page's next ACT task, whose perfect answer an ``other`` cell gets."""


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, list[RunRecord], list[Received]]]:
    received: list[Received] = []
    results = make_study_run(tmp_path_factory.mktemp("view-study"), received)
    run = results / "runs" / RUN_ID
    yield run, read_records(run / CALLS_FILE).records, received


def close(found: Box | None, measured: Box | None, slack: float) -> bool:
    """The same box to within ``slack`` pixels on each edge."""
    assert found is not None and measured is not None
    pairs = zip(found.model_dump().values(), measured.model_dump().values(), strict=True)
    return all(abs(a - b) <= slack for a, b in pairs)


def test_the_screenshot_kept_is_the_image_the_model_was_sent(
    made: tuple[Path, list[RunRecord], list[Received]],
) -> None:
    run, records, received = made
    assert len(records) == CALLS
    sent = [r.images[0] for r in received if r.api == "messages" and r.images]
    assert len(sent) == CALLS // 3  # one representation of three is the screenshot
    kept = {r.verdict.screenshot for r in records if r.verdict}
    assert len(kept) == len(PAGES) and all(r.verdict and r.verdict.screenshot for r in records)
    # Each page session's file holds the bytes the model got for every screenshot call of that page.
    assert {(run / name).read_bytes() for name in kept if name} == set(sent)
    for record in records:
        assert record.verdict is not None and record.verdict.screenshot is not None
        assert record.verdict.screenshot.startswith("screenshots/")


def test_act_geometry_is_the_measured_one_in_the_screenshots_layout(
    made: tuple[Path, list[RunRecord], list[Received]],
) -> None:
    _, records, _ = made
    for record in records:
        v, cell = record.verdict, record.cell
        assert v is not None
        if cell.task not in MEASURED:
            assert v.geometry is None, cell.key()  # READ
            continue
        g, measured = v.geometry, MEASURED[cell.task]
        assert g is not None and g.layout == measured.layout, cell.key()
        # In the top document the scorer's box is the measured one exactly; behind a cross-site iframe the
        # measuring step's Playwright box leaves out the iframe's 1 px border (see the pixel test below).
        assert close(g.target_box, measured.box, 0 if measured.in_top_document else 1), cell.key()
        choice = CHOICES.get((cell.task, cell.representation), "perfect")
        aimed = MEASURED[NEXT[cell.task]] if choice == "other" else measured
        if cell.representation == "screenshot":
            assert g.resolved_box is None
            assert g.point == ((1279.0, 799.0) if choice == "nothing" else aimed.click), cell.key()
            continue
        assert g.point is None
        if choice in ("nothing", "unparseable"):
            assert g.resolved_box is None, cell.key()
        elif v.representable:  # a guess at a target the representation does not carry may name anything
            assert close(g.resolved_box, aimed.box, 0 if aimed.in_top_document else 1), cell.key()
            assert (g.resolved_box == g.target_box) == v.correct, cell.key()


def test_an_element_in_a_cross_site_iframe_is_placed_on_the_screenshots_pixels(
    made: tuple[Path, list[RunRecord], list[Received]],
) -> None:
    run, records, _ = made
    assert CHOICES["embed.act.1", "indexed_dom"] == "other" and NEXT["embed.act.1"] == "embed.act.2"
    record = next(r for r in records if (r.cell.task, r.cell.representation) == ("embed.act.1", "indexed_dom"))
    assert record.verdict is not None and record.verdict.reason == "wrong_element"
    g = record.verdict.geometry
    assert g is not None and g.resolved_box is not None and record.verdict.screenshot is not None
    box = g.resolved_box
    image = Image.open(run / record.verdict.screenshot).convert("RGB")
    left, top = math.floor(box.x), math.floor(box.y)
    middle = int(box.y + box.height / 2)
    fill = image.getpixel((left + 2, middle))  # the button's own colour, in its padding left of the label
    # The button fills its box: its colour starts at the box's first pixel column and row, not one before (the
    # left edge at mid-height; the top edge a few pixels in, clear of a rounded corner).
    assert image.getpixel((left, middle)) == fill and image.getpixel((left - 1, middle)) != fill
    assert image.getpixel((left + 8, top)) == fill and image.getpixel((left + 8, top - 1)) != fill


def test_an_answer_that_names_nothing_places_nothing(made: tuple[Path, list[RunRecord], list[Received]]) -> None:
    _, records, _ = made
    missing = next(r for r in records if (r.cell.task, r.cell.representation) == ("login.act.1", "indexed_dom"))
    assert missing.answer == WRONG_ACT["indexed_dom"]
    assert missing.verdict is not None and missing.verdict.reason == "not_found"
    assert missing.verdict.geometry is not None and missing.verdict.geometry.resolved_box is None
