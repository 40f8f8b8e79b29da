"""The CDXJ index of a snapshot's own WARC files, each file read once, by worker processes side by side.

What :func:`capreplay.archive.index.cdxj.build_index` computes, as the text :func:`write_index` writes, with
the work moved out of the parent: each worker scans one file, pairs its requests and responses, and formats
its lines, leaving out only the capture order (``seq``), which depends on the files before it. The parent
numbers, sorts and joins the lines. A worker may also hand each response's WARC headers and block to a
:class:`ResponseSink` (the ready responses of :mod:`capreplay.replay.ready.with_index`), so that a record is
inflated and parsed once for everything made of it.

Pairing within a file is pairing across the archive when nothing links files: a request and its response
sit in one file in every archive capreplay writes. Each worker reports the record ids of its file and those
its records name but do not hold; the parent checks that no id is in two files and that no name points
into another file. Responses left unpaired in their file are paired by URL in the parent, in capture
order, with the requests left unclaimed in earlier files, as the whole-archive rule would. An archive
with revisits (whose originals may be anywhere) or with links across files is indexed the whole-archive
way instead (:func:`build_index`): same bytes, slower.
"""

from __future__ import annotations

import contextlib
import gc
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple, Protocol

from capreplay.archive.index.cdxj import (
    _FILE_ORDER,
    _is_http,
    _matched_url,
    _pair,
    _Request,
    _request,
    _Response,
    _response,
    build_index,
    entry_fields,
    line_parts,
    mapped,
    process_pool,
    worker_count,
)
from capreplay.archive.warc.scan import scan_blocks
from capreplay.archive.warc.stored import StoredRecord

MAX_JOBS = 255
"""Files are grouped into at most this many jobs (each one output of a :class:`ResponseSink`)."""


class ResponseSink(Protocol):
    """Takes every HTTP response record of one job's files as it is read, and gives back what it made of it."""

    def add(self, url: str, record: StoredRecord | None, headers: list[tuple[str, str]], block: bytes) -> object:
        """What was made of the response at ``url`` (its whole record when the scan parsed it whole, and its
        checked WARC headers and block); kept by its line."""
        ...

    def close(self) -> bool:
        """The job is done: is what the sink made whole (False after a failed write, say)?"""
        ...


SinkFactory = Callable[[int], ResponseSink]
"""Makes the sink of job number ``n``, in the worker process: it must pickle (a module-level class's instance)."""


class Line(NamedTuple):
    """One index line, with what the ready responses ask of it."""

    urlkey: str
    text: str
    """The whole line, newline included."""
    simple_get: bool
    """A ``GET`` without a body, not a revisit: the one recording of its URL could be sent ready-made."""
    made: object
    """What the :class:`ResponseSink` made of the response (None without a sink, or for a revisit)."""


@dataclass(frozen=True)
class BuiltIndex:
    """A snapshot's index as :func:`write_index` writes it, and its lines in that order."""

    data: bytes
    lines: list[Line]
    jobs: int
    """How many jobs read the files (and how many sinks there were): job ``n`` had sink ``n``."""
    sinks_whole: bool
    """Did every sink end whole (see :meth:`ResponseSink.close`)?"""


# A line and its sort key: (urlkey, timestamp, file, seq in the file, before, after, simple_get, made), where
# (urlkey, timestamp, file, seq) sorts as (urlkey, timestamp, seq), seq in the file being the seq less the
# responses of the files before, which the parent adds; the line is before + seq + after. A plain tuple, not a
# NamedTuple: each worker hands the parent 25,000 of them per file, and a NamedTuple pickles (and unpickles)
# through a Python call of its own, three times slower.
_Formatted = tuple[str, str, int, int, str, str, bool, object]


@dataclass
class _FilePart:
    number: int
    filename: str
    responses: int
    lines: list[_Formatted]
    unpaired: list[tuple[int, _Response, object]]  # (seq in the file, response, made)
    leftover: list[_Request]  # requests no response of the file claimed
    request_ids: set[str]
    response_ids: set[str]
    foreign: set[str]  # ids the records name (Concurrent-To) that are no record of theirs in this file
    revisits: bool
    made_at: dict[int, object]  # response offset -> what the sink made of it


def build_index_text(
    snapshot_dir: Path, archive_files: list[str], *, workers: int | None = None, sink: SinkFactory | None = None
) -> BuiltIndex:
    """The index of ``archive_files`` (paths relative to the snapshot), the bytes :func:`write_index` would write
    for :func:`build_index`'s entries, each file read once; with ``sink``, every response also goes to the
    sink of its job (see :func:`jobs_of`)."""
    count = worker_count(snapshot_dir, archive_files, workers)
    jobs = [(snapshot_dir, group, number, sink) for number, group in enumerate(jobs_of(archive_files, count > 1))]
    # the workers' results (millions of small objects, no cycles) would set off full collections over them all
    with paused_gc():
        if count > 1:
            with process_pool(count) as pool:
                done = list(pool.map(_index_job, jobs))
        else:
            done = [_index_job(job) for job in jobs]
        parts = [part for job_parts, _ in done for part in job_parts]
        lines = _merged(parts)
        if lines is None:  # revisits, or records that link files: the whole-archive way, with the sinks' work kept
            lines = _whole_archive(snapshot_dir, archive_files, parts)
        return BuiltIndex("".join(line.text for line in lines).encode(), lines, len(jobs), all(w for _, w in done))


@contextlib.contextmanager
def paused_gc() -> Iterator[None]:
    """The cyclic garbage collector off for the block (as it was after). Indexing makes millions of small
    objects and no reference cycles: the collector's passes over them, set off by their number alone, cost
    a worker about 5% and the parent half of its merge."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()


def jobs_of(archive_files: list[str], parallel: bool) -> list[list[tuple[int, str]]]:
    """The files (numbered in order) each job reads: all in one when not ``parallel``, else one file each, or
    consecutive runs of them when there are more than :data:`MAX_JOBS` files."""
    numbered = list(enumerate(archive_files))
    if not parallel:
        return [numbered] if numbered else []
    per_job = -(-len(numbered) // MAX_JOBS)
    return [numbered[i : i + per_job] for i in range(0, len(numbered), per_job)]


def _index_job(job: tuple[Path, list[tuple[int, str]], int, SinkFactory | None]) -> tuple[list[_FilePart], bool]:
    """The job's files indexed, and whether its sink's work is whole."""
    snapshot_dir, files, number, factory = job
    sink = factory(number) if factory is not None else None
    try:
        with paused_gc():
            parts = [_index_file(snapshot_dir / rel, rel, n, sink) for n, rel in files]
    finally:
        whole = sink.close() if sink is not None else True
    return parts, whole


def _index_file(path: Path, rel: str, number: int, sink: ResponseSink | None) -> _FilePart:
    requests: list[_Request] = []
    responses: list[_Response] = []
    made_at: dict[int, object] = {}
    with mapped(path) as data:
        records = scan_blocks(data, str(path), whole_responses=sink is not None)
        for order, (rec, headers, block, whole) in enumerate(records, start=number * _FILE_ORDER + 1):
            if rec.rec_type == "request":
                requests.append(_request(rec, rel, order))
            elif rec.rec_type in ("response", "revisit") and _is_http(rec.url):
                responses.append(_response(rec, rel, order))
                if sink is not None and rec.rec_type == "response":
                    made_at[rec.offset] = sink.add(_matched_url(str(rec.url)), rec if whole else None, headers, block)
    return _paired(number, rel, requests, responses, made_at)


def _paired(
    number: int, rel: str, requests: list[_Request], responses: list[_Response], made_at: dict[int, object]
) -> _FilePart:
    """The file's lines, paired within the file, and what the parent needs to check that this pairing is the
    archive's (see the module's docstring)."""
    request_ids = {r.record_id for r in requests}
    response_ids = {r.record_id for r in responses}
    foreign = {i for r in responses for i in r.concurrent_to if i not in request_ids}
    foreign.update(i for r in requests for i in r.concurrent_to if i not in response_ids)
    revisits = any(r.rec_type == "revisit" for r in responses)
    part = _FilePart(number, rel, len(responses), [], [], [], request_ids, response_ids, foreign, revisits, made_at)
    if revisits:
        return part  # indexed the whole-archive way: formatting would be wasted
    pairs = _pair(requests, responses)
    claimed = {r.record_id for r in pairs.values()}
    part.leftover = [r for r in requests if r.record_id not in claimed]
    for seq, resp in enumerate(responses):
        made = made_at.get(resp.offset)
        req = pairs.get(resp.record_id)
        if req is None:
            part.unpaired.append((seq, resp, made))
        else:
            part.lines.append(_formatted(entry_fields(resp, req, None, seq), number, made))
    part.lines.sort()  # here, in parallel: the parent then merges sorted runs
    return part


def _formatted(fields: dict[str, object], file: int, made: object) -> _Formatted:
    before, after = line_parts(fields)
    simple = fields["method"] == "GET" and not fields["post_body"] and fields["revisit_of"] is None
    urlkey, timestamp, seq = fields["urlkey"], fields["timestamp"], fields["seq"]
    return (urlkey, timestamp, file, seq, before, after, simple, made)  # type: ignore[return-value]


def _merged(parts: list[_FilePart]) -> list[Line] | None:
    """Every file's lines in index order, with the capture order across files; None when the files' pairings
    are not the archive's (revisits, an id in two files, a link into another file)."""
    if any(p.revisits for p in parts) or _linked(parts):
        return None
    rows: list[_Formatted] = []
    base = 0
    bases = {}
    for part in parts:
        bases[part.number] = base
        rows += part.lines
        base += part.responses
    # a response its file left unpaired takes the latest unclaimed earlier request for its URL, files in order
    by_url: dict[str | None, list[_Request]] = defaultdict(list)
    for part in parts:
        for req in part.leftover:
            by_url[req.url].append(req)
    claimed: set[str] = set()
    for part in parts:
        for seq, resp, made in part.unpaired:
            found = None
            for req in reversed(by_url.get(resp.url, [])):
                if req.order < resp.order and req.record_id not in claimed:
                    found = req
                    claimed.add(req.record_id)
                    break
            rows.append(_formatted(entry_fields(resp, found, None, seq), part.number, made))
    rows.sort()  # runs sorted by their workers: a merge, comparing tuples in C
    return [Line(r[0], f"{r[4]}{bases[r[2]] + r[3]}{r[5]}", r[6], r[7]) for r in rows]


def _linked(parts: list[_FilePart]) -> bool:
    """Does any record id stand in two files, or any record name a request or response of another file?"""
    requests: set[str] = set()
    responses: set[str] = set()
    for part in parts:
        if not requests.isdisjoint(part.request_ids) or not responses.isdisjoint(part.response_ids):
            return True
        requests |= part.request_ids
        responses |= part.response_ids
    return any(not p.foreign.isdisjoint(requests) or not p.foreign.isdisjoint(responses) for p in parts)


def _whole_archive(snapshot_dir: Path, archive_files: list[str], parts: list[_FilePart]) -> list[Line]:
    """The lines as :func:`build_index` pairs and resolves them over the whole archive (the files read again)."""
    made = {(p.filename, offset): m for p in parts for offset, m in p.made_at.items()}
    entries = sorted(build_index(snapshot_dir, archive_files), key=lambda e: (e.urlkey, e.timestamp, e.seq))
    lines = []
    for entry in entries:
        row = _formatted(entry.__dict__, 0, made.get((entry.filename, entry.offset)))
        lines.append(Line(row[0], f"{row[4]}{row[3]}{row[5]}", row[6], row[7]))
    return lines
