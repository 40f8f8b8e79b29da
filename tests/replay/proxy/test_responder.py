"""The responder's pure parts: which hosts it answers for, and the response it hands mitmproxy."""

from __future__ import annotations

import json
from pathlib import Path

from capreplay.replay.proxy.responder import reachable, refusal, served_here, to_response
from capreplay.replay.response import Outgoing

FIXTURE_ORIGINS = [("https", "www.shop.test", 443), ("https", "static.cdn.test", 443), ("http", "old.test", 8080)]


def test_every_archived_host_is_reachable_on_both_schemes_and_nothing_else() -> None:
    endpoints = reachable(FIXTURE_ORIGINS)
    for host in ("www.shop.test", "static.cdn.test", "old.test"):
        assert served_here(host, 443, endpoints) and served_here(host, 80, endpoints)
    assert served_here("old.test", 8080, endpoints)
    # The www twin is mapped by the replay server's resolver rules too, and answered through ignore-www.
    assert served_here("shop.test", 443, endpoints) and served_here("www.old.test", 80, endpoints)
    assert served_here("WWW.Shop.Test.", 443, endpoints)
    assert not served_here("example.com", 443, endpoints)
    assert not served_here("www.shop.test", 8443, endpoints)
    assert not served_here("mitm.it", 80, endpoints)
    assert not served_here("127.0.0.1", 80, endpoints)


def test_the_committed_snapshot_serves_exactly_its_manifest_hosts_and_their_twins(committed_snapshot: Path) -> None:
    from capreplay.replay.store import SnapshotStore

    hosts = json.loads((committed_snapshot / "manifest.json").read_text())["hosts"]
    store = SnapshotStore(committed_snapshot)
    try:
        names = {host for host, _ in reachable(store.origins())}
    finally:
        store.close()
    twins = {h[4:] if h.startswith("www.") else "www." + h for h in hosts}
    assert names == set(hosts) | twins


def test_a_refusal_is_a_403_that_names_the_host() -> None:
    out = refusal("example.com:443")
    assert out.status == 403
    assert b"example.com:443" in out.body and b"not in the snapshot" in out.body


def test_a_response_goes_out_as_archived_with_the_length_the_server_sets() -> None:
    gz = b"\x1f\x8b\x08\x00compressed-bytes"
    out = Outgoing(200, "", [("Content-Type", "text/css"), ("Content-Encoding", "gzip"), ("X-Name", "caf\xe9")], gz)
    resp = to_response(out, "GET")
    assert resp.raw_content == gz  # not decoded, not re-encoded
    assert resp.status_code == 200 and resp.reason == "OK"
    assert resp.headers.fields == (
        (b"Content-Type", b"text/css"),
        (b"Content-Encoding", b"gzip"),
        (b"X-Name", b"caf\xe9"),  # one byte per archived byte, as the WARC held it
        (b"Content-Length", str(len(gz)).encode()),
    )


def test_head_gets_the_length_of_the_get_and_no_body() -> None:
    resp = to_response(Outgoing(200, "OK", [("Content-Type", "text/html")], b"<p>twelve</p"), "HEAD")
    assert resp.raw_content == b""
    assert resp.headers["content-length"] == "12"


def test_no_content_and_not_modified_carry_no_body_and_no_length() -> None:
    for status in (204, 304):
        resp = to_response(Outgoing(status, "", [("ETag", '"x"')], b"stray"), "GET")
        assert resp.raw_content == b"" and "content-length" not in resp.headers
        assert resp.reason in ("No Content", "Not Modified")


def test_an_archived_reason_phrase_is_kept() -> None:
    assert to_response(Outgoing(200, "Okay Then", [], b""), "GET").reason == "Okay Then"
