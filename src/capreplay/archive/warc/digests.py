"""Which form of a record's body a foreign tool hashed: the one the WARC standard names, or a known other.

WARC/1.1 takes ``WARC-Payload-Digest`` over the payload as the record stores it: for an HTTP message,
the bytes after its head with the transfer and content codings as sent. warcio, pywb and capreplay
compute that. Real archives also hold digests over other forms of the same body, and pywb and
ReplayWeb.page replay those records all the same. A digest that does not match the stored form is
therefore tried against these forms, in this order, and accepted (and reported) if one matches:

- ``dechunked``: the body with its chunked transfer coding removed, as an HTTP client hands it on;
- ``decoded``: the body with its chunks removed and its Content-Encoding (gzip, deflate, br) undone,
  the bytes a browser renders;
- ``http-body``: in a record whose URI is not ``http(s)`` but whose block is an HTTP message, the body
  after its head. Scoop writes its capture-time screenshot and PDF as ``file:///`` responses that way;
  readers that look for HTTP only under ``http(s)`` URIs, warcio's ``check`` among them, hash the
  whole block instead and report those digests as failed. A WebSocket handshake archived under ``ws(s)://``
  is checked the same way: the whole block is its stored form, its body this one.

A block digest has one other form, in a record that holds an HTTP message:

- ``payload``: the payload alone (the body after the HTTP head, as stored). Webrecorder's 2019 recorder
  wrote the payload's digest as ``WARC-Block-Digest`` too; pywb, warcio's replay and wabac.js do not check
  digests, so those records replay everywhere, and the block they carry is whole (its payload matches).

A digest that matches no form is a mismatch, reported with the digest of the stored form (``actual``) in the
algorithm and spelling of the expected one.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

from capreplay.archive.warc.build import digest_matches
from capreplay.archive.warc.http import dechunk, decode_body, is_chunked, parse_http_head
from capreplay.models.manifest import BodyForm

type DigestKind = Literal["block", "payload"]

FORMS: dict[BodyForm, str] = {
    "dechunked": "the body with its chunked transfer coding removed",
    "decoded": "the body with its Content-Encoding undone",
    "http-body": "the body after the HTTP head of a record whose URI is not http(s)",
    "payload": "the payload alone, not the whole block (as Webrecorder's 2019 recorder wrote it)",
}
"""Each documented form, as the import's report describes it."""


@dataclass(frozen=True)
class DigestFinding:
    """A record digest that does not match the form the WARC standard names."""

    digest: DigestKind
    expected: str
    """The digest as the record labels it, e.g. ``sha1:3ECFQ...``."""
    actual: str
    """The digest of the stored form, in the expected one's algorithm and spelling."""
    form: BodyForm | None
    """The other form it matches; None if it matches none (a mismatch)."""


def check_record(
    *, block: bytes, payload: bytes, headers: list[tuple[str, str]] | None, labels: dict[str, str]
) -> list[DigestFinding]:
    """Findings for the block and payload digests of one record (empty when both match as stored).

    ``payload`` is the stored payload (the whole block for a record the reader holds no HTTP message
    in) and ``headers`` the HTTP headers, None for such a record. Algorithms that cannot be computed are
    passed over, as ``warcio check`` does.
    """
    found = []
    block_digest = labels.get("WARC-Block-Digest")
    if block_digest and digest_matches(block_digest, block) is False:
        # the payload's digest written as the block's: only a record with an HTTP head has a payload apart
        form: BodyForm | None = "payload" if headers is not None and digest_matches(block_digest, payload) else None
        found.append(DigestFinding("block", block_digest, spelled_like(block_digest, block), form))
    payload_digest = labels.get("WARC-Payload-Digest")
    if payload_digest and digest_matches(payload_digest, payload) is False:
        form = next((name for name, body in other_forms(block, payload, headers)
                     if digest_matches(payload_digest, body)), None)  # fmt: skip
        found.append(DigestFinding("payload", payload_digest, spelled_like(payload_digest, payload), form))
    return found


def other_forms(
    block: bytes, payload: bytes, headers: list[tuple[str, str]] | None
) -> Iterator[tuple[BodyForm, bytes]]:
    """The documented other forms of the body, each computed only when the one before did not match."""
    if headers is None:
        if block.startswith(b"HTTP/"):
            _, _, body = parse_http_head(block)
            yield "http-body", body
        return
    body = payload
    if is_chunked(headers):
        plain = dechunk(payload)
        if plain is not None:
            body = plain
            yield "dechunked", body
    encoding = next((v for n, v in headers if n.lower() == "content-encoding"), None)
    if encoding:
        decoded = decode_body(encoding, body)
        if decoded is not None and decoded != body:
            yield "decoded", decoded


def spelled_like(labelled: str, data: bytes) -> str:
    """``data``'s digest labelled as ``labelled`` is: same algorithm, and hex, base32 or base64 alike."""
    algo, _, value = labelled.strip().partition(":")
    raw = hashlib.new(algo.lower().replace("-", ""), data).digest()  # checkable: digest_matches said False
    value = value.strip()
    if len(value) == 2 * len(raw) and all(c in "0123456789abcdefABCDEF" for c in value):
        text = raw.hex().upper() if value.isupper() else raw.hex()
    elif value.rstrip("=").upper() == value.rstrip("=") and len(value.rstrip("=")) == -(-len(raw) * 8 // 5):
        text = base64.b32encode(raw).decode()
        text = text if value.endswith("=") else text.rstrip("=")
    else:
        text = base64.b64encode(raw).decode()
    return f"{algo}:{text}"
