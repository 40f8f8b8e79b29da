"""Exporting a checked snapshot as one WACZ file, written atomically: the I/O around :mod:`.build`.

The snapshot is checked against its manifest first (a truncated or changed file is a
:class:`SnapshotError`, and nothing is written), and each WARC is hashed again as it is copied into the
ZIP, so the WACZ holds exactly the bytes the manifest vouches for. The output is built in a temporary
file next to the target and only then given its name; an existing file is never replaced unless asked.
The same snapshot always exports to the same bytes: member dates and ``created`` are the snapshot's own
``created`` time, and members, index lines and JSON keys come in a fixed order.
"""

from __future__ import annotations

import contextlib
import zipfile
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import BinaryIO

from capreplay.archive.index.cdxj import IndexEntry, build_index, load_index
from capreplay.archive.snapshot.manifest import checked_manifest
from capreplay.archive.wacz import build as wacz
from capreplay.archive.warc.read import read_record
from capreplay.errors import ArchiveError, SnapshotError, UsageError, os_reason
from capreplay.models.manifest import FileEntry, Manifest
from capreplay.util.files import atomic_output

INDEX_FILE = "index.cdxj"
"""The snapshot's own index (see DESIGN.md); rebuilt from the WARCs when an interrupted capture left none."""
_WARC_SUFFIXES = (".warc.gz", ".warc")
_BODY_METHODS = ("POST", "PUT")


@dataclass(frozen=True)
class ExportResult:
    """What :func:`export_wacz` wrote."""

    path: Path
    size: int
    warcs: int
    records: int
    """CDXJ lines: archived responses and revisits."""
    pages: int


def export_wacz(snapshot: Path, out: Path, *, force: bool = False) -> ExportResult:
    """Write the snapshot at ``snapshot`` as the WACZ file ``out``.

    Bad input is an :class:`~capreplay.errors.InputError` naming the file, raised before anything is
    written: a folder that is not a snapshot or does not match its manifest (:class:`SnapshotError`), a
    malformed WARC (:class:`ArchiveError`), an output path that is not a ``.wacz`` file in an existing
    folder outside the snapshot, or that exists already without ``force`` (:class:`UsageError`).
    """
    check_output(snapshot, out, force=force)
    manifest = checked_manifest(snapshot)
    warcs = _warc_names(snapshot, manifest)
    entries = _entries(snapshot, manifest, warcs)
    requests = _request_bodies(snapshot, entries)
    lines = [wacz.cdxj_line(e, warcs[e.filename].name, requests.get(e.seq)) for e in entries]
    cdx, idx = wacz.zipnum(lines)
    small = [(wacz.CDX_NAME, cdx), (wacz.IDX_NAME, idx), (wacz.PAGES_NAME, wacz.pages_jsonl(manifest.pages))]
    with atomic_output(out, force=force, what="WACZ") as stream:
        _write_zip(stream, snapshot, manifest, list(warcs.values()), small)
        size = stream.tell()
    return ExportResult(path=out, size=size, warcs=len(warcs), records=len(lines), pages=len(manifest.pages))


def check_output(snapshot: Path, out: Path, *, force: bool) -> None:
    """Refuse an output path that cannot or must not be written, before any work is done."""
    if out.suffix.lower() != ".wacz":
        raise UsageError("the output file name must end in .wacz (pywb and ReplayWeb.page go by it)", where=out)
    if not out.parent.is_dir():
        problem = "is not a folder" if out.parent.exists() else "does not exist"
        raise UsageError(f"cannot write the WACZ: its folder {out.parent} {problem}", where=out)
    if out.is_dir():
        raise UsageError("is a folder; give the path of a .wacz file", where=out)
    if (out.exists() or out.is_symlink()) and not force:
        raise UsageError("already exists; pass --force to replace it", where=out)
    if out.resolve().is_relative_to(snapshot.resolve()):
        # an extra file in the snapshot would make it fail its own manifest check
        raise UsageError("is inside the snapshot folder; write the WACZ somewhere else", where=out)


@dataclass(frozen=True)
class _Warc:
    file: FileEntry
    name: str
    """File name under ``archive/`` in the WACZ."""


def _warc_names(root: Path, manifest: Manifest) -> dict[str, _Warc]:
    """The snapshot's WARCs by snapshot path, each with its name in the WACZ (its own file name)."""
    warcs: dict[str, _Warc] = {}
    taken: dict[str, str] = {}
    for entry in sorted(manifest.files, key=lambda f: f.path):
        if not (entry.path.startswith("archive/") and entry.path.endswith(_WARC_SUFFIXES)):
            continue
        name = entry.path.rsplit("/", 1)[-1]
        if name in taken:
            # the CDXJ names WARCs by file name alone, so two with one name cannot both be found
            raise SnapshotError(f"two WARCs share the file name {name} ({taken[name]})", where=root / entry.path)
        taken[name] = entry.path
        warcs[entry.path] = _Warc(file=entry, name=name)
    if not warcs:
        raise SnapshotError("the snapshot holds no WARC file under archive/", where=root)
    return warcs


def _entries(root: Path, manifest: Manifest, warcs: dict[str, _Warc]) -> list[IndexEntry]:
    """The snapshot's index entries, checked to lie inside the WARCs they name."""
    indexed = any(f.path == INDEX_FILE for f in manifest.files)
    entries = load_index(root / INDEX_FILE) if indexed else build_index(root, sorted(warcs))
    for e in entries:
        warc = warcs.get(e.filename)
        if warc is None:
            raise SnapshotError(f"an entry for {e.url} names {e.filename}, which is not a WARC of the snapshot",
                                where=root / INDEX_FILE)
        if e.offset + e.length > warc.file.size:
            raise ArchiveError(f"the index places a record at {e.offset} (+{e.length}), past the end of the file "
                               f"({warc.file.size} bytes)", where=root / e.filename)
    return entries


def _request_bodies(root: Path, entries: list[IndexEntry]) -> dict[int, wacz.RequestBody]:
    """Content-Type and body of every POST/PUT with a body, read from its request record, by entry ``seq``.

    Other requests need nothing more than the method the index already holds.
    """
    found: dict[int, wacz.RequestBody] = {}
    with contextlib.ExitStack() as files:
        streams: dict[str, BinaryIO] = {}
        for e in entries:
            offset = e.req_offset
            if offset is None or not e.post_body or e.method.upper() not in _BODY_METHODS:
                continue
            rel = e.req_filename or e.filename
            if rel not in streams:
                try:
                    streams[rel] = files.enter_context(open(root / rel, "rb"))
                except OSError as err:
                    raise ArchiveError(f"cannot open: {os_reason(err)}", where=root / rel) from err
            record = read_record(streams[rel], offset, name=str(root / rel))
            found[e.seq] = wacz.RequestBody(content_type=record.http_header("Content-Type"), body=record.payload)
    return found


def _write_zip(stream: BinaryIO, root: Path, manifest: Manifest, warcs: list[_Warc],
               small: list[tuple[str, bytes]]) -> None:
    """The WACZ itself: WARCs first (copied and hashed), then the small files, the data package last."""
    created = manifest.created
    resources: list[wacz.Resource] = []
    with zipfile.ZipFile(stream, "w", allowZip64=True) as archive:
        for warc in warcs:
            path = root / warc.file.path
            try:
                source = open(path, "rb")  # noqa: SIM115  # closed right below
            except OSError as e:
                raise SnapshotError(f"cannot read: {os_reason(e)}", where=path) from e
            with source:
                copied = wacz.copy_member(archive, wacz.zip_info(f"archive/{warc.name}", created), source,
                                          warc.file.size)
            if (copied.size, copied.sha256) != (warc.file.size, warc.file.sha256):
                raise SnapshotError("changed while it was being exported: it no longer matches the manifest",
                                    where=path)
            resources.append(copied)
        for name, data in small:
            archive.writestr(wacz.zip_info(name, created), data)
            resources.append(wacz.resource_for(name, data))
        package = wacz.datapackage(resources, _metadata(manifest), manifest.pages)
        archive.writestr(wacz.zip_info(wacz.DATAPACKAGE_NAME, created), package)
        archive.writestr(wacz.zip_info(wacz.DIGEST_NAME, created), wacz.datapackage_digest(package))


def _metadata(manifest: Manifest) -> wacz.Metadata:
    hosts = ", ".join(manifest.hosts) or "no hosts"
    state = "" if manifest.complete else " The capture was interrupted (complete: false)."
    return wacz.Metadata(
        title=f"capreplay snapshot {manifest.snapshot_id[:12]}",
        description=(f"capreplay snapshot {manifest.snapshot_id}: {len(manifest.pages)} pages on {hosts}, "
                     f"frozen at {wacz.rfc3339(manifest.frozen_time)}.{state}"),
        created=manifest.created,
        software=f"capreplay {_version()}",
    )


def _version() -> str:
    try:
        return version("capreplay")
    except PackageNotFoundError:  # running from a source tree that was never installed
        return "(unknown version)"
