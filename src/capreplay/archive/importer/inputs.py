"""Reading the inputs of ``capreplay import``: every record of every WARC, checked and indexed, nothing written.

An input is a WARC (gzip, one member per record, or uncompressed), a WACZ (whose data package digests
are checked first, see :mod:`capreplay.archive.wacz.read`) or a HAR, which is converted into a WARC in
memory first (:mod:`capreplay.archive.har.to_warc`) and then read like any other. Each WARC is read once,
strictly, with its block and payload digests checked as ``warcio check`` does, except that a payload digest over a
documented other form of the body is accepted and noted (:mod:`capreplay.archive.warc.digests`); the index is
built in the same pass. A digest that matches nothing is an error unless mismatches are allowed, and then
it is noted too. Every
WARC keeps its bytes: the snapshot holds it byte for byte under ``archive/``, so the offsets found here
are the offsets in the snapshot. Records other than responses, revisits and requests (warcinfo,
metadata, resource, dns, conversion) are read, checked and passed over.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass, field, replace
from io import BytesIO
from pathlib import Path, PurePosixPath
from typing import BinaryIO

from capreplay.archive.har.read import read_har
from capreplay.archive.har.to_warc import har_to_warc, skipped_line, warc_name
from capreplay.archive.importer.navigations import Navigations, frame_sources, request_hints
from capreplay.archive.importer.page_choice import HTML_TYPES, ListedPage, warcinfo_pages, warcinfo_software
from capreplay.archive.index.cdxj import IndexEntry, index_records
from capreplay.archive.wacz.read import ZIP_ERRORS, read_wacz
from capreplay.archive.warc.read import iter_records
from capreplay.archive.warc.stored import StoredRecord
from capreplay.errors import ArchiveError, os_reason
from capreplay.models.manifest import DigestMismatch, OtherFormDigest

_CHUNK = 1 << 20
_GZIP_MAGIC = b"\x1f\x8b"
_UNSAFE = re.compile(r"[^A-Za-z0-9._+-]")

type Opener = Callable[[], AbstractContextManager[BinaryIO]]


@dataclass(frozen=True)
class Source:
    """One WARC to import: where it is read from, and where it goes in the snapshot."""

    name: str
    """Its path in the snapshot, ``archive/<file>``."""
    where: str
    """How messages name it: the input path, or ``FILE.wacz!archive/<member>``."""
    size: int
    sha256: str
    opener: Opener
    origin: int
    """Position of the input file (on the command line) it comes from."""
    label: str
    """How the manifest names it: the input's file name, or ``NAME.wacz!archive/<member>``."""


@dataclass
class Notes:
    """What the scan saw besides the index: page hints, tools, and counts for the summary."""

    listed: list[ListedPage] = field(default_factory=list)
    """Pages named by warcinfo ``json-metadata`` (Webrecorder)."""
    documents: set[tuple[str, int]] = field(default_factory=set)
    """(file, offset) of records marked ``WARC-Resource-Type: document``."""
    navigations: Navigations = field(default_factory=Navigations)
    """Sec-Fetch headers, redirects and frames, for telling pages from framed documents."""
    software: dict[int, list[str]] = field(default_factory=dict)
    """Input position -> the ``software`` its warcinfo records name."""
    records: Counter[str] = field(default_factory=Counter)
    """Records by WARC-Type."""
    warnings: list[str] = field(default_factory=list)
    other_forms: list[OtherFormDigest] = field(default_factory=list)
    """Digests accepted because they match a documented other form of the body (or, for a block digest, the
    payload alone)."""
    mismatches: list[DigestMismatch] = field(default_factory=list)
    """Digests that match nothing, when mismatches are allowed (else the first one is an error)."""


@dataclass(frozen=True)
class Scan:
    """Everything read from the inputs."""

    sources: list[Source]
    entries: list[IndexEntry]
    notes: Notes
    wacz_pages: list[ListedPage]
    """The pages lists of the WACZ and HAR inputs, in input order."""


def scan_inputs(inputs: list[Path], *, allow_digest_mismatch: bool = False) -> Scan:
    """Check and index every input; raises :class:`ArchiveError` naming the file at the first problem.

    ``allow_digest_mismatch`` lets a digest that matches nothing through, noted in the scan's notes.
    """
    sources: list[Source] = []
    wacz_pages: list[ListedPage] = []
    notes = Notes()
    for origin, path in enumerate(inputs):
        if path.name.lower().endswith(".har"):
            converted = _har_source(path, origin, notes)
            sources.append(converted.source)
            wacz_pages.extend(converted.pages)
        elif path.name.lower().endswith(".wacz"):
            wacz = read_wacz(path, allow_digest_mismatch=allow_digest_mismatch)
            wacz_pages.extend(wacz.pages)
            notes.mismatches.extend(wacz.mismatches)
            for warc in wacz.warcs:
                opener = _member_opener(wacz.open, warc.member)
                sources.append(Source(warc.member, wacz.where(warc.member), warc.size, warc.sha256, opener, origin,
                                      f"{path.name}!{warc.member}"))  # fmt: skip
        else:
            size, sha256 = hash_file(path)
            sources.append(Source(path.name, str(path), size, sha256, _file_opener(path), origin, path.name))
    sources = _name_in_snapshot(sources)
    served: Counter[int] = Counter()  # responses and revisits per input
    entries = index_records(_read(sources, notes, served, allow_digest_mismatch))
    for origin, path in enumerate(inputs):
        if not served[origin]:
            raise ArchiveError("holds no response or revisit records: there is nothing to replay", where=path)
    return Scan(sources, entries, notes, wacz_pages)


@dataclass(frozen=True)
class _HarSource:
    source: Source
    pages: list[ListedPage]


def _har_source(path: Path, origin: int, notes: Notes) -> _HarSource:
    """A HAR as the WARC it converts to, kept in memory (see :mod:`capreplay.archive.har.to_warc`); the
    entries it leaves out are one warning line, its pages with no URL another."""
    har = read_har(path)
    converted = har_to_warc(har.har, name=str(path), sha256=har.sha256, attachments=har.attachments)
    if converted.skipped:
        notes.warnings.append(skipped_line(str(path), converted.skipped))
    if converted.unplaced:
        notes.warnings.append(f"{path}: {len(converted.unplaced)} page(s) name no URL and no entry of theirs "
                              f"holds a response ({', '.join(converted.unplaced)}); left out")  # fmt: skip
    if converted.untimed:
        listed = ", ".join(f"#{n}" for n in converted.untimed)
        notes.warnings.append(f"{path}: the HAR gives no times for the events of {len(converted.untimed)} event "
                              f"stream(s) ({listed}); archived at ts 0, replay sends them at once")  # fmt: skip
    if converted.messages_left_out:
        notes.warnings.append(f"{path}: {converted.messages_left_out} WebSocket message(s) neither text, binary nor "
                              "close (ping, pong) left out")  # fmt: skip
    data = converted.warc
    name = warc_name(path.name)
    source = Source(name, f"{path} (converted to {name})", len(data), hashlib.sha256(data).hexdigest(),
                    lambda: BytesIO(data), origin, f"{path.name} (converted to {name})")  # fmt: skip
    return _HarSource(source, converted.pages)


def hash_file(path: Path) -> tuple[int, str]:
    """Size and sha256 of a file, read in chunks."""
    digest = hashlib.sha256()
    size = 0
    try:
        with path.open("rb") as f:
            while chunk := f.read(_CHUNK):
                digest.update(chunk)
                size += len(chunk)
    except OSError as e:
        raise ArchiveError(f"cannot read: {os_reason(e)}", where=path) from e
    return size, digest.hexdigest()


def _read(
    sources: list[Source], notes: Notes, served: Counter[int], allow_mismatch: bool
) -> Iterator[tuple[str, Iterable[StoredRecord]]]:
    """Each source's snapshot name and its records, observed on the way to the index."""
    for source in sources:
        with source.opener() as stream:
            yield source.name, _observe(stream, source, notes, served, allow_mismatch)


def _observe(
    stream: BinaryIO, source: Source, notes: Notes, served: Counter[int], allow_mismatch: bool
) -> Iterator[StoredRecord]:
    """The source's records, noting page hints, digests and counts; a failing zip member is an ArchiveError."""
    records = iter_records(stream, source.where, check_digests=True, allow_digest_mismatch=allow_mismatch)
    while True:
        try:
            rec = next(records)
        except StopIteration:
            return
        except ZIP_ERRORS as e:  # the zip under a WACZ member, or the disk under a file, failed
            raise ArchiveError(f"cannot read: {e}", where=source.where) from e
        notes.records[rec.rec_type] += 1
        _note_digests(rec, source.label, notes)
        if rec.rec_type == "warcinfo":
            notes.software.setdefault(source.origin, []).extend(warcinfo_software(rec.payload))
            pages, problem = warcinfo_pages(rec.payload)
            notes.listed.extend(pages)
            if problem:
                notes.warnings.append(f"{source.where}: {problem}")
        elif rec.rec_type == "request":
            hints = request_hints(rec.http_headers)
            if hints is not None:
                notes.navigations.requests[(source.name, rec.offset)] = hints
        elif rec.rec_type in ("response", "revisit"):
            served[source.origin] += 1
            _note_navigation(rec, source.name, notes.navigations)
            if rec.written_status is not None:
                notes.warnings.append(f"{source.where}: {rec.url} ({rec.record_id}) has the status code "
                                      f"{rec.written_status!r}, which HTTP cannot carry; "
                                      "served as 204 No Content, as pywb does")
            kind = rec.warc_header("WARC-Resource-Type")
            if kind is not None and kind.strip().lower() == "document":
                notes.documents.add((source.name, rec.offset))
        yield rec


def _note_navigation(rec: StoredRecord, name: str, facts: Navigations) -> None:
    """A redirect's Location, or the frames an HTML page names."""
    if rec.status is None:
        return
    if 300 <= rec.status < 400:
        location = rec.http_header("Location")
        if location:
            facts.locations[(name, rec.offset)] = location
    elif rec.status == 200 and rec.url and rec.payload:
        mime = (rec.http_header("Content-Type") or "").split(";", 1)[0].strip().lower()
        if mime in HTML_TYPES:
            facts.frames.update((rec.url, inner) for inner in frame_sources(rec.url, rec.http_headers, rec.payload))


def _note_digests(rec: StoredRecord, label: str, notes: Notes) -> None:
    for found in rec.digests:
        if found.form is not None:
            notes.other_forms.append(OtherFormDigest(file=label, record_id=rec.record_id, url=rec.url,
                                                     digest=found.digest, form=found.form))  # fmt: skip
        else:
            notes.mismatches.append(DigestMismatch(file=label, record_id=rec.record_id, url=rec.url,
                                                   digest=found.digest, expected=found.expected,
                                                   actual=found.actual))  # fmt: skip


def _name_in_snapshot(sources: list[Source]) -> list[Source]:
    """``archive/<name>``: the file's own name, made safe and unique, always ending in .warc or .warc.gz.

    A name must end like a WARC so that the snapshot lists it (``*.tmp`` files are never listed).
    """
    taken: set[str] = set()
    named = []
    for source in sources:
        base = _UNSAFE.sub("_", PurePosixPath(source.name.replace("\\", "/")).name) or "data"
        stem, ext = _split_ext(base, source)
        name, n = f"{stem}{ext}", 1
        while name.lower() in taken:
            n += 1
            name = f"{stem}-{n}{ext}"
        taken.add(name.lower())
        named.append(replace(source, name=f"archive/{name}"))
    return named


def _split_ext(base: str, source: Source) -> tuple[str, str]:
    lower = base.lower()
    for ext in (".warc.gz", ".warc"):
        if lower.endswith(ext) and len(base) > len(ext):
            return base[: -len(ext)], base[-len(ext) :]
    with source.opener() as stream:
        gzipped = stream.read(2) == _GZIP_MAGIC
    return base.lstrip(".") or "data", ".warc.gz" if gzipped else ".warc"


def _file_opener(path: Path) -> Opener:
    def opener() -> AbstractContextManager[BinaryIO]:
        try:
            return path.open("rb")
        except OSError as e:
            raise ArchiveError(f"cannot open: {os_reason(e)}", where=path) from e

    return opener


def _member_opener(open_member: Callable[[str], AbstractContextManager[BinaryIO]], member: str) -> Opener:
    return lambda: open_member(member)
