"""Naming why a replay missed a URL the archive holds in another form."""

from __future__ import annotations

import pytest

from capreplay.verify.miss_reason import miss_reason

ARCHIVED = [
    "http://en.wikipedia.org/wiki/Main_Page",
    "https://en.wikipedia.org/w/load.php?modules=a,b,c&only=styles",
    "https://www.google.com/gen_204?atyp=i&ct=slh&ei=lDd5WoKZB&zx=1517893525001",
    "https://www.example.com/search?q=a+b",
    "https://example.org/list?b=2&a=1",
    "https://example.org/page",
    "https://cdn.example.org/app.js?v=1",
    "https://news.example.net/story",
]


@pytest.mark.parametrize(("url", "reason", "nearest"), [
    ("http://en.wikipedia.org/wiki/Main_Page", "exact-url-archived", "http://en.wikipedia.org/wiki/Main_Page"),
    ("https://en.wikipedia.org/wiki/Main_Page", "scheme", "http://en.wikipedia.org/wiki/Main_Page"),
    ("https://EN.wikipedia.org:443/w/load.php?modules=a,b,c&only=styles", "host-form", ARCHIVED[1]),
    ("https://en.wikipedia.org/w/load.php?modules=a%2Cb%2Cc&only=styles", "percent-encoding", ARCHIVED[1]),
    ("https://www.google.com/gen_204?atyp=i&ct=slh&ei=XyZ9WoKZB&zx=1517893999999", "timestamped-query", ARCHIVED[2]),
    ("https://www.example.com/search?q=a%20b", "plus-or-space", ARCHIVED[3]),
    ("https://example.org/list?a=1&b=2", "query-order", ARCHIVED[4]),
    ("https://example.org/page?", "empty-query-or-fragment", ARCHIVED[5]),
    ("https://cdn.example.org/app.js?v=2&extra=1", "other-query", ARCHIVED[6]),
    ("https://www.news.example.net/story", "www", ARCHIVED[7]),
])  # fmt: skip
def test_reason(url: str, reason: str, nearest: str) -> None:
    found = miss_reason(url, ARCHIVED)
    assert found is not None
    assert (found.reason, found.nearest) == (reason, nearest)


def test_nothing_close_is_no_reason() -> None:
    assert miss_reason("https://example.org/other", ARCHIVED) is None
    assert miss_reason("https://tracker.example/p.gif", ARCHIVED) is None


def test_another_port_of_the_same_scheme_is_another_origin() -> None:
    assert miss_reason("https://example.org:8443/page", ARCHIVED) is None


def test_the_closest_explanation_wins() -> None:
    archived = ["https://a.test/x?id=1", "http://a.test/x?id=2"]
    found = miss_reason("http://a.test/x?id=1", archived)
    assert found is not None and found.reason == "scheme"
