"""A record that a snapshot was checked against its manifest, so the next open need not hash every byte again.

Hashing a 700 MB snapshot takes most of a second on every start of ``serve``. Like git's index, capreplay
remembers, per snapshot folder, each file's identity on disk (size, modification and change times in
nanoseconds, inode, device) at the moment its sha256 was found to match the manifest, along with what the
full check of the index found. A file whose identity is unchanged is not hashed again; any write to it
changes its change time (which no ordinary tool can set back), so a changed file is always hashed. The
manifest itself, the snapshot id, sizes and the folder listing are checked on every open.

The record lives in the user's cache folder (``$CAPREPLAY_CACHE_DIR``, else ``$XDG_CACHE_HOME/capreplay``,
else ``~/.cache/capreplay``), never in the snapshot, whose files are exactly those its manifest lists. A
cache that cannot be read or written only costs time.
"""

from __future__ import annotations

import contextlib
import hashlib
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from capreplay.errors import CapreplayError
from capreplay.util.cache_folder import cache_dir
from capreplay.util.files import write_atomic

SCHEMA = 1


class FileIdentity(BaseModel):
    """What identifies one file's current contents on disk without reading them."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    size: int
    mtime_ns: int
    ctime_ns: int
    inode: int
    device: int


class FileStamp(FileIdentity):
    """A file's identity with the sha256 its contents were found to have."""

    sha256: str


class VerifiedRecord(BaseModel):
    """One snapshot folder's record: its id, its files as verified, and its index's origins."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: int = SCHEMA
    snapshot_id: str
    files: dict[str, FileStamp]
    origins: list[tuple[str, str, int]] | None = None
    """``(scheme, host, port)`` of every indexed response, found by the full check of the index."""


def record_path(root: Path) -> Path:
    """Where the record of the snapshot folder ``root`` is kept: one file per folder."""
    name = hashlib.sha256(str(root.resolve()).encode("utf-8", "surrogateescape")).hexdigest()
    return cache_dir() / "verified" / f"{name}.json"


def identity(path: Path) -> FileIdentity:
    """The identity of ``path`` now."""
    info = path.stat()
    return FileIdentity(
        size=info.st_size, mtime_ns=info.st_mtime_ns, ctime_ns=info.st_ctime_ns, inode=info.st_ino, device=info.st_dev
    )


def stamp(path: Path, sha256: str) -> FileStamp:
    """The identity of ``path`` now, with the sha256 its contents were found to have."""
    return FileStamp(**identity(path).model_dump(), sha256=sha256)


def load_record(root: Path) -> VerifiedRecord | None:
    """The record of ``root``, or None when there is none or it cannot be read."""
    try:
        return VerifiedRecord.model_validate_json(record_path(root).read_bytes())
    except (OSError, ValueError, ValidationError):
        return None


def save_record(root: Path, record: VerifiedRecord) -> None:
    """Keep ``record`` for the next open; a cache folder that cannot be written is passed over."""
    path = record_path(root)
    with contextlib.suppress(OSError, CapreplayError):
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, record.model_dump_json().encode("utf-8"))


def unchanged_files(root: Path, record: VerifiedRecord | None, listed: dict[str, str]) -> set[str]:
    """Paths of ``listed`` (path -> sha256 in the manifest) whose bytes ``record`` vouches for."""
    if record is None:
        return set()
    same = set()
    for rel, sha256 in listed.items():
        known = record.files.get(rel)
        if known is None or known.sha256 != sha256:
            continue
        with contextlib.suppress(OSError):
            if stamp(root / rel, sha256) == known:
                same.add(rel)
    return same
