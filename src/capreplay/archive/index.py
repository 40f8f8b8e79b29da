"""The CDXJ index: one line per archived response, mapping a request key to a place in the WARCs.

The index is derived from the WARCs and can always be rebuilt with :func:`build_index`. Lines look like
pywb's CDXJ, ``{urlkey} {timestamp} {json}``, sorted by (urlkey, timestamp, seq).

A revisit record stores no payload of its own; its entry names the record whose payload it repeats
(``orig_filename``/``orig_offset``, resolved by :mod:`capreplay.archive.revisit`), so replay reads both
records by offset and never scans. A revisit whose original is not in the archive has no ``orig_*``.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from capreplay.archive.keys import surt as surt, warc_timestamp
from capreplay.archive.reader import StoredRecord, iter_records
from capreplay.archive.records import sha256_digest
from capreplay.archive.revisit import Capture, digest_key, resolve_revisits
from capreplay.archive.writer import write_atomic
from capreplay.errors import ArchiveError, SnapshotError

POST_BODY_LIMIT = 64 * 1024
"""Request bodies up to this size are kept in the index (base64); larger ones only as a sha256."""

_INDEXED = ("response", "revisit")
# Written only when set, so that indexes of captures (which hold no revisits) keep their exact bytes.
_ONLY_WHEN_SET = ("orig_filename", "orig_offset", "orig_length")


class IndexEntry(BaseModel):
    """One archived response (or revisit) and where to find it and its request."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    urlkey: str = Field(description="SURT form of the URL (see :func:`surt`), the sort and lookup key.")
    timestamp: str = Field(pattern=r"^\d{14}$", description="WARC-Date of the response as 14 digits, UTC.")
    url: str = Field(description="The exact WARC-Target-URI.")
    method: str = Field(description="HTTP method of the paired request; GET when no request was found.")
    status: int | None = Field(description="HTTP status; None for a revisit without HTTP headers.")
    mime: str = Field(description="Content-Type without parameters, lowercase; 'unk' if absent.")
    digest: str | None = Field(description="WARC-Payload-Digest (computed as sha256 if the record has none).")
    filename: str = Field(description="WARC file relative to the snapshot, e.g. archive/data-00000.warc.gz.")
    offset: int = Field(ge=0, description="Offset of the response record in the file.")
    length: int = Field(ge=0, description="Length of the response record in the file.")
    req_offset: int | None = Field(description="Offset of the paired request record (same file).")
    req_length: int | None = Field(description="Length of the paired request record.")
    req_filename: str | None = Field(
        default=None, description="File of the paired request when it is not the response's file."
    )
    post_body: str | None = Field(
        description="Base64 of the request body for methods other than GET/HEAD with a body; "
        "bodies over 64 KiB as 'sha256:<hex>' instead."
    )
    seq: int = Field(ge=0, description="Capture order: position among indexed records, files in order.")
    revisit_of: str | None = Field(
        default=None, description="For a revisit: the URI (else the payload digest) of the record it repeats."
    )
    orig_filename: str | None = Field(
        default=None, description="For a revisit: the file of the response whose payload it repeats."
    )
    orig_offset: int | None = Field(default=None, ge=0, description="For a revisit: that response's offset.")
    orig_length: int | None = Field(default=None, ge=0, description="For a revisit: that response's length.")

    @property
    def unresolved_revisit(self) -> bool:
        """A revisit whose original is not in the archive: there is no payload to serve for it."""
        return self.revisit_of is not None and self.orig_offset is None


@dataclass(frozen=True)
class _Request:
    record_id: str
    url: str | None
    method: str
    post_body: str | None
    filename: str
    offset: int
    length: int
    concurrent_to: tuple[str, ...]
    order: int


@dataclass(frozen=True)
class _Response:
    record: StoredRecord  # with an empty payload: only headers and places are kept
    digest: str | None
    filename: str
    order: int


def build_index(snapshot_dir: Path, archive_files: list[str]) -> list[IndexEntry]:
    """Index every response and revisit record of ``archive_files`` (paths relative to the snapshot).

    Requests are paired with responses through WARC-Concurrent-To (either direction), else with the
    latest earlier unpaired request for the same URL; revisits are resolved to their originals.
    Non-HTTP records (dns:, ...) are skipped. Entries come back in capture order (``seq``). A malformed
    WARC raises :class:`ArchiveError`.
    """

    def files() -> Iterator[tuple[str, Iterable[StoredRecord]]]:
        for rel in archive_files:
            path = snapshot_dir / rel
            try:
                stream = open(path, "rb")  # noqa: SIM115  # closed below; iter_records takes streams
            except OSError as e:
                raise ArchiveError(f"cannot open: {e.strerror or e}", where=path) from e
            with stream:
                yield rel, iter_records(stream, str(path))

    return index_records(files())


def index_records(files: Iterable[tuple[str, Iterable[StoredRecord]]]) -> list[IndexEntry]:
    """Index records already being read: ``(filename in the snapshot, its records in file order)`` per file.

    Each file's records are consumed before the next file is asked for, so a caller may read from
    anywhere (an input file, a member of a WACZ) while the entries name the file's place in the snapshot.
    """
    requests: list[_Request] = []
    responses: list[_Response] = []
    order = 0
    for rel, records in files:
        for rec in records:
            order += 1
            if rec.rec_type == "request":
                requests.append(_request(rec, rel, order))
            elif rec.rec_type in _INDEXED and _is_http(rec.url):
                responses.append(_response(rec, rel, order))
    pairs = _pair(requests, responses)
    originals = _originals(responses)
    return [
        _entry(resp, pairs.get(resp.record.record_id), originals.get(resp.record.record_id), seq)
        for seq, resp in enumerate(responses)
    ]


def write_index(path: Path, entries: Iterable[IndexEntry]) -> None:
    """Write ``entries`` as CDXJ, sorted by (urlkey, timestamp, seq), replacing ``path`` atomically."""
    write_atomic(path, format_index(entries))


def format_index(entries: Iterable[IndexEntry]) -> bytes:
    """The CDXJ text of ``entries`` as :func:`write_index` writes it, sorted by (urlkey, timestamp, seq)."""
    ordered = sorted(entries, key=lambda e: (e.urlkey, e.timestamp, e.seq))
    lines = []
    for entry in ordered:
        body = entry.model_dump(exclude={"urlkey", "timestamp"})
        for name in _ONLY_WHEN_SET:
            if body[name] is None:
                del body[name]
        lines.append(f"{entry.urlkey} {entry.timestamp} {json.dumps(body, sort_keys=True, separators=(',', ':'))}\n")
    return "".join(lines).encode("utf-8")


def load_index(path: Path) -> list[IndexEntry]:
    """Read a CDXJ index written by :func:`write_index`, in file order.

    Raises :class:`SnapshotError` naming the file and line for anything malformed.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise SnapshotError(f"cannot read the index: {e}", where=path) from e
    entries = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.startswith("!"):  # "!" lines are CDXJ metadata
            continue
        where = f"{path}:{number}"
        parts = line.split(" ", 2)
        if len(parts) != 3:
            raise SnapshotError("malformed index line: expected 'urlkey timestamp {json}'", where=where)
        try:
            fields = json.loads(parts[2])
        except json.JSONDecodeError as e:
            raise SnapshotError(f"malformed index line: invalid JSON ({e.msg})", where=where) from e
        if not isinstance(fields, dict):
            raise SnapshotError("malformed index line: the JSON is not an object", where=where)
        try:
            entries.append(IndexEntry.model_validate({**fields, "urlkey": parts[0], "timestamp": parts[1]}))
        except ValidationError as e:
            first = e.errors()[0]
            loc = ".".join(str(p) for p in first["loc"]) or "entry"
            raise SnapshotError(f"malformed index line: {loc}: {first['msg']}", where=where) from e
    return entries


def _request(rec: StoredRecord, filename: str, order: int) -> _Request:
    method = (rec.method or "GET").upper()
    post_body = None
    if method not in ("GET", "HEAD") and rec.payload:
        if len(rec.payload) > POST_BODY_LIMIT:
            post_body = "sha256:" + hashlib.sha256(rec.payload).hexdigest()
        else:
            post_body = base64.b64encode(rec.payload).decode("ascii")
    return _Request(
        record_id=rec.record_id,
        url=rec.url,
        method=method,
        post_body=post_body,
        filename=filename,
        offset=rec.offset,
        length=rec.length,
        concurrent_to=tuple(rec.warc_header_values("WARC-Concurrent-To")),
        order=order,
    )


def _response(rec: StoredRecord, filename: str, order: int) -> _Response:
    digest = rec.warc_header("WARC-Payload-Digest")
    if digest is None and rec.rec_type == "response":
        digest = sha256_digest(rec.payload)
    # keep the headers, drop the body: an index of a large archive must not hold every payload
    slim = replace(rec, payload=b"")
    return _Response(record=slim, digest=digest, filename=filename, order=order)


def _pair(requests: list[_Request], responses: list[_Response]) -> dict[str, _Request]:
    """Response record id -> its request: explicit WARC-Concurrent-To links first, then by URL."""
    by_id = {r.record_id: r for r in requests}
    pointing_at: dict[str, _Request] = {}
    for req in requests:
        for target in req.concurrent_to:
            pointing_at.setdefault(target, req)
    pairs: dict[str, _Request] = {}
    claimed: set[str] = set()
    for resp in responses:
        rec = resp.record
        linked = [by_id[i] for i in rec.warc_header_values("WARC-Concurrent-To") if i in by_id]
        found = linked[0] if linked else pointing_at.get(rec.record_id)
        if found is not None and found.record_id not in claimed:
            pairs[rec.record_id] = found
            claimed.add(found.record_id)
    # fallback in a second pass, so that it never takes a request another response links to
    by_url: dict[str | None, list[_Request]] = defaultdict(list)
    for req in requests:
        by_url[req.url].append(req)
    for resp in responses:
        rec = resp.record
        if rec.record_id in pairs:
            continue
        for req in reversed(by_url.get(rec.url, [])):
            if req.order < resp.order and req.record_id not in claimed:
                pairs[rec.record_id] = req
                claimed.add(req.record_id)
                break
    return pairs


def _originals(responses: list[_Response]) -> dict[str, _Response]:
    """Revisit record id -> the response whose payload it repeats (see :mod:`capreplay.archive.revisit`)."""
    if not any(resp.record.rec_type == "revisit" for resp in responses):
        return {}  # a capture's archive: no revisits, nothing to resolve
    captures = [_capture(resp) for resp in responses]
    by_id = {resp.record.record_id: resp for resp in responses}
    found = resolve_revisits(captures)
    return {revisit: by_id[original] for revisit, original in found.items() if original is not None}


def _capture(resp: _Response) -> Capture:
    rec = resp.record
    revisit = rec.rec_type == "revisit"  # only a revisit's Refers-To headers mean anything
    refers_uri = rec.warc_header("WARC-Refers-To-Target-URI") if revisit else None
    refers_date = rec.warc_header("WARC-Refers-To-Date") if revisit else None
    return Capture(
        record_id=rec.record_id,
        rec_type=rec.rec_type,
        urlkey=surt(str(rec.url)),
        digest=digest_key(resp.digest),
        timestamp=_timestamp(rec.date, resp.filename, rec.offset),
        order=resp.order,
        refers_to=rec.warc_header("WARC-Refers-To") if revisit else None,
        refers_to_key=surt(refers_uri) if refers_uri else None,
        refers_to_timestamp=warc_timestamp(refers_date) if refers_date else None,
    )


def _entry(resp: _Response, req: _Request | None, original: _Response | None, seq: int) -> IndexEntry:
    rec = resp.record
    url = str(rec.url)
    revisit_of = None
    if rec.rec_type == "revisit":
        revisit_of = rec.warc_header("WARC-Refers-To-Target-URI") or resp.digest
    content_type = rec.http_header("Content-Type")
    if content_type:
        mime = content_type.split(";", 1)[0].strip().lower() or "unk"
    else:
        mime = "warc/revisit" if rec.rec_type == "revisit" and not rec.http_headers else "unk"
    return IndexEntry(
        urlkey=surt(url),
        timestamp=_timestamp(rec.date, resp.filename, rec.offset),
        url=url,
        method=req.method if req else "GET",
        status=rec.status,
        mime=mime,
        digest=resp.digest,
        filename=resp.filename,
        offset=rec.offset,
        length=rec.length,
        req_offset=req.offset if req else None,
        req_length=req.length if req else None,
        req_filename=req.filename if req and req.filename != resp.filename else None,
        post_body=req.post_body if req else None,
        seq=seq,
        revisit_of=revisit_of,
        orig_filename=original.filename if original else None,
        orig_offset=original.record.offset if original else None,
        orig_length=original.record.length if original else None,
    )


def _timestamp(date: str, filename: str, offset: int) -> str:
    stamp = warc_timestamp(date)
    if stamp is None:
        raise ArchiveError(f"record at offset {offset} has an invalid WARC-Date {date!r}", where=filename)
    return stamp


def _is_http(url: str | None) -> bool:
    return bool(url) and str(url).lower().startswith(("http://", "https://"))
