"""Playwright selectors on an observation's DOM: each case's expected picks read off the markup by hand."""

from __future__ import annotations

import pytest
from bs4 import BeautifulSoup

from capreplay_browsergym.locate import select_all

HTML = """
<table class="facts">
  <tr><th>Numeric code</th><td>356</td></tr>
  <tr><th>Numeric code (old)</th><td>999</td></tr>
  <tr><th>Currency</th><td>Indian  rupee</td></tr>
</table>
<div class="log"><a>commit</a> <a>commitdiff</a></div>
<div class="log"><a>commitdiff</a> <a>commit</a></div>
<ul><li>Alpha</li><li>Beta</li><li>Gamma</li></ul>
"""


@pytest.mark.parametrize(
    ("selector", "texts"),
    [
        ('table.facts tr:has(th:text-is("Currency")) td', ["Indian rupee"]),
        ('th:text-is("Numeric code")', ["Numeric code"]),
        ('th:has-text("Numeric code")', ["Numeric code", "Numeric code (old)"]),
        ('div.log >> nth=1 >> a:text-is("commit")', ["commit"]),
        ('div.log a:text-is("commit")', ["commit", "commit"]),
        ("ul li >> nth=-1", ["Gamma"]),
        ("ul li >> nth=3", []),
        ("ul li >> visible=true", ["Alpha", "Beta", "Gamma"]),
        ('a:text-is("commitdiff") >> nth=0', ["commitdiff"]),
    ],
)
def test_select_all(selector: str, texts: list[str]) -> None:
    soup = BeautifulSoup(HTML, "lxml")
    assert [" ".join(e.get_text(" ").split()) for e in select_all(soup, selector)] == texts


def test_chained_nth_picks_the_element_in_its_scope() -> None:
    soup = BeautifulSoup(HTML, "lxml")
    second_log = select_all(soup, "div.log >> nth=1")[0]
    (commit,) = select_all(soup, 'div.log >> nth=1 >> a:text-is("commit")')
    assert commit.parent is second_log and commit.find_previous_sibling("a") is not None
