"""Playwright selectors on an observation's DOM: each case's expected picks read off the markup by hand."""

from __future__ import annotations

import pytest
from bs4 import BeautifulSoup

from capreplay_browsergym.locate import inner_text, select_all

HTML = """
<table class="facts">
  <tr><th>Numeric code</th><td>356</td></tr>
  <tr><th>Numeric code (old)</th><td>999</td></tr>
  <tr><th>Currency</th><td>Indian  rupee</td></tr>
</table>
<div class="log"><a>commit</a> <a>commitdiff</a></div>
<div class="log"><a>commitdiff</a> <a>commit</a></div>
<ul><li>Alpha</li><li>Beta</li><li>Gamma</li></ul>
<article class="pod"><h3><a title="United States">US</a></h3><p>£4.50</p></article>
<article class="pod"><h3><a title="France">FR</a></h3><p>£4.10</p></article>
<ol id="links"><li><a>proc(5)</a> (3 links)</li><li><a>passwd(5)</a></li>
<li><a>group(5)</a><script>x()</script></li></ol>
<table id="zones"><tr><td class="in">zone1970.tab, zone.tab</td><td class="zone">Europe/Paris</td></tr>
<tr><td class="in">zone.tab</td><td class="zone">America/Creston</td></tr></table>
<dl><dt><code>ProxyFix</code>(<em>app</em>, <em>x_for</em>=<span>1</span>)</dt></dl>
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
        ('article.pod:has(h3 a[title="France"]) p', ["£4.10"]),  # a combinator inside :has(), as browsers take it
        ("article.pod:has(> h3 > a) h3 a", ["US", "FR"]),
        (r"#links a:text-matches('\\(5\\)$')", ["proc(5)", "passwd(5)", "group(5)"]),  # as the gold paths write it
        ("#links a:text-matches('^P', 'i')", ["proc(5)", "passwd(5)"]),
        ("#links a:text-matches('^p')", ["proc(5)", "passwd(5)"]),
        ("#links a:text-matches('^P')", []),
        ('#zones tr:has(td.in:text-is("zone.tab")) td.zone', ["America/Creston"]),  # exact inside :has() too
        ('#zones tr:has(td.in:has-text("ZONE.TAB")) td.zone', ["Europe/Paris", "America/Creston"]),
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


def test_inner_text_runs_inline_elements_on_and_sets_blocks_apart() -> None:
    soup = BeautifulSoup(HTML, "lxml")
    assert inner_text(soup.select_one("dt")) == "ProxyFix(app, x_for=1)"
    assert inner_text(soup.select_one("table.facts tr")) == "Numeric code 356"
    assert inner_text(soup.select_one("#links li:nth-of-type(3)")) == "group(5)"  # the script's source is not text
    assert inner_text(soup.select_one("#links")) == "proc(5) (3 links) passwd(5) group(5)"


def test_a_soup_looked_up_twice_keeps_each_text_pseudo_class_apart() -> None:
    soup = BeautifulSoup(HTML, "lxml")
    assert len(select_all(soup, 'th:text-is("Currency")')) == 1
    assert len(select_all(soup, 'th:text-is("Numeric code")')) == 1
    assert len(select_all(soup, 'th:has-text("Numeric")')) == 2
