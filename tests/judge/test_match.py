"""Finding a claimed number or text in the texts of a cited page, with evidence and a snippet."""

from __future__ import annotations

import json

import pytest

from capreplay.judge.claims import SNIPPET_MAX, SNIPPET_RADIUS, Source, find_number, find_text, numbers_in
from capreplay.util.answer_text import normalize_answer

FILLER = "lorem ipsum dolor sit amet " * 8  # 216 characters, so snippets are cut on both sides

PAGE = Source(
    url="https://shop.example/item/7",
    record_id="<urn:uuid:00000000-0000-4000-8000-000000000007>",
    payload_digest="sha256:aaaa",
    text=f"{FILLER}\n  Laptop   Pro 14\n\nPrice: $1,249.50   (was $1,399.00)\n Rating 4.6 / 5 {FILLER}",
)
API = Source(
    url="https://shop.example/api/item/7",
    record_id="<urn:uuid:00000000-0000-4000-8000-000000000008>",
    payload_digest="sha256:bbbb",
    text=json.dumps({"stock": [38, 40, 42], "weight_kg": 1.55e3, "temp": "\u22123 °C", "note": "ships in 2 days"}),
)


def test_number_found_with_evidence_and_snippet() -> None:
    evidence = find_number([PAGE], 1249.5, 0.0)
    assert evidence is not None
    assert (evidence.url, evidence.record_id, evidence.payload_digest) == (PAGE.url, PAGE.record_id, "sha256:aaaa")
    assert "Price: $1,249.50 (was $1,399.00) Rating 4.6 / 5" in evidence.snippet
    assert "Laptop Pro 14" in evidence.snippet
    # ±80 characters of the original around "1,249.50", whitespace collapsed: it is cut inside the filler.
    start = PAGE.text.index("1,249.50")
    expected = " ".join(PAGE.text[start - SNIPPET_RADIUS : start + len("1,249.50") + SNIPPET_RADIUS].split())
    assert evidence.snippet == expected


def test_number_not_found() -> None:
    assert find_number([PAGE, API], 1250.0, 0.25) is None
    assert find_number([], 1.0, 100.0) is None


def test_tolerance_edges_are_inclusive() -> None:
    # 4.7 - 4.6 is 0.10000000000000053 in binary floats; the edge still counts.
    assert find_number([PAGE], 4.7, 0.1) is not None
    assert find_number([PAGE], 4.71, 0.1) is None
    assert find_number([PAGE], 1250.0, 0.5) is not None
    assert find_number([PAGE], 1250.0, 0.49) is None


def test_closest_number_is_the_evidence() -> None:
    evidence = find_number([PAGE], 1390.0, 200.0)
    assert evidence is not None
    # 1,399.00 is 9 away, 1,249.50 is 140.5 away: the snippet is centred on the closer one.
    start = PAGE.text.index("1,399.00")
    assert evidence.snippet == " ".join(PAGE.text[start - SNIPPET_RADIUS : start + 8 + SNIPPET_RADIUS].split())


def test_numbers_inside_json_bodies() -> None:
    assert [n.value for n in numbers_in(API.text)] == [38.0, 40.0, 42.0, 1550.0, -3.0, 2.0]
    for value in (40.0, 1550.0, -3.0, 2.0):
        evidence = find_number([PAGE, API], value, 0.0)
        assert evidence is not None, value
        assert evidence.url == API.url
    assert find_number([API], 3.0, 0.0) is None  # the temperature is -3
    evidence = find_number([API], 40.0, 0.0)
    assert evidence is not None
    assert '"stock": [38, 40, 42]' in evidence.snippet


def test_a_json_list_is_not_read_as_thousands() -> None:
    source = Source(url="https://x.example/a.json", text="[1,249]")
    assert find_number([source], 249.0, 0.0) is not None
    assert find_number([source], 1249.0, 0.0) is None
    text = Source(url="https://x.example/a.txt", text="total 1,249")
    assert find_number([text], 1249.0, 0.0) is not None


def test_find_number_refuses_bad_arguments() -> None:
    with pytest.raises(ValueError, match="tolerance"):
        find_number([PAGE], 1.0, -0.5)
    with pytest.raises(ValueError, match="cannot look for"):
        find_number([PAGE], float("nan"), 0.0)


def test_text_found_normalised_with_evidence() -> None:
    evidence = find_text([API, PAGE], "laptop pro 14")
    assert evidence is not None
    assert evidence.url == PAGE.url
    assert evidence.record_id == PAGE.record_id
    start = PAGE.text.index("Laptop")
    end = PAGE.text.index("14\n") + 2
    assert evidence.snippet == " ".join(PAGE.text[start - SNIPPET_RADIUS : end + SNIPPET_RADIUS].split())


def test_text_not_found() -> None:
    assert find_text([PAGE, API], "Laptop Pro 16") is None
    assert find_text([PAGE], "   ") is None
    assert find_text([PAGE], ".") is None


@pytest.mark.parametrize(
    ("text", "value", "found"),
    [
        ("Gate 380 is closed", "38", False),
        ("Model A38 ships", "38", False),
        ("costs $38.00 today", "38", True),
        ("sizes 38,40", "38", True),
        ("the cat sat", "cat", True),
        ("concatenate", "cat", False),
        ("categories", "cat", False),
        ("(see note)", "(see", True),
        ("x(see y", "(see", True),
        ("C++ and C#", "c++", True),
        ("C++x", "C++", True),  # the value ends with "+", not a word character, so no boundary is asked for
        ("2019–2020 season", "2019-2020", True),
        ("STRASSE 5", "Straße 5", True),
        ("Cafés", "café", False),
        ("Café!", "cafe\u0301", True),  # a decomposed value finds the composed text
        ("ＦＵＬＬ width", "full width", True),
    ],
)
def test_text_word_boundaries_and_normalisation(text: str, value: str, found: bool) -> None:
    assert (find_text([Source(url="https://x.example/", text=text)], value) is not None) is found


def test_text_snippet_maps_back_through_unicode() -> None:
    text = "ß" * 100 + " Ｔｈｅ\u00a0 Gr\u0065\u0301at  Café — Straße " + "ß" * 100
    source = Source(url="https://x.example/", text=text)
    evidence = find_text([source], "the gr\u00e9at café - strasse")
    assert evidence is not None
    start = text.index("Ｔｈｅ")
    end = text.index("Straße") + len("Straße")
    assert evidence.snippet == " ".join(text[start - SNIPPET_RADIUS : end + SNIPPET_RADIUS].split())


def test_first_source_wins_for_text() -> None:
    first = Source(url="https://a.example/", text="Boston")
    second = Source(url="https://b.example/", text="Boston")
    evidence = find_text([first, second], "boston")
    assert evidence is not None
    assert evidence.url == "https://a.example/"


def test_markdown_escapes_and_backslashes_follow_normalize() -> None:
    source = Source(url="https://x.example/", text="call snake\\_case here")
    evidence = find_text([source], "snake_case")
    assert evidence is not None
    assert evidence.snippet == "call snake\\_case here"
    assert normalize_answer(source.text) == "call snake_case here"


def test_snippet_falls_back_to_proportional_placement() -> None:
    # NFKC composes these two Hangul jamo (both of combining class 0) into one syllable only when they are
    # normalised together, so the piecewise form misses it and the snippet is placed by proportion.
    text = "x " * 200 + "\u1100\u1161" + " y" * 200
    assert "\uac00" in normalize_answer(text)
    evidence = find_text([Source(url="https://x.example/", text=text)], "\uac00")
    assert evidence is not None
    assert "\u1100\u1161" in evidence.snippet
    assert len(evidence.snippet) <= 2 * SNIPPET_RADIUS + 3


def test_numbers_in_escaped_json_strings_are_placed_inside_their_string() -> None:
    body = json.dumps({"review": "x" * 600 + " it was \u22125 °C outside " + "y" * 600}, ensure_ascii=True)
    assert "\\u2212" in body
    evidence = find_number([Source(url="https://x.example/r.json", text=body)], -5.0, 0.0)
    assert evidence is not None
    assert "it was \\u22125 \\u00b0C outside" in evidence.snippet
    assert len(evidence.snippet) <= SNIPPET_MAX


def test_snippets_are_capped() -> None:
    value = "word " * 200
    evidence = find_text([Source(url="https://x.example/", text=f"start {value} end")], value)
    assert evidence is not None
    assert len(evidence.snippet) == SNIPPET_MAX
    assert evidence.snippet.startswith("start word word")
    assert evidence.snippet.endswith("...")
