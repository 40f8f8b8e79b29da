"""POST bodies compared by their form, the nearest-body rule and beacon-get: pure, without a server.

Expected values are written out by hand from the recordings each test builds, never computed by the rules.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, strategies as st

from capreplay.judge.archived import ArchivedLookup
from capreplay.replay.bodies import parse_body
from capreplay.replay.matching import BEACON_GET, IDENTITY_RULES, NEAREST_BODY, Candidate, Matcher
from capreplay.replay.nearest import is_beacon
from capreplay.replay.store import SnapshotStore
from tests.replay.posts_snapshot import GEN_204, RPC, make_posts_snapshot


def matcher(*recorded: tuple[str, str, bytes | None], **options: object) -> Matcher:
    cands = (Candidate(m, u, b, seq, ref=seq) for seq, (m, u, b) in enumerate(recorded))
    return Matcher(cands, **options)  # type: ignore[arg-type]


type Served = tuple[int, str | None] | None


def served(m: Matcher, method: str, url: str, body: bytes | None, beacon: bool = False) -> Served:
    found = m.match(method, url, body, beacon=beacon)
    return None if found is None else (found.candidate.ref, found.rule)  # type: ignore[return-value]


API = "https://api.site.test/rpc"
GQL = "https://api.site.test/graphql"


def gql(name: str, variables: object, *, query: str | None = None, as_string: bool = False) -> bytes:
    doc = query if query is not None else f"query {name}($id: ID) {{ item(id: $id) {{ name }} }}"
    return json.dumps(
        {"operationName": name, "query": doc, "variables": json.dumps(variables) if as_string else variables}
    ).encode()


# ----------------------------------------------------------------- the exact rule, by content type


@pytest.mark.parametrize(
    ("archived", "asked"),
    [
        # JSON: key order and white space
        (b'{"a": 1, "b": {"y": [1, 2], "x": "s"}}', b'{"b":{"x":"s","y":[1,2]},"a":1}'),
        # GraphQL: the query's white space, variables sent as a JSON string
        (gql("Item", {"id": "7", "lang": "en"}), gql("Item", {"lang": "en", "id": "7"}, as_string=True)),
        (gql("Item", {"id": "7"}), gql("Item", {"id": "7"}, query="query Item($id: ID) {\n item(id: $id) { name }\n}")),
        # a form: field order
        (b"q=tent&page=2&sort=price", b"sort=price&q=tent&page=2"),
        # multipart: the boundary
        (
            b'--AaB03x\r\nContent-Disposition: form-data; name="q"\r\n\r\ntent\r\n--AaB03x--\r\n',
            b'--WebKitFormB9\r\nContent-Disposition: form-data; name="q"\r\n\r\ntent\r\n--WebKitFormB9--\r\n',
        ),
        # a plain-text beacon: line endings and trailing white space
        (b"event view home\r\nscreen 1024\r\n", b"event view home\nscreen 1024"),
    ],
)
def test_a_body_saying_the_same_in_other_bytes_is_matched_by_post_body(archived: bytes, asked: bytes) -> None:
    assert served(matcher(("POST", API, archived)), "POST", API, asked) == (0, "post-body")


def test_graphql_operation_is_part_of_the_key() -> None:
    body = gql("Item", {"id": "7"})
    other_name = gql("Other", {"id": "7"}, query="query Item($id: ID) { item(id: $id) { name } }")
    assert parse_body(body).operation != parse_body(other_name).operation
    persisted = {"operationName": "Item", "variables": {"id": "7"},
                 "extensions": {"persistedQuery": {"version": 1, "sha256Hash": "abc123"}}}  # fmt: skip
    assert parse_body(json.dumps(persisted).encode()).operation == "graphql:Item:abc123"
    # variables compared field by field, as fields of their own
    assert ("variables.id", "7") in parse_body(body).fields
    assert parse_body(b'{"jsonrpc": "2.0", "method": "get_item", "id": 4}').operation == "rpc:get_item"


# ----------------------------------------------------------------- nearest-body


def test_a_request_counter_in_the_query_and_a_time_in_the_body_get_the_nearest_recording() -> None:
    m = matcher(
        ("POST", API + "?_reqid=1001&rt=c", b'{"q": "tents", "sent": 1520301385}'),
        ("POST", API + "?_reqid=2001&rt=c", b'{"q": "stoves", "sent": 1520301390}'),
    )
    # Same fields; q equal to the second recording's, the counter and the time differ from both.
    assert served(m, "POST", API + "?_reqid=98731&rt=c", b'{"q": "stoves", "sent": 1764547200}') == (1, NEAREST_BODY)
    assert served(m, "POST", API + "?rt=c&_reqid=5", b'{"sent": 1, "q": "tents"}') == (0, NEAREST_BODY)


def test_fewest_differing_fields_first_then_values_then_the_earliest() -> None:
    m = matcher(
        ("POST", API, b"a=1&b=2&c=3"),  # lacks d: one name off
        ("POST", API, b"a=9&b=9&d=9"),  # lacks c: one name off
        ("POST", API, b"a=1&b=2&c=3&d=4"),  # every name; d's value differs
    )
    assert served(m, "POST", API, b"a=1&b=2&c=3&d=5") == (2, NEAREST_BODY)
    # No recording has e: the first is off by e alone, the second by c, d and e, the third by d and e.
    assert served(m, "POST", API, b"a=1&b=2&c=3&e=0") == (0, NEAREST_BODY)
    twins = matcher(("POST", API, b"x=aaaa"), ("POST", API, b"x=bbbb"))
    assert served(twins, "POST", API, b"x=zzzz") == (0, NEAREST_BODY)


def test_never_another_operation_path_host_or_method() -> None:
    m = matcher(
        ("POST", GQL, gql("Product", {"id": "2"})),
        ("POST", GQL, gql("Reviews", {"id": "1"})),
        ("PUT", API, b"a=1"),
    )
    # Product has the very same variables, but Reviews is what is asked.
    assert served(m, "POST", GQL, gql("Reviews", {"id": "2"})) == (1, NEAREST_BODY)
    assert served(m, "POST", GQL, gql("Basket", {"id": "2"})) is None
    assert served(m, "POST", API, b"a=1") is None  # recorded as PUT only
    assert served(m, "PUT", API + "/x", b"a=1") is None
    assert served(m, "PUT", "https://other.site.test/rpc", b"a=1") is None


def test_strict_and_the_judge_never_take_a_nearest_body_or_a_beacon_get() -> None:
    recorded = [("POST", API + "?_reqid=1", b'{"q": "a"}'), ("GET", "https://s.test/gen_204?rt=1", None)]
    for options in ({"nearest_query": False}, {"rules": IDENTITY_RULES, "nearest_query": False}):
        m = matcher(*recorded, **options)
        assert served(m, "POST", API + "?_reqid=2", b'{"q": "a"}') is None
        assert served(m, "POST", "https://s.test/gen_204?rt=2", b"", beacon=True) is None
        assert served(m, "POST", "https://s.test/gen_204?rt=1", None, beacon=True) is None


# ----------------------------------------------------------------- beacon-get


def test_a_beacon_to_a_path_archived_only_as_a_get_gets_that_get() -> None:
    m = matcher(
        ("GET", "https://www.g.test/gen_204?s=webhp&rt=wsrt.966,aft.291", None),
        ("GET", "https://www.g.test/gen_204?s=jsa&zx=1539916341047", None),
        ("HEAD", "https://www.g.test/ping", None),
    )
    asked = "https://www.g.test/gen_204?s=jsa&zx=1764547200000"
    assert served(m, "POST", asked, b"", beacon=True) == (1, BEACON_GET)
    assert served(m, "POST", asked, b"", beacon=False) is None  # a script may read this one
    assert served(m, "POST", "https://www.g.test/ping", b"", beacon=True) is None  # a HEAD has no body to give
    assert served(m, "POST", "https://www.g.test/other", b"", beacon=True) is None


def test_a_beacon_to_a_path_recorded_as_post_is_left_to_nearest_body() -> None:
    m = matcher(("GET", "https://a.test/log?x=1", None), ("POST", "https://a.test/log?x=1", b"a=1"))
    assert served(m, "POST", "https://a.test/log?x=1", b"a=2", beacon=True) == (1, NEAREST_BODY)


@pytest.mark.parametrize(
    ("headers", "beacon"),
    [
        ({"Sec-Fetch-Mode": "no-cors", "Sec-Fetch-Dest": "empty"}, True),  # sendBeacon, fetch no-cors
        ({"Content-Type": "text/ping", "Ping-From": "https://a.test/"}, True),  # <a ping>
        ({"Sec-Fetch-Mode": "cors", "Sec-Fetch-Dest": "empty"}, False),  # fetch(): the script reads it
        ({"Sec-Fetch-Mode": "no-cors", "Sec-Fetch-Dest": "image"}, False),  # an image is read by the page
        ({"Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "document"}, False),  # a form submitted
        ({}, False),
    ],
)
def test_which_requests_are_beacons(headers: dict[str, str], beacon: bool) -> None:
    assert is_beacon(headers) is beacon


# ----------------------------------------------------------------- properties

_names = st.sampled_from(["a", "b", "id", "ts", "q"])
_values = st.text(alphabet="0123456789abcxyz", max_size=6)
_fields = st.dictionaries(_names, _values, max_size=4)
_paths = st.sampled_from(["/rpc", "/rpc/", "/RPC", "/graphql"])
_operations = st.sampled_from([None, "Item", "Reviews"])


def _body(operation: str | None, fields: dict[str, str]) -> bytes:
    if operation is None:
        return json.dumps(fields).encode()
    return json.dumps({"operationName": operation, "query": f"query {operation} {{ x }}", "variables": fields}).encode()


_recording = st.tuples(_paths, _operations, _fields)


@given(st.lists(_recording, min_size=1, max_size=6), _recording)
def test_property_nearest_body_never_crosses_a_path_or_an_operation_and_is_deterministic(
    archived: list[tuple[str, str | None, dict[str, str]]], asked: tuple[str, str | None, dict[str, str]]
) -> None:
    recorded = [("POST", f"https://a.test{p}?n={i}", _body(op, f)) for i, (p, op, f) in enumerate(archived)]
    url, body = f"https://a.test{asked[0]}?n=99", _body(asked[1], asked[2])
    first = served(matcher(*recorded), "POST", url, body)
    assert first == served(matcher(*recorded), "POST", url, body)  # a fresh matcher: the same record
    if first is not None:
        path, operation, _ = archived[first[0]]
        assert (path, operation) == (asked[0], asked[1])
    elif any((p, op) == asked[:2] for p, op, _ in archived):
        pytest.fail(f"{asked} found nothing although {archived} holds its path and operation")


@given(_fields.filter(bool), _values, _values)
def test_property_equal_names_are_preferred(fields: dict[str, str], prefix: str, extra: str) -> None:
    same_names = {name: prefix + value for name, value in fields.items()}  # every value may differ
    extra_name = {**fields, "zz": extra}  # every value equal, one more name
    m = matcher(("POST", API, json.dumps(extra_name).encode()), ("POST", API, json.dumps(same_names).encode()))
    found = served(m, "POST", API, json.dumps(fields).encode())
    assert found is not None
    assert found[0] == 1 or (prefix == "" and found[1] != NEAREST_BODY)  # equal to same_names: an exact rule


# ----------------------------------------------------------------- a real snapshot: serve, strict, the judge


def test_on_a_real_snapshot_serve_answers_strict_and_the_judge_do_not(tmp_path: Path) -> None:
    snapshot = make_posts_snapshot(tmp_path)
    later_beacon = GEN_204.replace("aft.291", "aft.24")
    rpc = (f"{RPC}?_reqid=7&rt=c", b'{"sent": 1764547200, "q": "stoves"}')
    store, strict = SnapshotStore(snapshot), SnapshotStore(snapshot, strict=True)
    try:
        beacon = store.matcher.match("POST", later_beacon, b"", beacon=True)
        assert beacon is not None and (beacon.rule, beacon.candidate.method, beacon.candidate.url) == (
            BEACON_GET, "GET", GEN_204)  # fmt: skip
        nearest = store.matcher.match("POST", *rpc)
        assert nearest is not None
        assert (nearest.rule, nearest.candidate.url) == (NEAREST_BODY, f"{RPC}?_reqid=2001&rt=c")
        assert store.response(nearest.candidate.ref).body == b'{"answer": "stoves"}'  # type: ignore[arg-type]
        assert strict.matcher.match("POST", later_beacon, b"", beacon=True) is None
        assert strict.matcher.match("POST", *rpc) is None
        # The judge looks cited URLs up by identity only: a beacon's URL with another time is not archived.
        judge = ArchivedLookup(store)
        assert judge.archived(later_beacon) is None
        assert judge.archived(f"{RPC}?_reqid=7&rt=c") is None  # archived only as POSTs: never a stand-in
        found = judge.archived(GEN_204)
        assert found is not None and found.payload == b"GIF89a"
    finally:
        store.close()
        strict.close()
