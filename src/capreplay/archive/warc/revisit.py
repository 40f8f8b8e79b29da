"""Which response a revisit record repeats: a pure function over short summaries of the records.

A ``revisit`` record says "the same payload as an earlier capture" and stores no body of its own, so
replay needs the original's. The index points each revisit at its original by these rules, in order:

1. ``WARC-Refers-To`` names the original's record id: that record, when the input holds it. A revisit
   that refers to another revisit is followed down the chain to a response.
2. Otherwise the same URL (``WARC-Refers-To-Target-URI``, else the revisit's own target URI, compared
   as SURT keys) with the same payload digest (compared as raw bytes, so ``sha1:`` in base32 equals
   the same digest in hex). Among several such responses: the one captured at ``WARC-Refers-To-Date``,
   else the latest one before the revisit, else the earliest one after it.

A revisit whose original the input does not hold resolves to None; the caller reports it and leaves it
out, since there is nothing to serve for it.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import hashlib
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Capture:
    """What resolution needs to know about one response or revisit record."""

    record_id: str
    rec_type: str
    """``response`` or ``revisit``."""
    urlkey: str
    """SURT key of the record's own target URI."""
    digest: str | None
    """Payload digest normalised by :func:`digest_key`."""
    timestamp: str
    """WARC-Date as 14 digits."""
    order: int
    """Position in the input: files in order, records in file order."""
    refers_to: str | None = None
    """A revisit's WARC-Refers-To (the original's record id)."""
    refers_to_key: str | None = None
    """SURT key of a revisit's WARC-Refers-To-Target-URI, else of its own target URI."""
    refers_to_timestamp: str | None = None
    """A revisit's WARC-Refers-To-Date as 14 digits."""


def digest_key(labelled: str | None) -> str | None:
    """A digest in one spelling, ``algo:hex``, whatever base32, hex or base64 form it was written in.

    Digests of an algorithm hashlib does not know, or in an unknown encoding, are kept as written
    (stripped); they still compare equal to the same text.
    """
    if not labelled or not labelled.strip():
        return None
    algo, sep, value = labelled.strip().partition(":")
    algo = algo.lower().replace("-", "")
    if not sep:
        return labelled.strip()
    try:
        size = hashlib.new(algo).digest_size
    except (ValueError, TypeError):  # TypeError: a name with a NUL byte in it
        return f"{algo}:{value.strip()}"
    raw = _decode(value.strip(), size)
    return f"{algo}:{raw.hex()}" if raw is not None else f"{algo}:{value.strip()}"


def _decode(value: str, size: int) -> bytes | None:
    """The raw digest in ``value`` when it is hex, base32 or base64 of the right length."""
    candidates: list[bytes] = []
    if len(value) == 2 * size:
        with contextlib.suppress(ValueError):  # not hex after all: try the other encodings
            candidates.append(bytes.fromhex(value))
    for decode in (_b32, _b64):
        try:
            candidates.append(decode(value))
        except (ValueError, binascii.Error):
            continue
    return next((c for c in candidates if len(c) == size), None)


def _b32(value: str) -> bytes:
    return base64.b32decode(value.upper() + "=" * (-len(value) % 8))


def _b64(value: str) -> bytes:
    padded = value + "=" * (-len(value) % 4)
    return base64.b64decode(padded, altchars=b"-_" if "-" in value or "_" in value else None, validate=True)


def resolve_revisits(captures: Sequence[Capture]) -> dict[str, str | None]:
    """For every revisit in ``captures``: the record id of the response it repeats, or None.

    Pure and linear in the number of records (one pass to build the lookups, one lookup per revisit).
    """
    revisits = [c for c in captures if c.rec_type == "revisit"]
    if not revisits:
        return {}
    by_id = {c.record_id: c for c in captures}
    # only responses at a URL some revisit looks under can be an original: keep the lookup that small
    wanted = {c.refers_to_key or c.urlkey for c in revisits}
    by_content: dict[tuple[str, str], list[Capture]] = defaultdict(list)
    for c in captures:
        if c.rec_type == "response" and c.digest is not None and c.urlkey in wanted:
            by_content[(c.urlkey, c.digest)].append(c)
    resolved: dict[str, str | None] = {}
    for c in revisits:
        resolved[c.record_id] = _follow(c, by_id, by_content, resolved, set())
    return resolved


def _follow(
    revisit: Capture,
    by_id: dict[str, Capture],
    by_content: dict[tuple[str, str], list[Capture]],
    resolved: dict[str, str | None],
    seen: set[str],
) -> str | None:
    """The response at the end of ``revisit``'s chain; ``seen`` stops a chain that loops."""
    if revisit.record_id in resolved:
        return resolved[revisit.record_id]
    seen.add(revisit.record_id)
    target = by_id.get(revisit.refers_to) if revisit.refers_to else None
    if target is not None and target.record_id not in seen:
        if target.rec_type == "response":
            return target.record_id
        return _follow(target, by_id, by_content, resolved, seen)
    if revisit.digest is None:
        return None
    found = _by_url_and_digest(revisit, by_content.get((revisit.refers_to_key or revisit.urlkey, revisit.digest), []))
    return found.record_id if found else None


def _by_url_and_digest(revisit: Capture, candidates: list[Capture]) -> Capture | None:
    """The original among responses with the revisit's URL and digest (``candidates`` are in input order)."""
    if not candidates:
        return None
    if revisit.refers_to_timestamp:
        dated = [c for c in candidates if c.timestamp == revisit.refers_to_timestamp]
        if dated:
            return dated[0]
    earlier = [c for c in candidates if c.order < revisit.order]
    return earlier[-1] if earlier else candidates[0]
