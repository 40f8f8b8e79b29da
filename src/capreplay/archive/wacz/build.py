"""Writing a WACZ (Web Archive Collection Zipped, 1.1.1): pure builders for its files, and the ZIP writer.

The layout, as py-wacz and Browsertrix write it, so that pywb and ReplayWeb.page both read it::

    archive/<name>.warc.gz     the snapshot's WARCs, byte for byte
    indexes/index.cdx.gz       CDXJ lines in gzip blocks of up to 1024 lines (a ZipNum index)
    indexes/index.idx          one line per block: its first key, its offset, length and sha256
    pages/pages.jsonl          a header line, then one line per page
    datapackage.json           every file above with its size and sha256
    datapackage-digest.json    the sha256 of datapackage.json

Why a ZipNum pair rather than one ``index.cdxj``: pywb 2.10 (``wb-manager add --unpack-wacz``) takes only
``indexes/*.cdx`` and ``*.cdx.gz``, and ReplayWeb.page only ``*.cdx``, ``*.cdxj`` and ``*.idx`` (with the
``.cdx.gz`` it names); the pair is what both read. Every member is STORED: the spec requires it for the
WARCs and the ``.cdx.gz``, and it keeps the output independent of the zlib build for the rest.

The CDXJ lines are those of pywb's own indexer (``cdx-indexer --cdxj --postappend``): keys as pywb
canonicalises URLs (:mod:`capreplay.archive.index.pywb_urlkey`), numbers as strings, ``filename`` relative to
``archive/``, offsets into the WARC (not the ZIP), the method and body of a non-GET request folded into
its key (:mod:`capreplay.archive.index.method_query`), and ``warc/revisit`` as the MIME type of a revisit.
Nothing here reads a WACZ back; reading belongs to the importer.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import stat
import zipfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import BinaryIO

from capreplay.archive.index.cdxj import IndexEntry
from capreplay.archive.index.method_query import method_query, url_with_method
from capreplay.archive.index.pywb_urlkey import pywb_urlkey
from capreplay.models.manifest import PageEntry

WACZ_VERSION = "1.1.1"
CDX_NAME = "indexes/index.cdx.gz"
IDX_NAME = "indexes/index.idx"
PAGES_NAME = "pages/pages.jsonl"
DATAPACKAGE_NAME = "datapackage.json"
DIGEST_NAME = "datapackage-digest.json"
BLOCK_LINES = 1024
"""CDXJ lines per gzip block: py-wacz's and ArchiveWeb.page's default, a few tens of KiB a block."""

_CHUNK = 1 << 20
_FILE_MODE = (stat.S_IFREG | 0o644) << 16
_UNIX = 3  # ZipInfo.create_system; zipfile would write 0 on Windows, and the bytes would differ


@dataclass(frozen=True)
class Resource:
    """One file of the WACZ as ``datapackage.json`` lists it."""

    path: str
    """Path inside the ZIP, e.g. ``archive/data-00000.warc.gz``."""
    sha256: str
    """Lowercase hex."""
    size: int

    def as_json(self) -> dict[str, object]:
        """The resource object of the data package."""
        return {"name": self.path.rsplit("/", 1)[-1], "path": self.path, "hash": f"sha256:{self.sha256}",
                "bytes": self.size}


@dataclass(frozen=True)
class RequestBody:
    """What pywb keys a POST or PUT by, besides its method: the request's Content-Type and body."""

    content_type: str | None
    body: bytes


@dataclass(frozen=True)
class Metadata:
    """The descriptive fields of ``datapackage.json``."""

    title: str
    description: str
    created: datetime
    """Written as the WACZ's ``created``; the snapshot's own time, so that exports are reproducible."""
    software: str


def resource_for(path: str, data: bytes) -> Resource:
    """The resource entry of a file held in memory."""
    return Resource(path=path, sha256=hashlib.sha256(data).hexdigest(), size=len(data))


def rfc3339(moment: datetime) -> str:
    """``2026-11-29T13:46:43Z``: UTC, whole seconds, the form the WACZ examples use."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def cdxj_line(entry: IndexEntry, warc_name: str, request: RequestBody | None = None) -> str:
    """One CDXJ line of the WACZ index for ``entry``, whose record is in ``archive/<warc_name>``.

    ``request`` is the body of a POST/PUT, which becomes part of the key; other methods need none.
    """
    key = pywb_urlkey(entry.url)  # not entry.urlkey: pywb canonicalises some URLs differently
    fields: dict[str, str] = {"url": entry.url}
    revisit = entry.revisit_of is not None or entry.mime == "warc/revisit"
    fields["mime"] = "warc/revisit" if revisit else entry.mime
    if entry.status is not None and not revisit:  # pywb gives a status to response records only
        fields["status"] = str(entry.status)
    if entry.digest:
        # pywb writes sha1 digests bare and others with their label; it compares them as strings
        fields["digest"] = entry.digest.removeprefix("sha1:")
    fields["length"] = str(entry.length)
    fields["offset"] = str(entry.offset)
    folded = method_query(entry.method, request.content_type if request else None, request.body if request else b"")
    if folded is not None:
        appended, body_query = folded
        key = pywb_urlkey(url_with_method(entry.url, appended))
        fields["method"] = entry.method.upper()
        if body_query:
            fields["requestBody"] = body_query
    fields["filename"] = warc_name
    return f"{key} {entry.timestamp} {json.dumps(fields)}"


def zipnum(lines: Iterable[str], *, block_lines: int = BLOCK_LINES) -> tuple[bytes, bytes]:
    """``(index.cdx.gz, index.idx)`` for CDXJ ``lines``, which are sorted here as CDX readers require.

    Each block of ``block_lines`` lines is one gzip member (mtime 0, so the bytes are reproducible); the
    ``.idx`` names each block's first key and timestamp with its offset, length and sha256.
    """
    if block_lines < 1:
        raise ValueError("block_lines must be at least 1")
    ordered = sorted(lines)
    meta = {"format": "cdxj-gzip-1.0", "filename": CDX_NAME.rsplit("/", 1)[-1]}
    idx = [f"!meta 0 {json.dumps(meta)}\n"]
    blocks: list[bytes] = []
    offset = 0
    for start in range(0, len(ordered), block_lines):
        chunk = ordered[start : start + block_lines]
        member = gzip.compress("".join(line + "\n" for line in chunk).encode("utf-8"), mtime=0)
        key, timestamp, _ = chunk[0].split(" ", 2)
        where = {"offset": offset, "length": len(member), "digest": "sha256:" + hashlib.sha256(member).hexdigest()}
        idx.append(f"{key} {timestamp} {json.dumps(where)}\n")
        blocks.append(member)
        offset += len(member)
    return b"".join(blocks), "".join(idx).encode("utf-8")


def page_id(position: int, page: PageEntry) -> str:
    """A stable id for a page: the same snapshot always gives its pages the same ids."""
    text = f"{position}\n{page.url}\n{rfc3339(page.captured_at)}"
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:22]


def pages_jsonl(pages: Sequence[PageEntry]) -> bytes:
    """``pages/pages.jsonl``: the header line, then ``{"id", "url", "ts", "title"}`` for each page in order."""
    lines = [{"format": "json-pages-1.0", "id": "pages", "title": "All Pages"}]
    for position, page in enumerate(pages):
        lines.append({"id": page_id(position, page), "url": page.url, "ts": rfc3339(page.captured_at),
                      "title": page.title})
    return "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines).encode("utf-8")


def datapackage(resources: Sequence[Resource], meta: Metadata, pages: Sequence[PageEntry]) -> bytes:
    """``datapackage.json``: the data package profile, WACZ version, description and every resource."""
    package: dict[str, object] = {
        "profile": "data-package",
        "wacz_version": WACZ_VERSION,
        "title": meta.title,
        "description": meta.description,
        "created": rfc3339(meta.created),
        "software": meta.software,
    }
    if pages:
        # the page a viewer opens first; ReplayWeb.page reads these two fields
        package["mainPageUrl"] = pages[0].url
        package["mainPageDate"] = rfc3339(pages[0].captured_at)
    package["resources"] = [r.as_json() for r in resources]
    return (json.dumps(package, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def datapackage_digest(datapackage_bytes: bytes) -> bytes:
    """``datapackage-digest.json``: the sha256 of ``datapackage.json``, which vouches for every other file."""
    digest = {"path": DATAPACKAGE_NAME, "hash": "sha256:" + hashlib.sha256(datapackage_bytes).hexdigest()}
    return (json.dumps(digest, indent=2) + "\n").encode("utf-8")


def zip_info(path: str, moment: datetime) -> zipfile.ZipInfo:
    """A STORED member dated ``moment`` (UTC), with fixed attributes so the same input gives the same bytes."""
    utc = moment.astimezone(UTC)
    year = min(max(utc.year, 1980), 2107)  # the range a ZIP date can hold
    info = zipfile.ZipInfo(path, (year, utc.month, utc.day, utc.hour, utc.minute, utc.second))
    info.compress_type = zipfile.ZIP_STORED
    info.create_system = _UNIX
    info.external_attr = _FILE_MODE
    return info


def copy_member(archive: zipfile.ZipFile, info: zipfile.ZipInfo, source: BinaryIO, size: int) -> Resource:
    """Stream ``size`` bytes of ``source`` into the member ``info``; returns what was really copied.

    The caller compares the result with what it expected: a file that changed size or content while it
    was copied is then caught, since its sha256 is taken from the very bytes that went into the ZIP.
    """
    info.file_size = size  # lets zipfile choose ZIP64 up front for a WARC over 4 GiB
    digest = hashlib.sha256()
    copied = 0
    with archive.open(info, "w", force_zip64=size >= zipfile.ZIP64_LIMIT) as member:
        while chunk := source.read(_CHUNK):
            digest.update(chunk)
            member.write(chunk)
            copied += len(chunk)
    return Resource(path=info.filename, sha256=digest.hexdigest(), size=copied)
