"""The CDXJ index: one line per archived response, mapping a request key to a place in the WARCs.

The index is derived from the WARCs and can always be rebuilt with :func:`build_index`. Lines look like
pywb's CDXJ, ``{urlkey} {timestamp} {json}``, sorted by (urlkey, timestamp, seq).

A revisit record stores no payload of its own; its entry names the record whose payload it repeats
(``orig_filename``/``orig_offset``, resolved by :mod:`capreplay.archive.warc.revisit`), so replay reads both
records by offset and never scans. A revisit whose original is not in the archive has no ``orig_*``.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import mmap
import multiprocessing
import os
from collections import defaultdict
from collections.abc import Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from json.encoder import encode_basestring_ascii as _ascii_string
from pathlib import Path
from typing import NamedTuple

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from capreplay.archive.index.keys import surt as surt, warc_timestamp
from capreplay.archive.warc.build import sha256_digest
from capreplay.archive.warc.live import http_url
from capreplay.archive.warc.revisit import Capture, digest_key, resolve_revisits
from capreplay.archive.warc.scan import scan_records
from capreplay.archive.warc.stored import StoredRecord
from capreplay.errors import ArchiveError, SnapshotError, os_reason, validation_reason
from capreplay.util.files import write_atomic

POST_BODY_LIMIT = 64 * 1024
"""Request bodies up to this size are kept in the index (base64); larger ones only as a sha256."""

_INDEXED = ("response", "revisit")
# Written only when set, so that indexes of captures (which hold no revisits) keep their exact bytes.
_ONLY_WHEN_SET = ("orig_filename", "orig_offset", "orig_length")
_IN_FRONT = ("urlkey", "timestamp")


class IndexEntry(BaseModel):
    """One archived response (or revisit) and where to find it and its request."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    urlkey: str = Field(description="SURT form of the URL (see :func:`surt`), the sort and lookup key.")
    timestamp: str = Field(pattern=r"^\d{14}$", description="WARC-Date of the response as 14 digits, UTC.")
    url: str = Field(
        description="The exact WARC-Target-URI; a WebSocket handshake archived under ws:// or wss:// in its "
        "http:// or https:// form, the URL the browser's upgrade request is matched on."
    )
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


_ONLY_WHEN_SET_SORTED = sorted(_ONLY_WHEN_SET)


class _Request(NamedTuple):
    record_id: str
    url: str | None
    method: str
    post_body: str | None
    filename: str
    offset: int
    length: int
    concurrent_to: tuple[str, ...]
    order: int


class _Response(NamedTuple):
    """What the index needs of a response or revisit record: small, and named tuples, so that the records a
    worker process read come back to the parent cheaply (they unpickle twice as fast as slotted dataclasses)."""

    record_id: str
    rec_type: str
    url: str
    timestamp: str
    status: int | None
    reason: str | None
    mime: str
    digest: str | None
    filename: str
    offset: int
    length: int
    order: int
    concurrent_to: tuple[str, ...]
    refers_to: str | None
    refers_to_uri: str | None
    refers_to_date: str | None


# Archives larger than this are read by several processes, one file each; smaller ones are not worth the
# processes' start-up (about a third of a second each).
PARALLEL_BYTES = 64 * 1024 * 1024
_FILE_ORDER = 1 << 40  # record order = file number * this + place in the file: unique and increasing


def build_index(snapshot_dir: Path, archive_files: list[str], *, workers: int | None = None) -> list[IndexEntry]:
    """Index every response and revisit record of ``archive_files`` (paths relative to the snapshot).

    Requests are paired with responses through WARC-Concurrent-To (either direction), else with the
    latest earlier unpaired request for the same URL; revisits are resolved to their originals.
    Non-HTTP records (dns:, ...) are skipped. Entries come back in capture order (``seq``). A malformed
    WARC raises :class:`ArchiveError`. Only headers are parsed (the manifest vouches for the bytes), and
    an archive over :data:`PARALLEL_BYTES` in several files is read by up to ``workers`` processes
    (default: one per core this process may run on).
    """
    jobs = [(snapshot_dir, rel, number) for number, rel in enumerate(archive_files)]
    count = worker_count(snapshot_dir, archive_files, workers)
    if count > 1:
        with process_pool(count) as pool:
            parts = list(pool.map(_scan_file, jobs))
    else:
        parts = [_scan_file(job) for job in jobs]
    return _finish([r for reqs, _ in parts for r in reqs], [r for _, resps in parts for r in resps])


def worker_count(snapshot_dir: Path, archive_files: list[str], workers: int | None) -> int:
    """How many processes read ``archive_files``: up to ``workers`` (default: one per core this process may
    run on), one file each, for an archive over :data:`PARALLEL_BYTES`; else 1, the calling process."""
    total = 0
    for rel in archive_files:
        try:
            total += (snapshot_dir / rel).stat().st_size
        except OSError as e:
            raise ArchiveError(f"cannot open: {os_reason(e)}", where=snapshot_dir / rel) from e
    count = min(len(archive_files), workers or len(os.sched_getaffinity(0)))
    return count if count > 1 and total > PARALLEL_BYTES else 1


def process_pool(count: int) -> ProcessPoolExecutor:
    """``count`` worker processes: forked when this process runs no other thread (they start at once, with
    every module imported), else spawned, since a capture indexes from a process running threads, which a
    fork would copy mid-step."""
    return ProcessPoolExecutor(count, mp_context=multiprocessing.get_context("fork" if _one_thread() else "spawn"))


def _one_thread() -> bool:
    """Does this process run one thread? Asked of the kernel: C libraries start threads Python does not see."""
    try:
        return len(os.listdir("/proc/self/task")) == 1
    except OSError:
        return False


@contextlib.contextmanager
def mapped(path: Path) -> Iterator[bytes | mmap.mmap]:
    """The whole file at ``path``, memory-mapped (an empty file as ``b""``, which cannot be mapped)."""
    try:
        with open(path, "rb") as f:
            size = f.seek(0, 2)
            data = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) if size else b""
    except OSError as e:
        raise ArchiveError(f"cannot open: {os_reason(e)}", where=path) from e
    try:
        yield data
    finally:
        if isinstance(data, mmap.mmap):
            data.close()


def _scan_file(job: tuple[Path, str, int]) -> tuple[list[_Request], list[_Response]]:
    snapshot_dir, rel, number = job
    with mapped(snapshot_dir / rel) as data:
        return _collect(rel, scan_records(data, str(snapshot_dir / rel)), number * _FILE_ORDER)


def index_records(files: Iterable[tuple[str, Iterable[StoredRecord]]]) -> list[IndexEntry]:
    """Index records already being read: ``(filename in the snapshot, its records in file order)`` per file.

    Each file's records are consumed before the next file is asked for, so a caller may read from
    anywhere (an input file, a member of a WACZ) while the entries name the file's place in the snapshot.
    """
    requests: list[_Request] = []
    responses: list[_Response] = []
    for number, (rel, records) in enumerate(files):
        reqs, resps = _collect(rel, records, number * _FILE_ORDER)
        requests += reqs
        responses += resps
    return _finish(requests, responses)


def _collect(rel: str, records: Iterable[StoredRecord], base: int) -> tuple[list[_Request], list[_Response]]:
    requests: list[_Request] = []
    responses: list[_Response] = []
    for order, rec in enumerate(records, start=base + 1):
        if rec.rec_type == "request":
            requests.append(_request(rec, rel, order))
        elif rec.rec_type in _INDEXED and _is_http(rec.url):
            responses.append(_response(rec, rel, order))
    return requests, responses


def _finish(requests: list[_Request], responses: list[_Response]) -> list[IndexEntry]:
    pairs = _pair(requests, responses)
    originals = _originals(responses)
    return [
        _entry(resp, pairs.get(resp.record_id), originals.get(resp.record_id), seq)
        for seq, resp in enumerate(responses)
    ]


def write_index(path: Path, entries: Iterable[IndexEntry]) -> None:
    """Write ``entries`` as CDXJ, sorted by (urlkey, timestamp, seq), replacing ``path`` atomically."""
    write_atomic(path, format_index(entries))


def format_index(entries: Iterable[IndexEntry]) -> bytes:
    """The CDXJ text of ``entries`` as :func:`write_index` writes it, sorted by (urlkey, timestamp, seq)."""
    ordered = sorted(entries, key=lambda e: (e.urlkey, e.timestamp, e.seq))
    parts = ((entry.seq, line_parts(entry.__dict__)) for entry in ordered)
    return "".join(f"{before}{seq}{after}" for seq, (before, after) in parts).encode()


def line_parts(fields: dict[str, object]) -> tuple[str, str]:
    """The CDXJ line of an entry (its fields, as ``entry.__dict__`` holds them) cut around its ``seq`` value:
    ``before + str(seq) + after`` is the line, newline included. Worker processes format lines before the
    capture order across files is known.

    The JSON is what ``json.dumps(fields, sort_keys=True, separators=(",", ":"))`` writes (without
    ``urlkey`` and ``timestamp``, and ``orig_*`` only when set), spelled out key by key because this runs
    once per archived response and ``json.dumps`` of a dict costs several times more.
    """
    f = fields
    orig = ""
    if f["orig_filename"] is not None or f["orig_length"] is not None or f["orig_offset"] is not None:
        orig = "".join(f',"{k}":{_json(f[k])}' for k in _ONLY_WHEN_SET_SORTED if f[k] is not None)
    before = (
        f"{f['urlkey']} {f['timestamp']} "
        f'{{"digest":{_json(f["digest"])},"filename":{_json(f["filename"])},"length":{_json(f["length"])},'
        f'"method":{_json(f["method"])},"mime":{_json(f["mime"])},"offset":{_json(f["offset"])}{orig},'
        f'"post_body":{_json(f["post_body"])},"req_filename":{_json(f["req_filename"])},'
        f'"req_length":{_json(f["req_length"])},"req_offset":{_json(f["req_offset"])},'
        f'"revisit_of":{_json(f["revisit_of"])},"seq":'
    )
    return before, f',"status":{_json(f["status"])},"url":{_json(f["url"])}}}\n'


def _json(value: object) -> str:
    """``value`` as ``json.dumps`` writes it (ASCII only)."""
    if value is None:
        return "null"
    if type(value) is str:
        return _ascii_string(value)
    if type(value) is int:
        return str(value)
    return json.dumps(value)


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
            raise SnapshotError(f"malformed index line: {validation_reason(e, 'entry')}", where=where) from e
    return entries


def _request(rec: StoredRecord, filename: str, order: int) -> _Request:
    method = (rec.method or "GET").upper()
    post_body = None
    if method not in ("GET", "HEAD") and rec.payload:
        if len(rec.payload) > POST_BODY_LIMIT:
            post_body = "sha256:" + hashlib.sha256(rec.payload).hexdigest()
        else:
            post_body = base64.b64encode(rec.payload).decode("ascii")
    # fields in order, not by keyword: a NamedTuple takes keywords 2 us slower, and this runs once per record
    return _Request(
        rec.record_id,
        _matched_url(rec.url) if rec.url else rec.url,
        method,
        post_body,
        filename,
        rec.offset,
        rec.length,
        tuple(rec.warc_header_values("WARC-Concurrent-To")),  # concurrent_to
        order,
    )


def _response(rec: StoredRecord, filename: str, order: int) -> _Response:
    digest = rec.warc_header("WARC-Payload-Digest")
    if digest is None and rec.rec_type == "response":
        digest = sha256_digest(rec.payload)
    revisit = rec.rec_type == "revisit"  # only a revisit's Refers-To headers mean anything
    content_type = rec.http_header("Content-Type")
    if content_type:
        mime = content_type.split(";", 1)[0].strip().lower() or "unk"
    else:
        mime = "warc/revisit" if revisit and not rec.http_headers else "unk"
    return _Response(  # fields in order (see _request)
        rec.record_id,
        rec.rec_type,
        _matched_url(str(rec.url)),
        _timestamp(rec.date, filename, rec.offset),
        rec.status,
        rec.reason,
        mime,
        digest,
        filename,
        rec.offset,
        rec.length,
        order,
        tuple(rec.warc_header_values("WARC-Concurrent-To")),  # concurrent_to
        rec.warc_header("WARC-Refers-To") if revisit else None,
        rec.warc_header("WARC-Refers-To-Target-URI") if revisit else None,
        rec.warc_header("WARC-Refers-To-Date") if revisit else None,
    )


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
        linked = [by_id[i] for i in resp.concurrent_to if i in by_id]
        found = linked[0] if linked else pointing_at.get(resp.record_id)
        if found is not None and found.record_id not in claimed:
            pairs[resp.record_id] = found
            claimed.add(found.record_id)
    # fallback in a second pass, so that it never takes a request another response links to
    by_url: dict[str | None, list[_Request]] = defaultdict(list)
    for req in requests:
        by_url[req.url].append(req)
    for resp in responses:
        if resp.record_id in pairs:
            continue
        for req in reversed(by_url.get(resp.url, [])):
            if req.order < resp.order and req.record_id not in claimed:
                pairs[resp.record_id] = req
                claimed.add(req.record_id)
                break
    return pairs


def _originals(responses: list[_Response]) -> dict[str, _Response]:
    """Revisit record id -> the response whose payload it repeats (see :mod:`capreplay.archive.warc.revisit`)."""
    if not any(resp.rec_type == "revisit" for resp in responses):
        return {}  # a capture's archive: no revisits, nothing to resolve
    captures = [_capture(resp) for resp in responses]
    by_id = {resp.record_id: resp for resp in responses}
    found = resolve_revisits(captures)
    return {revisit: by_id[original] for revisit, original in found.items() if original is not None}


def _capture(resp: _Response) -> Capture:
    return Capture(
        record_id=resp.record_id,
        rec_type=resp.rec_type,
        urlkey=surt(resp.url),
        digest=digest_key(resp.digest),
        timestamp=resp.timestamp,
        order=resp.order,
        refers_to=resp.refers_to,
        refers_to_key=surt(resp.refers_to_uri) if resp.refers_to_uri else None,
        refers_to_timestamp=warc_timestamp(resp.refers_to_date) if resp.refers_to_date else None,
    )


def _entry(resp: _Response, req: _Request | None, original: _Response | None, seq: int) -> IndexEntry:
    # Built without validation: every value was parsed and checked above (the timestamp by _timestamp), and
    # validating 100,000 entries again cost a third of an index build.
    return IndexEntry.model_construct(None, **entry_fields(resp, req, original, seq))


def entry_fields(resp: _Response, req: _Request | None, original: _Response | None, seq: int) -> dict[str, object]:
    """The fields of the entry of ``resp`` (see :func:`_entry`), every one of them, as a plain dict."""
    revisit_of = None
    if resp.rec_type == "revisit":
        revisit_of = resp.refers_to_uri or resp.digest
    # a dict display, not dict(...): this runs once per archived response, and a call with keywords costs more
    return {
        "urlkey": surt(resp.url),
        "timestamp": resp.timestamp,
        "url": resp.url,
        "method": req.method if req else "GET",
        "status": resp.status,
        "mime": resp.mime,
        "digest": resp.digest,
        "filename": resp.filename,
        "offset": resp.offset,
        "length": resp.length,
        "req_offset": req.offset if req else None,
        "req_length": req.length if req else None,
        "req_filename": req.filename if req and req.filename != resp.filename else None,
        "post_body": req.post_body if req else None,
        "seq": seq,
        "revisit_of": revisit_of,
        "orig_filename": original.filename if original else None,
        "orig_offset": original.offset if original else None,
        "orig_length": original.length if original else None,
    }


def _timestamp(date: str, filename: str, offset: int) -> str:
    stamp = warc_timestamp(date)
    if stamp is None:
        raise ArchiveError(f"record at offset {offset} has an invalid WARC-Date {date!r}", where=filename)
    return stamp


def _matched_url(url: str) -> str:
    """``url`` as replay matches it: a ``ws://``/``wss://`` handshake in its ``http://``/``https://`` form."""
    return http_url(url) if url[:1] in "wW" else url  # the test first: this runs once per archived record


def _is_http(url: str | None) -> bool:
    """An HTTP exchange: http(s), or a WebSocket handshake archived under ws(s) (the form of the IIPC proposal
    that Browsertrix Crawler writes; capreplay's capture writes it under http(s))."""
    return bool(url) and str(url).lower().startswith(("http://", "https://", "ws://", "wss://"))
