"""READ presence reads what a model reads: character references decoded, Markdown escapes undone, and a
derived answer (a count, a sum) never called present because its digits occur somewhere."""

from __future__ import annotations

import pytest

from capreplay.models.task import ReadTask
from capreplay.study.answers.representable import read_representable
from capreplay.study.answers.score import score_read
from capreplay.study.page.browser_use import IndexedDom
from capreplay.study.page.stagehand import Snapshot
from capreplay.study.page.views import PageViews
from capreplay.study.representations import REPRESENTATIONS

HTML = ("<html><body><p>Size: 77&nbsp;cm &times;&nbsp;53&nbsp;cm</p><p>Room 18, 8 beds</p><p>A&amp;B Ltd</p>"
        "</body></html>")


def _views() -> PageViews:
    empty = IndexedDom(text="", agent_default="", agent_would_truncate=False, agent_char_limit=1,
                       agent_viewport_threshold=None, selector_map={})  # fmt: skip
    return PageViews(url="https://x.test/", raw_html=HTML, markdown="Size: 77 cm × 53 cm\n\nA\\&B\\_Ltd", aria_ai="",
                     accessibility_tree='- paragraph: "Size: 77 cm × 53 cm"', screenshot_png=b"",
                     viewport_text="Size: 77 cm × 53 cm", indexed_dom=empty,
                     stagehand=Snapshot(formatted_tree="[0-1] paragraph: Size: 77 cm", xpath_map={}, url_map={}),
                     html_before_browser_use=HTML,
                     html_after_browser_use=HTML, timings_ms={})  # fmt: skip


def _task(answer: str, *, derived: bool = False) -> ReadTask:
    return ReadTask(id="t", page="p", kind="READ", question="?", answer=answer, derived=derived)


@pytest.mark.parametrize("name", ["raw_html", "markdown", "accessibility_tree"])
def test_an_answer_written_with_character_references_or_escapes_is_present(name: str) -> None:
    found = read_representable(REPRESENTATIONS[name], _views(), _task("77 cm × 53 cm"))
    assert found.representable is True, found


def test_an_ampersand_written_as_a_reference_or_an_escape_is_present() -> None:
    assert read_representable(REPRESENTATIONS["raw_html"], _views(), _task("A&B Ltd")).representable is True
    assert read_representable(REPRESENTATIONS["markdown"], _views(), _task("A&B_Ltd")).representable is True


def test_a_derived_answer_is_not_decided_by_substring() -> None:
    # "8" occurs in the page ("Room 18, 8 beds"), but a count the model must work out is not shown as such.
    raw = REPRESENTATIONS["raw_html"]
    assert read_representable(raw, _views(), _task("8")).representable is True
    derived = read_representable(raw, _views(), _task("8", derived=True))
    assert derived.representable is None and "derived" in derived.reason
    wrong = score_read("9", "8", (), derived)
    assert (wrong.correct, wrong.reason, wrong.representable) == (False, "wrong_answer", None)


def test_an_answer_not_on_the_page_is_absent() -> None:
    assert read_representable(REPRESENTATIONS["raw_html"], _views(), _task("78 cm × 53 cm")).representable is False
