"""The nearest-query rule: for GET and HEAD, when nothing else matches, the capture of the same host and path
whose query is closest; never another path, never POST, off when strict, never for the judge's lookups."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from hypothesis import given, strategies as st

from capreplay.archive.importer.snapshot import ImportOptions, import_archives
from capreplay.capture.session import DEFAULT_SEED
from capreplay.replay.matching import IDENTITY_RULES, NEAREST_QUERY, Candidate, Matcher
from capreplay.replay.rules import query_distance
from capreplay.replay.store import SnapshotStore
from capreplay.testing.serve_process import capreplay_serve
from tests.support.foreign_warc import gz, page, request


def matcher(*urls: str, method: str = "GET", **options: object) -> Matcher:
    return Matcher((Candidate(method, url, None, seq) for seq, url in enumerate(urls)), **options)  # type: ignore[arg-type]


def served(m: Matcher, url: str, method: str = "GET") -> tuple[str, str | None] | None:
    found = m.match(method, url, None)
    return None if found is None else (found.candidate.url, found.rule)


BEACON = "https://log.news.test/p.gif?page=home&ev=view&timeFromNavigationStart=275"
PIXEL = "https://stats.news.test/collect?v=1&cid=0.8123456789&z=1520301385356&dl=https%3A%2F%2Fnews.test%2F"


@pytest.mark.parametrize(
    ("archived", "asked"),
    [
        # a time measured on the page (it is never the same twice)
        (BEACON, BEACON.replace("=275", "=-275834820061")),
        # a random client id and a cache-busting number with no telling name
        (PIXEL, PIXEL.replace("0.8123456789", "0.1111111111").replace("1520301385356", "1764547200000")),
        # a long encoded blob
        ("https://c.news.test/comet?callback=jQuery1_1520301385356&data=eyJhIjoxLCJiIjoiYWJjZGVmZ2hpams",
         "https://c.news.test/comet?callback=jQuery1_1764547200000&data=eyJhIjoxLCJiIjoiemFwcGVyZGFw"),
        # an argument the capture did not send at all
        ("https://log.news.test/b?x=1", "https://log.news.test/b?x=1&seq=17"),
    ],
)
def test_a_beacon_with_other_volatile_values_gets_the_archived_one(archived: str, asked: str) -> None:
    assert served(matcher(archived), asked) == (archived, NEAREST_QUERY)
    assert served(matcher(archived), asked, "HEAD") == (archived, NEAREST_QUERY)


def test_the_same_argument_names_win_over_closer_values_under_other_names() -> None:
    same_names = "https://a.test/p?id=1&t=900"
    other_names = "https://a.test/p?id=7&u=7"
    assert served(matcher(other_names, same_names), "https://a.test/p?id=7&t=7") == (same_names, NEAREST_QUERY)


def test_then_the_smallest_difference_in_values() -> None:
    near, far = "https://a.test/p?n=48213377", "https://a.test/p?n=9"
    assert served(matcher(far, near), "https://a.test/p?n=48213301") == (near, NEAREST_QUERY)


def test_equally_close_candidates_go_to_the_earliest_capture() -> None:
    first, second = "https://a.test/p?r=aaaa", "https://a.test/p?r=bbbb"
    assert served(matcher(first, second), "https://a.test/p?r=zzzz") == (first, NEAREST_QUERY)
    assert served(matcher(second, first), "https://a.test/p?r=zzzz") == (second, NEAREST_QUERY)


def test_never_another_path_never_post() -> None:
    m = matcher("https://a.test/p?x=1", "https://a.test/P?y=2", "https://a.test/p/q?x=1")
    assert served(m, "https://a.test/other?x=1") is None
    assert served(m, "https://b.test/p?x=1") is None
    assert served(m, "https://a.test/P?x=1") == ("https://a.test/P?y=2", NEAREST_QUERY)  # path case is kept
    posts = matcher("https://a.test/api?x=1", method="POST")
    found = posts.match("POST", "https://a.test/api?x=2", b"{}")
    assert found is not None and found.rule != NEAREST_QUERY  # a POST is nearest-body's (test_nearest_body)
    assert served(matcher("https://a.test/api?x=1", method="POST"), "https://a.test/api?x=2") is None


def test_strict_and_identity_lookups_never_take_the_nearest() -> None:
    assert served(matcher(BEACON, nearest_query=False), BEACON.replace("=275", "=9")) is None
    identity = matcher("https://a.test/item?id=1&s=a", rules=IDENTITY_RULES, nearest_query=False)
    assert served(identity, "https://a.test/item?id=999&s=a") is None
    assert served(identity, "https://a.test/item?s=a&id=1") == ("https://a.test/item?id=1&s=a", "query-order")
    assert served(identity, "http://a.test/item?id=1&s=a") == ("https://a.test/item?id=1&s=a", "other-scheme")
    assert served(identity, "https://a.test/item?id=1&s=a&_=1764547200000") is None  # no rule drops anything


def test_a_strict_host_never_takes_the_nearest_while_the_others_do() -> None:
    m = matcher("http://data.bench.test/world/zones?_sort=latitude", "http://docs.bench.test/search.html?q=blueprint",
                strict_hosts=frozenset({"data.bench.test"}))  # fmt: skip
    assert served(m, "http://data.bench.test/world/zones?_sort=longitude") is None
    assert served(m, "http://docs.bench.test/search.html?q=session") == (
        "http://docs.bench.test/search.html?q=blueprint", NEAREST_QUERY)
    assert served(m, "http://data.bench.test/world/zones?_sort=latitude") == (
        "http://data.bench.test/world/zones?_sort=latitude", None)  # an exact match is no nearest


def test_a_keyed_rule_still_wins_over_the_nearest_query() -> None:
    exact = "https://a.test/p?q=shoes&_=1520301385356"
    m = matcher("https://a.test/p?q=shoe", exact)
    assert served(m, "https://a.test/p?q=shoes&_=1764547200000") == (exact, "cache-busting")


_names = st.sampled_from(["a", "b", "id", "t", "q"])
_values = st.text(alphabet="0123456789abcxyz", max_size=8)
_queries = st.lists(st.tuples(_names, _values), max_size=4).map(lambda ps: "&".join(f"{n}={v}" for n, v in ps))
_paths = st.sampled_from(["/p", "/p/", "/q", "/P"])


@given(st.lists(st.tuples(_paths, _queries), min_size=1, max_size=6), _paths, _queries)
def test_property_nearest_query_never_crosses_a_path_and_is_deterministic(
    archived: list[tuple[str, str]], path: str, query: str
) -> None:
    urls = [f"https://a.test{p}?{q}" for p, q in archived]
    asked = f"https://a.test{path}?{query}"
    first, again = served(matcher(*urls), asked), served(matcher(*urls), asked)
    assert first == again
    if first is not None:
        assert first[0].split("?")[0] == f"https://a.test{path}"
    elif any(p == path for p, _ in archived):
        pytest.fail(f"{asked} found nothing although {urls} holds its path")


@given(st.lists(st.tuples(_names, _values), min_size=1, max_size=4), _values, _values)
def test_property_equal_argument_names_are_preferred(params: list[tuple[str, str]], v1: str, v2: str) -> None:
    asked = "https://a.test/p?" + "&".join(f"{n}={v}" for n, v in params)
    same_names = "https://a.test/p?" + "&".join(f"{n}={v1}{v}" for n, v in params)
    extra_name = "https://a.test/p?" + "&".join(f"{n}={v}" for n, v in params) + f"&zz={v2}"
    assert query_distance(asked, same_names)[0] == 0 < query_distance(asked, extra_name)[0]
    assert served(matcher(extra_name, same_names), asked)[0] in (same_names, extra_name)  # type: ignore[index]
    if same_names != asked:
        assert served(matcher(extra_name, same_names), asked) == (same_names, NEAREST_QUERY)


def _beacon_snapshot(tmp_path: Path, *, strict: bool = False) -> Path:
    warc = gz(page(1, BEACON, b"GIF89a", headers=[("Content-Type", "image/gif")]), request(2, BEACON, 1))
    (tmp_path / "in.warc.gz").write_bytes(warc)
    out = tmp_path / "snap"
    import_archives(ImportOptions(inputs=[tmp_path / "in.warc.gz"], out=out, random_seed=DEFAULT_SEED))
    if strict:  # a replay setting, not content: the snapshot id stays what it was
        manifest = json.loads((out / "manifest.json").read_text())
        manifest["replay"] = {"strict": True}
        (out / "manifest.json").write_text(json.dumps(manifest))
    return out


def _status(info: dict[str, object], url: str) -> int:
    path = url.split("/", 3)[3]
    asked = urllib.request.Request(f"http://127.0.0.1:{info['http_port']}/{path}", headers={"Host": "log.news.test"})
    try:
        with urllib.request.urlopen(asked, timeout=30) as response:
            return int(response.status)
    except urllib.error.HTTPError as e:
        return e.code


def test_serve_answers_the_nearest_query_unless_strict(tmp_path: Path) -> None:
    later = BEACON.replace("=275", "=-1")
    snap = _beacon_snapshot(tmp_path)
    with capreplay_serve(snap) as server:
        assert _status(server.start(), later) == 200
    with capreplay_serve(snap, args=["--strict"]) as server:
        assert _status(server.start(), later) == 404
        assert _status(server.info, BEACON) == 200


def test_a_snapshot_can_ask_for_strict_replay(tmp_path: Path) -> None:
    store = SnapshotStore(_beacon_snapshot(tmp_path, strict=True))
    try:
        assert store.strict
        assert store.matcher.match("GET", BEACON.replace("=275", "=-1"), None) is None
    finally:
        store.close()
