"""manifest.json on disk: hashing a snapshot's files, writing the manifest, and checking a snapshot against it.

A snapshot is checked against its manifest before it is served, and a mismatch is an error, never a warning:
every problem is a :class:`SnapshotError` naming the file it is about.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from collections.abc import Collection
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from pydantic import ValidationError

from capreplay.errors import SnapshotError, os_reason, validation_reason
from capreplay.models.manifest import FileEntry, Manifest, snapshot_id
from capreplay.util.files import write_atomic

MANIFEST_NAME = "manifest.json"
_CHUNK = 1 << 20
_HASH_THREADS = max(1, min(4, os.cpu_count() or 1))


def hash_file(root: Path, rel: str) -> FileEntry:
    """Size and sha256 of ``root/rel``, read in chunks so large WARCs never sit in memory."""
    path = root / rel
    digest = hashlib.sha256()
    size = 0
    try:
        with open(path, "rb") as f:
            while chunk := f.read(_CHUNK):
                digest.update(chunk)
                size += len(chunk)
    except OSError as e:
        raise SnapshotError(f"cannot read: {os_reason(e)}", where=path) from e
    return FileEntry(path=rel, size=size, sha256=digest.hexdigest())


def collect_files(root: Path) -> list[FileEntry]:
    """Hash every file under ``root`` except ``manifest.json`` and ``*.tmp`` files, sorted by path.

    Anything that is not a regular file (a symbolic link, a socket) is a :class:`SnapshotError`: a
    snapshot is plain files, and a link could point outside it.
    """
    return [hash_file(root, rel) for rel in _listing(root)]


def write_manifest(root: Path, manifest: Manifest) -> None:
    """Write ``root/manifest.json`` atomically (a reader sees the old manifest or the new one)."""
    write_atomic(root / MANIFEST_NAME, (manifest.model_dump_json(indent=2) + "\n").encode("utf-8"))


def load_manifest(root: Path) -> Manifest:
    """Read and validate ``root/manifest.json``; any problem is one line naming the file."""
    if not root.is_dir():
        problem = "not a folder" if root.exists() else "no such folder"
        raise SnapshotError(f"not a snapshot: {problem}", where=root)
    path = root / MANIFEST_NAME
    if not path.is_file():
        raise SnapshotError(f"not a snapshot: no {MANIFEST_NAME}", where=root)
    try:
        data = json.loads(path.read_bytes())
    except OSError as e:
        raise SnapshotError(f"cannot read: {os_reason(e)}", where=path) from e
    except json.JSONDecodeError as e:
        raise SnapshotError(f"invalid JSON: {e.msg} at line {e.lineno} column {e.colno}", where=path) from e
    except UnicodeDecodeError as e:
        raise SnapshotError("invalid JSON: not UTF-8 text", where=path) from e
    try:
        return Manifest.model_validate(data)
    except ValidationError as e:
        raise SnapshotError(f"invalid manifest: {validation_reason(e, 'manifest')}", where=path) from e


def checked_manifest(root: Path, *, unchanged: Collection[str] = ()) -> Manifest:
    """Check every file of the snapshot at ``root`` against its manifest; return the manifest.

    See :func:`check_snapshot`; ``unchanged`` are paths known to hold the bytes the manifest lists.
    """
    manifest = load_manifest(root)
    check_snapshot(root, manifest, unchanged=unchanged)
    return manifest


def check_snapshot(root: Path, manifest: Manifest, *, unchanged: Collection[str] = ()) -> None:
    """Check every file of the snapshot at ``root`` against ``manifest``, read from it.

    Cheap checks run first (the snapshot id against the files and pages listed, missing files and sizes,
    extra files), the sha256 of every
    file last, on several threads (hashlib releases the GIL, so large WARCs hash in parallel); the first
    problem raises :class:`SnapshotError` naming the file. Files in ``unchanged`` (see
    :mod:`capreplay.archive.snapshot.check_stamp`) get every check but the hash.
    """
    if manifest.snapshot_id != snapshot_id(manifest.files, manifest.pages):
        raise SnapshotError(
            "snapshot_id does not match the files and pages listed in it: the manifest was edited",
            where=root / MANIFEST_NAME,
        )
    for entry in manifest.files:
        path = root / entry.path
        try:
            info = path.lstat()
        except FileNotFoundError as e:
            raise SnapshotError(f"listed in {MANIFEST_NAME} but missing", where=path) from e
        except OSError as e:
            raise SnapshotError(f"cannot read: {os_reason(e)}", where=path) from e
        if not stat.S_ISREG(info.st_mode):
            raise SnapshotError("not a regular file", where=path)
        if info.st_size != entry.size:
            raise SnapshotError(f"size {info.st_size}, manifest says {entry.size}: truncated or changed", where=path)
    listed = {entry.path for entry in manifest.files}
    for rel in _listing(root, strict=False):
        if rel not in listed:
            raise SnapshotError(f"not listed in {MANIFEST_NAME}", where=root / rel)
    to_hash = [entry for entry in manifest.files if entry.path not in unchanged]
    with ThreadPoolExecutor(max_workers=min(_HASH_THREADS, len(to_hash) or 1)) as pool:
        hashed = pool.map(lambda entry: hash_file(root, entry.path), to_hash)
        for entry, found in zip(to_hash, hashed, strict=True):
            if found.sha256 != entry.sha256:
                raise SnapshotError(f"sha256 does not match {MANIFEST_NAME}: file changed", where=root / entry.path)


def _listing(root: Path, *, strict: bool = True) -> list[str]:
    """Relative posix paths of every non-folder entry under ``root``, sorted, minus the manifest and temps.

    ``strict`` rejects entries that are not regular files; otherwise they are listed too (and verify
    reports them as extra), since a snapshot must contain nothing its manifest does not vouch for.
    """
    found: list[str] = []

    def fail(e: OSError) -> None:
        raise SnapshotError(f"cannot list: {os_reason(e)}", where=e.filename or root)

    for folder, dirnames, filenames in os.walk(root, onerror=fail):
        base = Path(folder)
        # os.walk reports a link to a folder among the folders and does not follow it; treat it as a file
        links = [d for d in dirnames if (base / d).is_symlink()]
        dirnames[:] = sorted(d for d in dirnames if d not in links)
        for name in [*filenames, *links]:
            path = base / name
            rel = path.relative_to(root).as_posix()
            if rel == MANIFEST_NAME or name.endswith(".tmp"):
                continue
            if strict and not stat.S_ISREG(path.lstat().st_mode):
                raise SnapshotError("not a regular file (a snapshot holds only plain files)", where=path)
            found.append(rel)
    return sorted(found)
