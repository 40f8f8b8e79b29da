"""Turning archived responses into replayed ones: header filtering and byte ranges."""

from capreplay.replay.response import Outgoing, miss_page, parse_range, replay_headers, serve_range

BODY = bytes(range(256)) * 4  # 1024 bytes


def test_hop_by_hop_alt_svc_and_length_are_dropped_order_and_cookies_kept() -> None:
    headers = [
        ("Content-Type", "text/html"),
        ("Transfer-Encoding", "chunked"),
        ("Set-Cookie", "a=1"),
        ("alt-svc", 'h3=":443"'),
        ("Connection", "keep-alive"),
        ("Set-Cookie", "b=2"),
        ("Content-Length", "99"),
        ("Content-Encoding", "gzip"),
    ]
    assert replay_headers(headers) == [
        ("Content-Type", "text/html"),
        ("Set-Cookie", "a=1"),
        ("Set-Cookie", "b=2"),
        ("Content-Encoding", "gzip"),
    ]


def test_parse_range_forms() -> None:
    assert parse_range("bytes=0-", 100) == (0, 99)
    assert parse_range("bytes=10-19", 100) == (10, 19)
    assert parse_range("bytes=90-200", 100) == (90, 99)
    assert parse_range("bytes=-10", 100) == (90, 99)
    assert parse_range("bytes=100-", 100) is None
    assert parse_range("bytes=5-1", 100) is None
    assert parse_range("bytes=0-1,5-6", 100) is None
    assert parse_range("items=0-1", 100) is None


def test_range_cut_from_a_full_200() -> None:
    out = serve_range(Outgoing(200, "OK", [("Content-Type", "video/webm")], BODY), "bytes=100-199")
    assert out is not None
    assert out.status == 206
    assert out.body == BODY[100:200]
    assert ("Content-Range", "bytes 100-199/1024") in out.headers


def test_range_inside_an_archived_206() -> None:
    part = Outgoing(206, "Partial Content", [("Content-Range", "bytes 512-1023/1024")], BODY[512:])
    out = serve_range(part, "bytes=600-")
    assert out is not None and out.body == BODY[600:]
    assert serve_range(part, "bytes=0-10") is None  # not archived: the caller serves what it has


def test_no_range_over_an_encoded_body() -> None:
    assert serve_range(Outgoing(200, "OK", [("Content-Encoding", "gzip")], BODY), "bytes=0-9") is None


def test_miss_page_names_the_url_and_the_nearest_candidate() -> None:
    out = miss_page("https://a.test/x?<y>", "https://a.test/x", "ab" * 32)
    assert out.status == 404
    assert b"https://a.test/x?&lt;y&gt;" in out.body
    assert b"Nearest archived URL" in out.body
