"""The index build's shortcuts give what the general steps give, on the inputs closest to their edges.

Each shortcut is asked of hand-written inputs: some it takes (checked to be taken), some it must leave to the
general steps (checked to be left). Every answer must equal the literal value written here and, where the
general steps can be called alone, theirs, so neither side can drift alone.
"""

from __future__ import annotations

import dataclasses

import pytest

from capreplay.archive.index.keys import _SIMPLE_HTTP, general_surt, surt, warc_timestamp
from capreplay.archive.warc.http import is_chunked
from capreplay.archive.warc.stored import StoredRecord, built_record

# (url, its SURT key, whether the shortcut takes it)
SURTS = [
    ("http://example.com", "com,example)/", True),
    ("http://example.com/", "com,example)/", True),
    ("https://Example.COM/Path/To?B=2&a=1", "com,example)/path/to?a=1&b=2", True),
    ("http://www.example.com/", "com,example)/", True),
    ("http://WWW12.example.com./x", "com,example)/x", True),
    ("http://www.com/", "com)/", True),
    ("http://example.com?", "com,example)/", True),
    ("http://example.com/?", "com,example)/", True),
    ("http://example.com/?b&&a", "com,example)/?&a&b", True),
    ("http://example.com/a?q=1?2&p=:@/", "com,example)/a?p=:@/&q=1?2", True),
    ("http://a..b/c", "b,,a)/c", True),
    ("http://1.2.3.4/x", "4,3,2,1)/x", True),
    ("http://-x.com/", "com,-x)/", False),
    ("http://example.com:80/", "com,example)/", False),
    ("http://example.com:8080/", "com,example:8080)/", False),
    ("http://user@example.com/", "com,example)/", False),
    ("http://example.com/a;jsessionid=0A1B?x=1", "com,example)/a?x=1", False),
    ("http://example.com/%7Euser", "com,example)/~user", False),
    ("http://example.com/a b", "com,example)/a%20b", False),
    ("http://example.com/#frag", "com,example)/", False),
    ("http://bücher.de/", "de,xn--bcher-kva)/", False),
    ("HTTP://example.com/", "com,example)/", False),
    ("ftp://example.com/", "ftp://example.com/", False),
    ("http://example.com/a[1]", "com,example)/a[1]", False),
]


@pytest.mark.parametrize(("url", "key", "shortcut"), SURTS, ids=[u for u, _, _ in SURTS])
def test_the_surt_shortcut_agrees_with_the_general_steps(url: str, key: str, shortcut: bool) -> None:
    assert (_SIMPLE_HTTP.fullmatch(url) is not None) == shortcut
    assert surt(url) == key
    assert general_surt(url) == key


# (headers, chunked?)
CHUNKED = [
    ([], False),
    ([("Content-Type", "text/html")], False),
    ([("Transfer-Encoding", "chunked")], True),
    ([("TRANSFER-ENCODING", "Chunked")], True),
    ([("transfer-encoding", "gzip, chunked")], True),
    ([("Transfer-Encoding", "chunked, gzip")], False),
    ([("X-Transfer-Encoding", "chunked")], False),
    ([("Transfer-Encodings", "chunked")], False),
    ([("X-Note", "transfer-encoding"), ("A", "chunked")], False),
    ([("Transfer-Encoding", "gzip"), ("Transfer-Encoding", "chunked")], True),
    ([("Transfer-Encoding", "chunked"), ("Transfer-Encoding", "identity")], False),
]


@pytest.mark.parametrize(("headers", "chunked"), CHUNKED, ids=[repr(h) for h, _ in CHUNKED])
def test_the_chunked_shortcut_agrees_with_the_general_steps(headers: list[tuple[str, str]], chunked: bool) -> None:
    assert is_chunked(headers) == chunked


# (WARC-Date, its timestamp): the answer is kept per first 19 characters, all the date's pattern reads
TIMESTAMPS = [
    ("2026-01-01T00:00:00.123456Z", "20260101000000"),
    ("2026-01-01T00:00:00.999999Z", "20260101000000"),
    (" 2026-01-01T00:00:00Z \t", "20260101000000"),
    ("2026-01-01T00:00:00garbage", "20260101000000"),
    ("2026-01-01T00:00:0", "20260101000000"),
    ("2014-01", "20140101000000"),
    ("2014", "20140101000000"),
    ("2020-01-01T23:59", "20200101235900"),
    ("2020-01-01T23:5", "20200101000000"),
    ("2020-01-32", None),
    ("2020-02-30T00:00:00Z", None),
    ("2020-01-01T24:00:00Z", None),
    ("2020-01-01T23:59:60Z", None),
    ("x2020-01-01T00:00:00Z", None),
    ("", None),
]


@pytest.mark.parametrize(("date", "timestamp"), TIMESTAMPS, ids=[d for d, _ in TIMESTAMPS])
def test_timestamps_kept_per_second_are_each_dates_own(date: str, timestamp: str | None) -> None:
    assert warc_timestamp(date) == timestamp
    assert warc_timestamp(date) == timestamp  # asked again: from what was kept


def test_a_record_built_without_init_is_the_dataclasss_own() -> None:
    headers = [("WARC-Type", "response"), ("warc-concurrent-to", "<a>"), ("WARC-Concurrent-To", "<b>")]
    made = StoredRecord(
        rec_type="response", record_id="<r>", url="http://a/", date="2026", warc_headers=headers, offset=1, length=2
    )
    built = built_record("response", "<r>", "http://a/", "2026", headers, 1, 2)
    assert built == made and repr(built) == repr(made)
    assert list(vars(built)) == [f.name for f in dataclasses.fields(StoredRecord)] == list(vars(made))
    assert built.http_headers == [] and built.http_headers is not built_record("x", "", None, "", [], 0, 0).http_headers
    assert (
        built.warc_header_values("WARC-CONCURRENT-TO") == ["<a>", "<b>"]
        and built.warc_header("warc-type") == "response"
    )
    with pytest.raises(dataclasses.FrozenInstanceError):
        built.offset = 5  # type: ignore[misc]
    full = {
        "status": 200,
        "reason": "OK",
        "written_status": "0",
        "digests": (),
        "method": "GET",
        "http_headers": [("A", "b")],
        "payload": b"body",
    }
    assert built_record("response", "<r>", None, "d", [], 3, 4, **full) == StoredRecord(  # type: ignore[arg-type]
        rec_type="response", record_id="<r>", url=None, date="d", warc_headers=[], offset=3, length=4, **full
    )
