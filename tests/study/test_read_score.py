"""READ scoring: normalisation rules, exact-match scoring with aliases, and answer presence."""

from __future__ import annotations

import string

import pytest
from hypothesis import example, given, settings, strategies as st

from capreplay.study.answers.read_score import answer_present, read_correct
from capreplay.util.answer_text import normalize_answer


@pytest.mark.parametrize(
    ("raw", "normal"),
    [
        # 1. NFKC: compatibility forms become their plain letters and digits.
        ("ＡＢＣ１２３", "abc123"),
        ("ﬁle", "file"),
        ("x²", "x2"),
        ("café", "café"),
        # 2. Markdown escapes: a backslash before ASCII punctuation goes.
        ("snake\\_case", "snake_case"),
        ("\\*bold\\*", "*bold*"),
        ("1\\. item", "1. item"),
        ("C:\\Users", "c:\\users"),
        ("a \\ b", "a \\ b"),
        # 3. Unicode dashes and the minus sign become "-".
        ("2019–2020", "2019-2020"),
        ("a—b―c", "a-b-c"),
        ("−5 °C", "-5 °c"),
        ("non‑breaking", "non-breaking"),
        ("ＡＢ－１", "ab-1"),
        # 4. Whitespace is trimmed and collapsed, whatever its kind.
        ("  New \t York \n City  ", "new york city"),
        ("12\u00a0500", "12 500"),
        ("a\u2003b", "a b"),
        # 5. One sentence-final period goes; an ellipsis or inner dot stays.
        ("Paris.", "paris"),
        ("Paris. ", "paris"),
        ("U.S.A.", "u.s.a"),
        ("v3.1", "v3.1"),
        ("Loading...", "loading..."),
        (".", ""),
        # 6. Casefold, stronger than lower().
        ("STRASSE", "strasse"),
        ("Straße", "strasse"),
        ("ΣΊΣΥΦΟΣ", "σίσυφοσ"),
        # Together.
        ("  **Total:** $1,299\\.00 —  Free\u00a0shipping. ", "**total:** $1,299.00 - free shipping"),
        ("", ""),
    ],
)
def test_normalize_rules(raw: str, normal: str) -> None:
    assert normalize_answer(raw) == normal


def test_normalize_edge_cases_stay_stable() -> None:
    # Where a literal reading of the rules would change its result on a second pass, the result is
    # already the fixed point.
    assert normalize_answer("\\—") == "-"
    assert normalize_answer("\\\\*") == "*"
    assert normalize_answer("end. .") == "end"
    # Casefolding "ß" gives "ss", and the acute then composes with the second "s".
    assert normalize_answer("ß\u0301") == "s\u015b"


# Characters that interact with the rules: escapes, dots, every kind of space and dash, letters whose
# casefold or NFKC form differs, and combining marks that compose with them.
_TRICKY = st.sampled_from([*"\\. \t\n\u00a0\u2003-—–−－*_#=aZ1ßẞİıǰΣςﬁÅ\u0301\u0307\u0345\u0338", ".."])
_TEXT = st.one_of(
    st.text(),
    st.lists(_TRICKY, max_size=12).map("".join),
    st.lists(st.one_of(_TRICKY, st.text(max_size=3))).map("".join),
)


@settings(max_examples=500, deadline=None)
@given(_TEXT)
@example("\\\\*")
@example("a.. .")
@example("\\—x")
@example("Aß\u0301")
def test_normalize_is_idempotent(text: str) -> None:
    once = normalize_answer(text)
    assert normalize_answer(once) == once


@settings(max_examples=300, deadline=None)
@given(_TEXT)
def test_normal_form_shape(text: str) -> None:
    normal = normalize_answer(text)
    assert normal == normal.strip()
    assert "  " not in normal
    assert not any(c in normal for c in "\t\n\u00a0—–−")
    assert not (normal.endswith(".") and not normal.endswith(".."))


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=string.ascii_letters + string.digits + " ,'&", min_size=1))
def test_case_spacing_and_final_period_do_not_matter(gold: str) -> None:
    if not normalize_answer(gold):
        return
    assert read_correct(f"  {gold.swapcase()}. ", gold)
    assert read_correct(" ".join(gold.split()), gold)


def test_read_correct_with_aliases() -> None:
    gold, aliases = "United States", ["USA", "U.S.A.", "the United States"]
    assert read_correct("united states", gold, aliases)
    assert read_correct("U.S.A.", gold, aliases)
    assert read_correct("usa", gold, aliases)
    assert read_correct("The United States.", gold, aliases)
    assert not read_correct("America", gold, aliases)
    assert not read_correct("United States of America", gold, aliases)


def test_read_correct_is_exact_not_substring() -> None:
    assert read_correct("$1,299.00", "$1,299.00")
    assert not read_correct("$1,299", "$1,299.00")
    assert not read_correct("1299.00", "$1,299.00")
    assert not read_correct("42 items", "42")


def test_read_correct_accepts_markdown_escaped_and_dashed_answers() -> None:
    assert read_correct("order\\_id", "order_id")
    assert read_correct("2019 – 2020", "2019 - 2020")
    assert read_correct("３", "3")


def test_empty_answer_is_never_correct() -> None:
    assert not read_correct("", "")
    assert not read_correct("  .  ", ".")
    assert not read_correct("", "Paris", ["", " "])


def test_aliases_can_be_any_iterable() -> None:
    assert read_correct("NYC", "New York City", (a for a in ["NYC", "New York"]))
    assert read_correct("new york", "New York City", {"New York"})


def test_answer_present_in_markdown() -> None:
    markdown = "# Orders\n\n| order\\_id | total |\n|---|---|\n| A\\-17 | $1,299\\.00 |\n\nShipped 2019–2020.\n"
    assert answer_present(markdown, "order_id")
    assert answer_present(markdown, "$1,299.00")
    assert answer_present(markdown, "A-17")
    assert answer_present(markdown, "2019-2020")
    assert answer_present(markdown, "SHIPPED 2019\u20132020")
    assert not answer_present(markdown, "$1,300.00")


def test_answer_present_across_lines_and_by_alias() -> None:
    aria = '- heading "Acme   Widget\nPro" [level=1]\n- text: In stock'
    assert answer_present(aria, "Acme Widget Pro")
    assert answer_present(aria, "Widget Deluxe", ["in stock"])
    assert not answer_present(aria, "Widget Deluxe", ["out of stock"])


def test_answer_present_is_only_a_substring_check() -> None:
    # A derived answer such as a count is "present" wherever its digits appear: a known limit.
    assert answer_present("Showing 16 of 160 results", "6")
    assert not answer_present("anything at all", "", [" ", "."])


@settings(max_examples=300, deadline=None)
@given(st.text(), st.text(), st.text())
def test_an_answer_written_in_the_page_is_present(before: str, gold: str, after: str) -> None:
    if not normalize_answer(gold):
        return
    assert answer_present(f"{before} {gold} {after}", gold)
