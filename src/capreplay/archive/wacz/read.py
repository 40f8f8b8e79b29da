"""Reading a WACZ written by another tool: its WARCs and pages list, after checking every digest it lists.

A WACZ is a zip holding ``archive/*.warc[.gz]``, ``indexes/*.cdx[j]``, ``pages/pages.jsonl`` and a
``datapackage.json`` that lists every other file with its sha256. Every listed digest is checked before
anything in the zip is believed; a mismatch, a listed file that is missing, or a WARC that the data package
does not list (so that nothing vouches for it) is an :class:`ArchiveError`; with ``allow_digest_mismatch``, a
digest that does not match is noted instead (the other two stay errors). Both ways WACZ versions spell a
digest are read: ``"hash": "sha256:<hex>"`` (1.1) and ``"stats": {"hash": "<hex>"}, "hashing": "sha256"``
(1.0). ``datapackage-digest.json``, when present, must match ``datapackage.json``; its signature is not
checked. The WACZ's own CDX indexes are not used: the import indexes the WARCs itself.
"""

from __future__ import annotations

import hashlib
import json
import zipfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, cast

from capreplay.archive.importer.page_choice import ListedPage
from capreplay.errors import ArchiveError, os_reason
from capreplay.models.manifest import DigestMismatch

DATAPACKAGE = "datapackage.json"
DATAPACKAGE_DIGEST = "datapackage-digest.json"
PAGES = "pages/pages.jsonl"
_CHUNK = 1 << 20
# What zipfile raises on a corrupt or unreadable member: bad CRC or header (BadZipFile), a broken deflate
# stream (zlib.error), a member that ends early (EOFError), compression or encryption it cannot undo.
ZIP_ERRORS = (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, RuntimeError, OSError)


@dataclass(frozen=True)
class WaczWarc:
    """One WARC inside a WACZ, already checked against the data package."""

    member: str
    """Path inside the zip, e.g. ``archive/data.warc.gz``."""
    size: int
    sha256: str
    """Lowercase hex; equal to the data package's digest."""


@dataclass(frozen=True)
class Wacz:
    """A checked WACZ: where it is, its WARCs, and the pages it lists (in its order)."""

    path: Path
    warcs: list[WaczWarc]
    pages: list[ListedPage]
    mismatches: list[DigestMismatch] = field(default_factory=list)
    """Digests in the data package that did not match, when they were allowed."""

    def where(self, member: str) -> str:
        """How error messages name a file inside this WACZ."""
        return f"{self.path}!{member}"

    @contextmanager
    def open(self, member: str) -> Iterator[BinaryIO]:
        """A stream of one member (the zip stays open while it is read)."""
        try:
            with zipfile.ZipFile(self.path) as zf, zf.open(member) as stream:
                yield cast(BinaryIO, stream)  # a ZipExtFile reads, seeks and tells like a binary file
        except ZIP_ERRORS as e:
            raise ArchiveError(f"cannot read {member}: {e}", where=self.path) from e


def read_wacz(path: Path, *, allow_digest_mismatch: bool = False) -> Wacz:
    """Open ``path`` as a WACZ and check every digest its data package lists; raises :class:`ArchiveError`.

    With ``allow_digest_mismatch`` a digest that does not match its file is noted in ``mismatches``.
    """
    mismatches: list[DigestMismatch] = []

    def mismatch(member: str, expected: str, actual: str, problem: str) -> None:
        if not allow_digest_mismatch:
            raise ArchiveError(f"{problem} (--allow-digest-mismatch imports it anyway)", where=path)
        mismatches.append(DigestMismatch(file=f"{path.name}!{member}", record_id=None, url=None,
                                         digest="datapackage", expected=expected, actual=actual))  # fmt: skip

    try:
        with zipfile.ZipFile(path) as zf:
            names = set(zf.namelist())
            if DATAPACKAGE not in names:
                raise ArchiveError(f"not a WACZ: the zip has no {DATAPACKAGE}", where=path)
            package_bytes = zf.read(DATAPACKAGE)
            if DATAPACKAGE_DIGEST in names:
                expected = _package_digest(zf.read(DATAPACKAGE_DIGEST), path)
                actual = hashlib.sha256(package_bytes).hexdigest()
                if expected != actual:
                    mismatch(DATAPACKAGE, f"sha256:{expected}", f"sha256:{actual}",
                             f"{DATAPACKAGE} does not match its digest in {DATAPACKAGE_DIGEST}")  # fmt: skip
            listed = parse_datapackage(package_bytes, f"{path}!{DATAPACKAGE}")
            sizes: dict[str, int] = {}
            hashed: dict[str, str] = {}
            for member, (algo, expected) in listed.items():
                if member not in names:
                    raise ArchiveError(f"{DATAPACKAGE} lists {member}, which the zip does not hold", where=path)
                actual, sizes[member] = _hash_member(zf, member, algo)
                hashed[member] = actual
                if actual != expected:
                    problem = f"{member}: {algo} is {actual}, {DATAPACKAGE} says {expected}: the file changed"
                    mismatch(member, f"{algo}:{expected}", f"{algo}:{actual}", problem)
            warcs = []
            for member in sorted(n for n in names if _is_warc(n)):
                if member not in listed:
                    raise ArchiveError(f"{member} is not listed in {DATAPACKAGE}: its digest cannot be checked", path)
                sha256 = hashed[member] if listed[member][0] == "sha256" else _hash_member(zf, member, "sha256")[0]
                warcs.append(WaczWarc(member, sizes[member], sha256))
            pages = parse_pages(zf.read(PAGES), f"{path}!{PAGES}") if PAGES in names else []
    except OSError as e:
        raise ArchiveError(f"cannot read: {os_reason(e)}", where=path) from e
    except zipfile.BadZipFile as e:
        raise ArchiveError(f"not a WACZ: not a readable zip file ({e})", where=path) from e
    except ZIP_ERRORS as e:
        raise ArchiveError(f"corrupt zip: {e}", where=path) from e
    if not warcs:
        raise ArchiveError("the WACZ holds no WARC files under archive/", where=path)
    return Wacz(path, warcs, pages, mismatches)


def parse_datapackage(data: bytes, where: str) -> dict[str, tuple[str, str]]:
    """Member path -> (hash algorithm, lowercase hex digest) for every resource the data package lists."""
    package = _json(data, where)
    resources = package.get("resources") if isinstance(package, dict) else None
    if not isinstance(resources, list):
        raise ArchiveError("no 'resources' list", where=where)
    listed: dict[str, tuple[str, str]] = {}
    for n, resource in enumerate(resources):
        if not isinstance(resource, dict) or not isinstance(resource.get("path"), str):
            raise ArchiveError(f"resources[{n}] has no 'path'", where=where)
        stats = resource.get("stats")
        value = resource.get("hash", stats.get("hash") if isinstance(stats, dict) else None)
        if not isinstance(value, str) or not value:
            raise ArchiveError(f"resources[{n}] ({resource['path']}) has no hash", where=where)
        algo, sep, digest = value.partition(":")
        if not sep:  # WACZ 1.0: bare hex, algorithm named in "hashing"
            algo, digest = str(resource.get("hashing", "sha256")), value
        algo = algo.lower().replace("-", "")
        if algo not in hashlib.algorithms_available:
            raise ArchiveError(f"resources[{n}] ({resource['path']}) uses unknown hash {algo!r}", where=where)
        listed[resource["path"]] = (algo, digest.strip().lower())
    return listed


def parse_pages(data: bytes, where: str) -> list[ListedPage]:
    """The pages of a ``pages.jsonl``: one JSON object per line, the first a header without a URL."""
    pages = []
    for number, line in enumerate(data.splitlines(), start=1):
        if not line.strip():
            continue
        entry = _json(line, f"{where}:{number}")
        if not isinstance(entry, dict):
            raise ArchiveError("a page line is not a JSON object", where=f"{where}:{number}")
        url = entry.get("url")
        if url is None and number == 1:
            continue  # the header line: {"format": "json-pages-1.0", ...}
        if not isinstance(url, str) or not url:
            raise ArchiveError("a page has no 'url'", where=f"{where}:{number}")
        title = entry.get("title")
        pages.append(ListedPage(url=url, title=title if isinstance(title, str) else None))
    return pages


def _package_digest(data: bytes, path: Path) -> str:
    """The lowercase hex sha256 of datapackage.json that ``datapackage-digest.json`` gives."""
    where = f"{path}!{DATAPACKAGE_DIGEST}"
    digest = _json(data, where)
    value = digest.get("hash") if isinstance(digest, dict) else None
    if not isinstance(value, str) or not value.startswith("sha256:"):
        raise ArchiveError("no 'hash' of the form sha256:<hex>", where=where)
    return value.removeprefix("sha256:").strip().lower()


def _hash_member(zf: zipfile.ZipFile, member: str, algo: str) -> tuple[str, int]:
    digest = hashlib.new(algo)
    size = 0
    with zf.open(member) as stream:
        while chunk := stream.read(_CHUNK):
            digest.update(chunk)
            size += len(chunk)
    return digest.hexdigest(), size


def _is_warc(name: str) -> bool:
    lower = name.lower()
    return lower.startswith("archive/") and lower.endswith((".warc", ".warc.gz"))


def _json(data: bytes, where: str) -> Any:
    try:
        return json.loads(data)
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise ArchiveError(f"invalid JSON: {e}", where=where) from e
