"""Choosing an imported snapshot's pages and reading their titles: pure functions."""

from __future__ import annotations

import zlib

import pytest

from capreplay.archive.importer.navigations import Navigations
from capreplay.archive.importer.page_choice import (
    ListedPage,
    Lookup,
    decode_content,
    html_title,
    listed_pages,
    page_candidates,
    warcinfo_pages,
    warcinfo_software,
)
from capreplay.archive.index.cdxj import IndexEntry
from capreplay.archive.index.keys import surt


def entry(seq: int, url: str, *, status: int | None = 200, mime: str = "text/html", method: str = "GET",
          revisit_of: str | None = None, orig: int | None = None) -> IndexEntry:  # fmt: skip
    return IndexEntry(urlkey=surt(url), timestamp="20200101000000", url=url, method=method, status=status, mime=mime,
                      digest=None, filename="archive/a.warc.gz", offset=seq * 100, length=100, req_offset=None,
                      req_length=None, post_body=None, seq=seq, revisit_of=revisit_of,
                      orig_filename="archive/a.warc.gz" if orig is not None else None, orig_offset=orig,
                      orig_length=100 if orig is not None else None)  # fmt: skip


def test_lookup_prefers_the_exact_url_then_the_same_scheme() -> None:
    entries = [entry(0, "https://www.example.com/"), entry(1, "http://example.com/"), entry(2, "http://example.com")]
    lookup = Lookup(entries)
    assert lookup.find("http://example.com") == entries[2]
    assert lookup.find("http://www.example.com/") == entries[1]
    assert lookup.find("https://example.com/") == entries[0]
    assert lookup.find("https://example.com/other") is None


def test_lookup_ignores_posts_and_unresolved_revisits() -> None:
    lookup = Lookup([entry(0, "http://a/", method="POST"), entry(1, "http://b/", revisit_of="http://b/")])
    assert lookup.find("http://a/") is None and lookup.find("http://b/") is None
    assert Lookup([entry(2, "http://b/", revisit_of="http://b/", orig=0)]).find("http://b/") is not None


def test_candidates_are_200_html_once_each_and_documents_when_marked() -> None:
    entries = [entry(0, "http://a/"), entry(1, "http://a/"), entry(2, "http://b/", status=404),
               entry(3, "http://c/", mime="application/xhtml+xml"), entry(4, "http://d/", mime="text/css"),
               entry(5, "http://e/", revisit_of="http://e/")]  # fmt: skip
    none = Navigations()
    assert [url for url, _ in page_candidates(entries, set(), none, Lookup(entries))] == ["http://a/", "http://c/"]
    marked = {("archive/a.warc.gz", 300)}
    assert [url for url, _ in page_candidates(entries, marked, none, Lookup(entries))] == ["http://c/"]


def test_listed_pages_keep_their_order_and_report_the_missing() -> None:
    lookup = Lookup([entry(0, "http://a/"), entry(1, "http://b/")])
    listed = [ListedPage("http://b/"), ListedPage("http://zz/"), ListedPage("http://a"), ListedPage("http://b/")]
    found, missing = listed_pages(lookup, listed)
    assert [(url, e.seq) for url, e in found] == [("http://b/", 1), ("http://a", 0)]
    assert missing == ["http://zz/"]


def test_warcinfo_fields() -> None:
    block = b'software: Webrecorder\r\njson-metadata: {"pages": [{"url": "http://a/", "title": "A"}, {"x": 1}]}\r\n'
    assert warcinfo_pages(block) == ([ListedPage("http://a/", "A")], None)
    assert warcinfo_software(block) == ["Webrecorder"]
    pages, problem = warcinfo_pages(b"json-metadata: {broken\r\n")
    assert pages == [] and problem is not None and "not valid JSON" in problem
    assert warcinfo_pages(b"software: x\r\n") == ([], None)


@pytest.mark.parametrize(
    ("encoding", "data"),
    [
        ("deflate", zlib.compress(b"<title>T</title>")),
        ("deflate", zlib.compress(b"<title>T</title>")[2:-4]),  # raw deflate, as some servers send it
        ("identity", b"<title>T</title>"),
        ("gzip, identity", zlib.compress(b"<title>T</title>", wbits=31)),
    ],
)
def test_content_encodings_are_undone(encoding: str, data: bytes) -> None:
    assert decode_content(encoding, data) == b"<title>T</title>"


def test_a_broken_encoding_gives_no_title() -> None:
    assert decode_content("gzip", b"not gzip") is None
    assert html_title([("Content-Encoding", "gzip")], b"not gzip") == ""
    assert html_title([], b"<p>no title here") == ""
    assert html_title([("Content-Type", "text/html; charset=no-such-codec")], b"<title>ok</title>") == "ok"
