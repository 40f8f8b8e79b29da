"""BM25 over page texts: tokens, scores computed by hand on a three-document corpus, salient terms."""

from __future__ import annotations

import math

import pytest

from capreplay.tasks.multihop.bm25 import BM25, K1, B, tokenize

# three documents, 9 tokens in all: the mean length is 3
CORPUS = [["hut", "ridge", "hut"], ["ridge", "trail"], ["coast", "walk", "walk", "walk"]]


def test_the_parameters_are_the_usual_okapi_ones() -> None:
    assert (K1, B) == (1.5, 0.75)


def test_words_are_case_folded_and_numbers_keep_their_separators() -> None:
    text = "Ashgill Horseshoe: 1,120 m of ascent, 18.4 km. Kell Valley's HUT"
    assert tokenize(text) == ["ashgill", "horseshoe", "1,120", "of", "ascent", "18.4", "km", "kell", "valley", "hut"]


def test_idf_by_hand() -> None:
    index = BM25(CORPUS)
    assert index.idf("hut") == pytest.approx(math.log(1 + 2.5 / 1.5))  # in 1 of 3 documents
    assert index.idf("ridge") == pytest.approx(math.log(1 + 1.5 / 2.5))  # in 2 of 3
    assert index.idf("absent") == pytest.approx(math.log(1 + 3.5 / 0.5))


def test_scores_by_hand() -> None:
    index = BM25(CORPUS)
    # document 0 is of mean length, so its norm is k1 = 1.5; "hut" twice: 2 * 2.5 / (2 + 1.5)
    first = math.log(8 / 3) * 5 / 3.5 + math.log(1.6) * 2.5 / (1 + 1.5)
    # document 1 has 2 tokens: norm 1.5 * (0.25 + 0.75 * 2 / 3) = 1.125, "ridge" once: 2.5 / 2.125
    second = math.log(1.6) * 2.5 / 2.125
    assert index.scores(["hut", "ridge"]) == pytest.approx([first, second, 0.0])
    assert first == pytest.approx(1.871189, abs=1e-6) and second == pytest.approx(0.552946, abs=1e-6)


def test_a_repeated_query_term_counts_once() -> None:
    index = BM25(CORPUS)
    assert index.scores(["hut", "hut", "ridge"]) == pytest.approx(index.scores(["hut", "ridge"]))


def test_salient_terms_are_shared_with_another_document_rarest_first() -> None:
    index = BM25([["hut", "ridge", "hut", "kell"], ["ridge", "kell", "trail"], ["kell", "walk"]])
    # "hut" is in the first document only, so it cannot find a related one; "ridge" is rarer than "kell"
    assert index.salient_terms(0, 5) == ["ridge", "kell"]
    assert index.salient_terms(0, 1) == ["ridge"]
    assert index.salient_terms(0, 5, skip={"ridge"}) == ["kell"]
    assert index.salient_terms(2, 5) == ["kell"]


def test_an_empty_corpus_scores_nothing() -> None:
    assert BM25([]).scores(["hut"]) == []
    assert BM25([[]]).scores(["hut"]) == [0.0]
