"""The man pages' conversion to wiki pages, on lines copied from Debian's manpages 6.03-2."""

from __future__ import annotations

from datetime import UTC, date, datetime
from xml.etree import ElementTree

import pytest

from capreplay.benchmark import manwiki

SIGNAL_SEE_ALSO = "'''kill'''(1), '''clone'''(2), '''core'''(5), '''proc'''(5), '''nptl'''(7), '''pthreads'''(7)"
"""The end of signal(7)'s SEE ALSO as pandoc writes it."""


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ('.TH signal 7 2023-02-05 "Linux man-pages 6.03"', date(2023, 2, 5)),
        ('.TH "BPF-HELPERS" 7 "2022-09-26" "Linux v6.1"', date(2022, 9, 26)),
        ('.TH tzfile 5 2022-09-09 Linux "Linux Programmer\'s Manual"', date(2022, 9, 9)),
    ],
)
def test_page_date_is_the_th_line_date(line: str, expected: date) -> None:
    assert manwiki.page_date(f'.\\" comment\n{line}\n.SH NAME\n') == expected


def test_page_without_th_line_is_refused() -> None:
    with pytest.raises(ValueError):
        manwiki.page_date(".SH NAME\nfoo \\- bar\n")


def test_tables_lose_rules_spans_and_point_sizes_but_not_their_data() -> None:
    ascii_table = ".TS\nl l l l | l l l l.\nOct\tDec\tHex\tChar\n074\t60\t3C\t<\t174\t124\t7C\t|\n.TE"
    assert manwiki.prepare_tables(ascii_table) == (
        ".TS\nl l l l   l l l l.\nOct\tDec\tHex\tChar\n074\t60\t3C\t<\t174\t124\t7C\t|\n.TE"
    )
    latin1 = ".TS\nl l l c lp-1.\nOct\tDec\tHex\tChar\tDescription\n_\n.TE"
    assert manwiki.prepare_tables(latin1) == ".TS\nl l l c l.\nOct\tDec\tHex\tChar\tDescription\n_\n.TE"
    netdevice = ".TS\ntab(:);\nc s\nl l.\nDevice flags\nIFF_UP:Interface is running.\n.TE"
    assert manwiki.prepare_tables(netdevice) == (
        ".TS\ntab(:);\nc l\nl l.\nDevice flags\nIFF_UP:Interface is running.\n.TE"
    )


def test_references_to_existing_pages_become_links() -> None:
    titles = {"core(5)", "proc(5)", "nptl(7)", "pthreads(7)", "signal(7)"}
    assert manwiki.link_references(SIGNAL_SEE_ALSO, titles) == (
        "'''kill'''(1), '''clone'''(2), [[core(5)|'''core'''(5)]], [[proc(5)|'''proc'''(5)]], "
        "[[nptl(7)|'''nptl'''(7)]], [[pthreads(7)|'''pthreads'''(7)]]"
    )


def test_summary_is_the_name_line() -> None:
    text = "== NAME ==\n\nsignal - overview of signals\n\n== DESCRIPTION ==\n\nLinux supports both"
    assert manwiki.summary(text) == "signal - overview of signals"


def test_article_has_category_table_class_and_display_title_for_underscores() -> None:
    page = manwiki.ManPage(name="feature_test_macros", section=7, roff="")
    text = manwiki.article(page, "== NAME ==\n\nfeature_test_macros - feature test macros\n\n{|\n| a\n|}\n", [])
    assert text == (
        "{{DISPLAYTITLE:feature_test_macros(7)}}\n== NAME ==\n\nfeature_test_macros - feature test macros\n\n"
        '{| class="wikitable"\n| a\n|}\n\n[[Category:Section 7: Overviews]]\n'
    )


def test_export_has_one_dated_revision_per_page_in_its_namespace() -> None:
    when = datetime(2023, 2, 5, tzinfo=UTC)
    pages = [
        manwiki.WikiPage("signal(7)", "SIGINT & SIGKILL <b>", when, "Imported"),
        manwiki.WikiPage("Category:Section 7: Overviews", "Section 7", when, "Section page"),
        manwiki.WikiPage("MediaWiki:Sidebar", "* navigation", when, "Site interface"),
    ]
    root = ElementTree.fromstring(manwiki.export_xml(pages))
    ns = {"mw": "http://www.mediawiki.org/xml/export-0.11/"}
    found = [(p.findtext("mw:title", namespaces=ns), p.findtext("mw:ns", namespaces=ns),
              p.findtext("mw:revision/mw:timestamp", namespaces=ns), p.findtext("mw:revision/mw:text", namespaces=ns))
             for p in root.findall("mw:page", ns)]  # fmt: skip
    assert found == [
        ("signal(7)", "0", "2023-02-05T00:00:00Z", "SIGINT & SIGKILL <b>"),
        ("Category:Section 7: Overviews", "14", "2023-02-05T00:00:00Z", "Section 7"),
        ("MediaWiki:Sidebar", "8", "2023-02-05T00:00:00Z", "* navigation"),
    ]
