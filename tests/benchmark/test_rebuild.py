"""Pairing two builds' pages by plan page, and comparing what they say."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from capreplay.benchmark.rebuild import pair_pages, summary
from capreplay.models.manifest import PageEntry

WHEN = datetime(2026, 12, 7, tzinfo=UTC)
CLICK = [{"type": "click", "selector": "th.zones"}]


def _page(url: str, text: str, actions: list[dict[str, str]] | None = None) -> PageEntry:
    return PageEntry(url=url, final_url=url, title="t", status=200, captured_at=WHEN, text=text,
                     actions=actions or [])  # fmt: skip


def test_pages_pair_by_url_and_actions_and_compare_their_text() -> None:
    first = [_page("http://a.test/", "captures/0000.txt"), _page("http://a.test/list", "captures/0001.txt"),
             _page("http://a.test/list", "captures/0002.txt", CLICK), _page("http://a.test/gone", "captures/0003.txt")]
    second = [_page("http://a.test/list", "captures/0000.txt", CLICK), _page("http://a.test/", "captures/0001.txt"),
              _page("http://a.test/list", "captures/0002.txt"), _page("http://a.test/new", "captures/0003.txt")]
    texts = {"captures/0000.txt": "Home\nWelcome", "captures/0001.txt": "a\nb\nc\nd",
             "captures/0002.txt": "sorted", "captures/0003.txt": "x"}
    other = {"captures/0000.txt": "sorted", "captures/0001.txt": "Home\nWelcome",
             "captures/0002.txt": "a\nb\nc\nD", "captures/0003.txt": "y"}  # fmt: skip
    pairs, alone = pair_pages(first, second, texts, other)
    assert [(p.url, p.same) for p in pairs] == [("http://a.test/", True), ("http://a.test/list", False),
                                                ("http://a.test/list", True)]  # fmt: skip
    assert pairs[1].ratio == pytest.approx(0.75)  # three of four lines alike: 2 * 3 / 8
    assert pairs[1].first_difference == "'d' != 'D'"
    assert alone == ["http://a.test/gone", "http://a.test/new"]
    assert summary(pairs, alone) == {"paired": 3, "same_text": 2, "lowest_ratio": pytest.approx(0.75),
                                     "unpaired": 2}  # fmt: skip
