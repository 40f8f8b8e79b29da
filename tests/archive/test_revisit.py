"""Revisit resolution, a pure function: record id first, then URL and digest, chains and loops."""

from __future__ import annotations

import base64
import hashlib

import pytest

from capreplay.archive.warc.revisit import Capture, digest_key, resolve_revisits

DATA = b"the payload"
SHA1 = hashlib.sha1(DATA).digest()


@pytest.mark.parametrize(
    "spelling",
    [
        "sha1:" + base64.b32encode(SHA1).decode(),
        "sha1:" + base64.b32encode(SHA1).decode().lower(),
        "SHA1:" + SHA1.hex(),
        "sha-1:" + base64.b64encode(SHA1).decode(),
        "sha1:" + base64.urlsafe_b64encode(SHA1).decode().rstrip("="),
    ],
)
def test_one_digest_in_any_spelling_has_one_key(spelling: str) -> None:
    assert digest_key(spelling) == "sha1:" + SHA1.hex()


def test_digests_that_cannot_be_decoded_are_kept_as_written() -> None:
    assert digest_key(None) is None and digest_key("  ") is None
    assert digest_key("blake9:abc") == "blake9:abc"
    assert digest_key("sha1:not-a-digest") == "sha1:not-a-digest"
    assert digest_key("nolabel") == "nolabel"


def response(n: int, key: str = "com,example)/a", digest: str = "d1", ts: str = "20200101000000") -> Capture:
    return Capture(f"<r{n}>", "response", key, digest, ts, order=n)


def revisit(n: int, **kw: str | None) -> Capture:
    fields: dict[str, str | None] = {"key": "com,example)/a", "digest": "d1", **kw}
    return Capture(f"<v{n}>", "revisit", str(fields.pop("key")), fields.pop("digest"), "20200202000000", order=n,
                   refers_to=fields.get("refers_to"), refers_to_key=fields.get("refers_to_key"),
                   refers_to_timestamp=fields.get("refers_to_timestamp"))  # fmt: skip


def test_the_record_id_wins_over_url_and_digest() -> None:
    other = response(1, key="com,example)/other", digest="d9")
    captures = [response(0), other, revisit(2, refers_to="<r1>")]
    assert resolve_revisits(captures) == {"<v2>": "<r1>"}


def test_an_unknown_record_id_falls_back_to_url_and_digest() -> None:
    assert resolve_revisits([response(0), revisit(1, refers_to="<gone>")]) == {"<v1>": "<r0>"}


def test_a_chain_of_revisits_ends_at_the_response_and_a_loop_ends_unresolved() -> None:
    chain = [response(0, key="k0", digest="x"), revisit(1, key="k1", digest="y", refers_to="<r0>"),
             revisit(2, key="k2", digest="z", refers_to="<v1>")]  # fmt: skip
    assert resolve_revisits(chain) == {"<v1>": "<r0>", "<v2>": "<r0>"}
    loop = [revisit(1, key="k1", digest="y", refers_to="<v2>"), revisit(2, key="k2", digest="z", refers_to="<v1>")]
    assert resolve_revisits(loop) == {"<v1>": None, "<v2>": None}


def test_url_and_digest_prefer_the_refers_to_date_then_the_latest_earlier_capture() -> None:
    early, late, after = response(0, ts="20200101000000"), response(1, ts="20200115000000"), response(5)
    assert resolve_revisits([early, late, revisit(3, refers_to_timestamp="20200101000000")])["<v3>"] == "<r0>"
    assert resolve_revisits([early, late, revisit(3)])["<v3>"] == "<r1>"
    assert resolve_revisits([revisit(3), after])["<v3>"] == "<r5>"


def test_refers_to_target_uri_names_the_url_to_look_under() -> None:
    captures = [response(0, key="com,example)/"), revisit(1, key="com,example)/favicon.ico",
                                                          refers_to_key="com,example)/")]  # fmt: skip
    assert resolve_revisits(captures) == {"<v1>": "<r0>"}


def test_no_original_or_no_digest_resolves_to_none() -> None:
    assert resolve_revisits([response(0, digest="d2"), revisit(1)]) == {"<v1>": None}
    assert resolve_revisits([response(0), revisit(1, digest=None)]) == {"<v1>": None}
