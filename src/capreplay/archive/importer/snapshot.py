"""``capreplay import``: a checked snapshot built from WARC and WACZ files that other tools wrote.

Every input is read and checked in full before anything is written (see
:mod:`capreplay.archive.importer.inputs`). Then the snapshot is built in a fresh folder next to the output
(WARCs copied byte for byte, the index, the manifest), verified like any snapshot, and renamed into place
in one step, so a failure at any point leaves the output exactly as it was. An output folder that already
holds this very snapshot (same files, same pages) is left alone and the import is a no-op; one that holds
anything else is refused.
"""

from __future__ import annotations

import errno
import hashlib
import logging
import os
import secrets
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib.metadata import version
from pathlib import Path
from urllib.parse import urlsplit

from capreplay.archive.importer.inputs import Scan, Source, hash_file, scan_inputs
from capreplay.archive.importer.page_choice import ListedPage, Lookup, listed_pages, page_candidates
from capreplay.archive.importer.page_entries import page_entry
from capreplay.archive.index.cdxj import IndexEntry, format_index
from capreplay.archive.snapshot.manifest import (
    MANIFEST_NAME,
    checked_manifest,
    collect_files,
    load_manifest,
    write_manifest,
)
from capreplay.errors import ArchiveError, InputError, OutputError, UsageError, os_reason
from capreplay.models.manifest import (
    DigestMismatch,
    DigestReport,
    FileEntry,
    Manifest,
    PageEntry,
    SourceFile,
    snapshot_id,
)
from capreplay.util.files import refuse_unmakeable_folder, write_atomic

INDEX_FILE = "index.cdxj"
TOOLS = ("capreplay", "warcio")
_CHUNK = 1 << 20


@dataclass(frozen=True)
class ImportOptions:
    """What to import and where."""

    inputs: list[Path]
    out: Path
    random_seed: int
    """Seed of the replayed page's Math.random and crypto (the CLI passes capture's default)."""
    pages: list[str] = field(default_factory=list)
    """``--page`` URLs: when given, exactly these are the snapshot's pages."""
    allow_digest_mismatch: bool = False
    """Import records and WACZ files whose digests match nothing, listing each in the manifest."""


@dataclass(frozen=True)
class ImportResult:
    """How an import ended."""

    manifest: Manifest
    warnings: list[str]
    """One line each: revisits left out, listed pages the archive lacks, unusable metadata, digest mismatches
    let through."""
    unchanged: bool
    """True if the output already held this snapshot and nothing was written."""
    records: dict[str, int]
    """Records read, by WARC-Type."""
    indexed: int
    """Responses and revisits the snapshot serves (revisits left out are not counted)."""


def import_archives(opts: ImportOptions) -> ImportResult:
    """Build the snapshot ``opts.out`` from ``opts.inputs``; raises an :class:`InputError` for bad input."""
    if not opts.inputs:
        raise UsageError("give at least one WARC or WACZ file")
    with quiet_warcio():
        return _import(opts)


def _import(opts: ImportOptions) -> ImportResult:
    scan = scan_inputs(opts.inputs, allow_digest_mismatch=opts.allow_digest_mismatch)
    warnings = list(scan.notes.warnings)
    warnings += [_mismatch_line(m) for m in scan.notes.mismatches]
    entries = []
    for entry in scan.entries:
        problem = _unservable(entry)
        if problem:
            warnings.append(problem)
        else:
            entries.append(entry)
    if not entries:
        where = opts.inputs[0] if len(opts.inputs) == 1 else ", ".join(map(str, opts.inputs))
        raise ArchiveError("nothing to replay: every response is a revisit of a record the input lacks", where=where)
    lookup = Lookup(entries)
    picks, missing = choose_pages(scan, entries, lookup, opts.pages)
    warnings += [_missing_page_line(url) for url in missing]
    index_bytes = format_index(entries)
    files = [FileEntry(path=s.name, size=s.size, sha256=s.sha256) for s in scan.sources]
    files.append(FileEntry(path=INDEX_FILE, size=len(index_bytes), sha256=hashlib.sha256(index_bytes).hexdigest()))
    records = dict(scan.notes.records)
    existing = _existing_output(opts.out, files, [url for url, _ in picks])
    if existing is not None:
        return ImportResult(existing, warnings, unchanged=True, records=records, indexed=len(entries))
    manifest = _build(opts, scan, entries, index_bytes, picks, lookup)
    return ImportResult(manifest, warnings, unchanged=False, records=records, indexed=len(entries))


def choose_pages(
    scan: Scan, entries: list[IndexEntry], lookup: Lookup, overrides: list[str]
) -> tuple[list[tuple[str, IndexEntry]], list[str]]:
    """The snapshot's pages as (URL to load, its entry), and listed URLs the archive lacks.

    ``--page`` first (a URL the archive lacks is bad input), then the WACZ pages lists, then warcinfo
    metadata, then the 200 HTML responses that were top-level navigations (see
    :func:`capreplay.archive.importer.page_choice.page_candidates`).
    """
    if overrides:
        picks, missing = listed_pages(lookup, [ListedPage(url) for url in overrides])
        if missing:
            raise UsageError(f"--page {missing[0]}: the input holds no response for this URL")
        return picks, []
    for listed in (scan.wacz_pages, scan.notes.listed):
        if listed:
            return listed_pages(lookup, listed)
    return page_candidates(entries, scan.notes.documents, scan.notes.navigations, lookup), []


def _missing_page_line(url: str) -> str:
    if not url.lower().startswith(("http://", "https://")):
        # Scoop lists its capture-time screenshot and PDF, file:/// records, as pages
        return f"page {url} is listed but is no web page (replay serves http and https); left out"
    return f"page {url} is listed but not archived; left out"


def _mismatch_line(m: DigestMismatch) -> str:
    what = f"record {m.record_id} ({m.url or 'no URI'})" if m.record_id else "its digest in datapackage"
    return (f"{m.file}: {m.digest} digest of {what} does not match (says {m.expected}, is {m.actual}); "
            "imported as --allow-digest-mismatch asks")  # fmt: skip


def _unservable(entry: IndexEntry) -> str | None:
    """Why ``entry`` cannot be replayed (the warning line), or None if it can."""
    if entry.unresolved_revisit:
        return (f"revisit of {entry.url} ({entry.timestamp}) left out: the record it repeats "
                f"({entry.revisit_of}) is not in the input")  # fmt: skip
    try:
        parts = urlsplit(entry.url)
        parts.port  # noqa: B018  # raises for a port that is no number
    except ValueError as e:
        return f"{entry.url!r} left out: not a usable URL ({e})"
    # replay reaches an archived origin through a host-resolver rule, which needs a host name
    return None if parts.hostname else f"{entry.url!r} left out: the URL names no host"


def _existing_output(out: Path, files: list[FileEntry], page_urls: list[str]) -> Manifest | None:
    """The manifest of ``out`` if it already holds exactly this snapshot (these files, these pages, which
    its verified id then vouches for); None if ``out`` is free to use."""
    if not out.exists():
        refuse_unmakeable_folder(out)  # refused before the staging folder beside ``out`` is made
    if not out.exists():
        return None
    if not out.is_dir():
        raise InputError("already exists and is not a folder; choose a new output folder", out)
    if not any(out.iterdir()):
        return None
    if not (out / MANIFEST_NAME).is_file():
        raise InputError("already exists and is not empty; choose a new output folder", out)
    current = load_manifest(out)
    same_files = sorted(current.files, key=lambda f: f.path) == sorted(files, key=lambda f: f.path)
    if not same_files or [p.url for p in current.pages] != page_urls:
        raise InputError(
            f"already holds a different snapshot ({current.snapshot_id[:16]}); choose a new output folder", out
        )
    return checked_manifest(out)


def _build(
    opts: ImportOptions,
    scan: Scan,
    entries: list[IndexEntry],
    index_bytes: bytes,
    picks: list[tuple[str, IndexEntry]],
    lookup: Lookup,
) -> Manifest:
    """Write the snapshot next to ``opts.out``, verify it, and rename it into place."""
    out = opts.out.absolute()
    created = _make_parents(out.parent)
    staging = out.parent / f".{out.name}.import-{secrets.token_hex(4)}"
    try:
        try:
            staging.mkdir()
            for source in scan.sources:
                _copy(source, staging / source.name)
            write_atomic(staging / INDEX_FILE, index_bytes)
            pages = [page_entry(staging, url, entry, lookup) for url, entry in picks]
            manifest = _manifest(opts, scan, entries, pages, collect_files(staging))
            write_manifest(staging, manifest)
            checked_manifest(staging)
        except OSError as e:
            raise OutputError(f"cannot write the snapshot: {os_reason(e)}", where=e.filename or staging) from e
        _move(staging, out)
    except BaseException:
        # The error being raised is the one to report; cleaning up must not hide it.
        shutil.rmtree(staging, ignore_errors=True)
        for folder in reversed(created):
            _remove_empty(folder)
        raise
    return manifest


def _move(staging: Path, out: Path) -> None:
    """Rename the finished snapshot to ``out``: one step, replacing an empty folder if one is there."""
    try:
        os.rename(staging, out)
    except OSError as e:
        if e.errno in (errno.ENOTEMPTY, errno.EEXIST, errno.ENOTDIR):
            raise InputError("was filled by something else during the import; choose a new output folder", out) from e
        raise OutputError(f"cannot move the snapshot into place: {os_reason(e)}", where=out) from e


def _manifest(
    opts: ImportOptions, scan: Scan, entries: list[IndexEntry], pages: list[PageEntry], files: list[FileEntry]
) -> Manifest:
    """The manifest: replay's clock is the earliest page's WARC-Date (else the earliest response's)."""
    frozen = min(p.captured_at for p in pages) if pages else min(_stamp(e.timestamp) for e in entries)
    sources = []
    for origin, path in enumerate(opts.inputs):
        mine = [s for s in scan.sources if s.origin == origin]
        # a WARC input is its one source; a WACZ is hashed whole
        size, sha256 = (mine[0].size, mine[0].sha256) if mine[0].where == str(path) else hash_file(path)
        sources.append(SourceFile(
            name=path.name, size=size, sha256=sha256, software=scan.notes.software.get(origin, []),
            archive_files=[s.name for s in mine],
        ))  # fmt: skip
    return Manifest(
        snapshot_id=snapshot_id(files, pages),
        created=datetime.now(UTC).replace(microsecond=0),
        complete=True,
        tools={name: version(name) for name in TOOLS},
        browser={},
        frozen_time=frozen,
        random_seed=opts.random_seed,
        plan=None,
        pages=pages,
        hosts=sorted({(urlsplit(e.url).hostname or "").lower() for e in entries} - {""}),
        files=files,
        imported_from=sources,
        digests=DigestReport(
            allow_mismatch=opts.allow_digest_mismatch,
            other_forms=scan.notes.other_forms,
            mismatches=scan.notes.mismatches,
        ),
    )


def _stamp(timestamp: str) -> datetime:
    return datetime.strptime(timestamp, "%Y%m%d%H%M%S").replace(tzinfo=UTC)


def _copy(source: Source, target: Path) -> None:
    """Copy a WARC byte for byte, checking on the way that it is still the file that was scanned."""
    target.parent.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256()
    with source.opener() as src, target.open("xb") as dst:
        while chunk := src.read(_CHUNK):
            digest.update(chunk)
            dst.write(chunk)
        dst.flush()
        os.fsync(dst.fileno())
    if digest.hexdigest() != source.sha256:
        raise ArchiveError("changed while it was being imported", where=source.where)


def _make_parents(folder: Path) -> list[Path]:
    """Create ``folder`` and its missing parents; returns the ones created, outermost first.

    If one cannot be created, those already made are removed again before the error is raised.
    """
    created: list[Path] = []
    for p in reversed([p for p in [folder, *folder.parents] if not p.exists()]):
        try:
            p.mkdir()
        except OSError as e:
            for made in reversed(created):
                _remove_empty(made)
            raise InputError(f"cannot create the output folder: {os_reason(e)}", p) from e
        created.append(p)
    return created


def _remove_empty(folder: Path) -> None:
    try:
        folder.rmdir()
    except OSError as e:
        logging.getLogger(__name__).warning("could not remove %s: %s", folder, os_reason(e))


class _SpacesInUri(logging.Filter):
    """Drops warcio's note that it rewrote spaces in a WARC-Target-URI as %20, which capture does too."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith("Replacing spaces in invalid WARC-Target-URI")


@contextmanager
def quiet_warcio() -> Iterator[None]:
    """While reading foreign WARCs, keep warcio's routine URI note off stderr; everything else passes."""
    logger = logging.getLogger("warcio.recordloader")
    quiet = _SpacesInUri()
    logger.addFilter(quiet)
    try:
        yield
    finally:
        logger.removeFilter(quiet)
