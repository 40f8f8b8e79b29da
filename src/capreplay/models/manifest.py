"""The snapshot manifest: what a snapshot holds, how it was captured, and a sha256 for every file.

Pure models, no I/O; :mod:`capreplay.archive.snapshot.manifest` reads, writes and verifies them on disk.
"""

from __future__ import annotations

import hashlib
import json
from functools import partial
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, AwareDatetime, BaseModel, ConfigDict, Field, field_validator

from capreplay.models.live_traffic import WebSocketLog
from capreplay.models.schema import check_schema

MANIFEST_SCHEMA_VERSION = 1
"""The manifest schema this code reads and writes."""
SchemaVersion = Annotated[int, AfterValidator(partial(check_schema, supported=MANIFEST_SCHEMA_VERSION))]
"""A ``schema_version`` that must be MANIFEST_SCHEMA_VERSION."""

_SHA256_HEX = r"^[0-9a-f]{64}$"



def _check_relative_path(value: str) -> str:
    """A snapshot path must stay inside the snapshot: posix, relative, no ``..``, no empty parts."""
    parts = value.split("/")
    if not value or value.startswith("/") or "\\" in value or any(p in ("", ".", "..") for p in parts):
        raise ValueError(f"{value!r} is not a plain relative posix path inside the snapshot")
    return value


class FileEntry(BaseModel):
    """One file of the snapshot with its size and sha256."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    path: str = Field(description="Posix path relative to the snapshot folder, e.g. archive/data-00000.warc.gz.")
    size: int = Field(ge=0, description="Size in bytes.")
    sha256: str = Field(pattern=_SHA256_HEX, description="sha256 of the file's bytes, lowercase hex.")

    @field_validator("path")
    @classmethod
    def _relative(cls, value: str) -> str:
        return _check_relative_path(value)


class PageEntry(BaseModel):
    """One page the capture loaded, with the fidelity files (screenshot, visible text) it left."""

    model_config = ConfigDict(extra="forbid")

    url: str = Field(description="The URL the capture was asked to load.")
    final_url: str = Field(description="The URL the browser ended on, after redirects.")
    title: str = Field(description="The document title once the page had settled.")
    status: int | None = Field(description="HTTP status of the main document, None if it never answered.")
    captured_at: AwareDatetime = Field(description="When the page was loaded (timezone-aware).")
    screenshot: str | None = Field(
        default=None, description="Relative path of the page's screenshot, e.g. captures/0000.png."
    )
    text: str | None = Field(
        default=None, description="Relative path of the page's visible text, e.g. captures/0000.txt."
    )
    actions: list[dict[str, Any]] = Field(
        default_factory=list,
        description="The plan actions run on the page after it loaded; verify replays them in order.",
    )
    depth: int = Field(default=0, ge=0, description="Crawl depth: 0 for a seed URL, parent's depth + 1 below.")
    parent: str | None = Field(default=None, description="URL of the page whose link led here, None for seeds.")

    @field_validator("screenshot", "text")
    @classmethod
    def _relative(cls, value: str | None) -> str | None:
        return None if value is None else _check_relative_path(value)


class SourceFile(BaseModel):
    """One input of ``capreplay import``: a WARC or WACZ written by another tool."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(description="The input's file name, as given (without its folder).")
    size: int = Field(ge=0, description="Size in bytes.")
    sha256: str = Field(pattern=_SHA256_HEX, description="sha256 of the input's bytes, lowercase hex.")
    software: list[str] = Field(
        default_factory=list, description="The writing tools its warcinfo records name (their 'software' field)."
    )
    archive_files: list[str] = Field(description="The snapshot's WARC files that hold its records, byte for byte.")


class ReplaySettings(BaseModel):
    """How the snapshot is replayed, where a snapshot's maker wants other than the defaults."""

    model_config = ConfigDict(extra="forbid")

    strict: bool = Field(
        default=False,
        description="Turn off the nearest-query fuzzy rule (as ``serve --strict`` does): only keyed rules match.",
    )
    strict_hosts: list[str] = Field(
        default_factory=list,
        description="Hosts replayed as if strict even when ``strict`` is off: applications whose pages differ by "
        "their query (a filter, a sort), where the nearest query would answer with another state. A static page "
        "whose scripts read the query (a client-side search) is better answered by the nearest query.",
    )


type BodyForm = Literal["dechunked", "decoded", "http-body", "payload"]
"""A documented other form of a record's body that a foreign tool's payload digest may cover, or (``payload``)
its block digest (see :mod:`capreplay.archive.warc.digests`)."""


class OtherFormDigest(BaseModel):
    """A record digest taken over a documented other form of the body, accepted by the import.

    The forms are described in :mod:`capreplay.archive.warc.digests`.
    """

    model_config = ConfigDict(extra="forbid")

    file: str = Field(description="The WARC it is in: the input's name, or ``NAME.wacz!archive/<member>``.")
    record_id: str = Field(description="WARC-Record-ID of the record, with its angle brackets.")
    url: str | None = Field(description="WARC-Target-URI of the record, None if it has none.")
    digest: Literal["block", "payload"] = Field(
        description="Which digest: a payload digest (forms ``dechunked``, ``decoded``, ``http-body``) or a block "
        "digest (form ``payload``)."
    )
    form: BodyForm = Field(description="The form of the body it matches.")


class DigestMismatch(BaseModel):
    """A digest that matched no form of what it covers, imported only because the user allowed it."""

    model_config = ConfigDict(extra="forbid")

    file: str = Field(
        description="The WARC it is in (``NAME``, or ``NAME.wacz!archive/<member>``); for a digest in a WACZ's "
        "datapackage.json, the WACZ member it lists (``NAME.wacz!<member>``)."
    )
    record_id: str | None = Field(description="WARC-Record-ID of the record; None for a datapackage digest.")
    url: str | None = Field(description="WARC-Target-URI of the record; None for a datapackage digest.")
    digest: Literal["block", "payload", "datapackage"] = Field(
        description="Which digest: a record's block or payload digest, or a file's digest in datapackage.json "
        "(or datapackage.json's own, in datapackage-digest.json)."
    )
    expected: str = Field(description="The digest as written, e.g. ``sha1:3ECF...`` or ``sha256:<hex>``.")
    actual: str = Field(description="The digest of the bytes as stored, in the same algorithm and spelling.")


class DigestReport(BaseModel):
    """How an import's digest checks ended: digests over other forms, and mismatches let through."""

    model_config = ConfigDict(extra="forbid")

    allow_mismatch: bool = Field(
        description="True if the import was run with ``--allow-digest-mismatch``: then ``mismatches`` may be non-empty."
    )
    other_forms: list[OtherFormDigest] = Field(
        default_factory=list, description="Record digests accepted because they match a documented other form."
    )
    mismatches: list[DigestMismatch] = Field(
        default_factory=list, description="Every digest that matched nothing, imported under the override."
    )


class WebSocketCounts(BaseModel):
    """The WebSocket connections a capture archived (see :mod:`capreplay.archive.warc.live`) and their messages."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    connections: int = Field(default=0, ge=0, description="Connections archived, each with its messages record.")
    messages: int = Field(default=0, ge=0, description="Data messages of those, both directions (close frames aside).")
    cut: int = Field(default=0, ge=0, description="Connections still open when the capture ended (``WARC-Truncated``).")

    def counted(self, log: WebSocketLog) -> WebSocketCounts:
        """These counts with one more connection, ``log``."""
        return WebSocketCounts(
            connections=self.connections + 1,
            messages=self.messages + len(log.sent) + len(log.received),
            cut=self.cut + (log.ended == "cut"),
        )


class Manifest(BaseModel):
    """``manifest.json``: everything needed to trust, serve and re-verify a snapshot.

    The snapshot id names both what the snapshot holds and what it is taken to be: it is the sha256 of
    the canonical JSON of ``{"files": [...], "pages": [...]}`` (:func:`snapshot_id`), the files sorted by
    path and the pages in their order. Two snapshots of the same WARCs with other page lists (another
    ``--page``, say) therefore have other ids, and a manifest whose files or pages were edited no longer
    matches its id, which verification refuses as tampering. Other fields (created time, tools, hosts,
    the digest report) are not part of it.
    """

    model_config = ConfigDict(extra="forbid")

    schema_version: SchemaVersion = Field(default=MANIFEST_SCHEMA_VERSION, description="Version of this manifest.")
    snapshot_id: str = Field(
        pattern=_SHA256_HEX,
        description="sha256 of the canonical JSON of ``files`` and ``pages`` (see :func:`snapshot_id`); "
        "any change to any byte of any file, or to the page list, changes it.",
    )
    created: AwareDatetime = Field(description="When the snapshot was written (timezone-aware).")
    complete: bool = Field(description="False if the capture stopped before finishing its plan.")
    tools: dict[str, str] = Field(description="Versions of the packages that captured it, by package name.")
    browser: dict[str, Any] = Field(description="The capturing browser: name, version, user agent, viewport.")
    frozen_time: AwareDatetime = Field(
        description="The clock pages were captured under and are replayed under (Date, performance.now)."
    )
    random_seed: int = Field(description="Seed of the deterministic Math.random / crypto.getRandomValues.")
    plan: dict[str, Any] | None = Field(description="The capture plan as given, None for plain URL captures.")
    pages: list[PageEntry] = Field(description="Every page the capture loaded, in capture order.")
    hosts: list[str] = Field(description="Every host with at least one archived response.")
    files: list[FileEntry] = Field(description="Every file of the snapshot except manifest.json itself.")
    replay: ReplaySettings = Field(default_factory=ReplaySettings, description="Replay settings of this snapshot.")
    imported_from: list[SourceFile] | None = Field(
        default=None, description="For a snapshot made by ``capreplay import``: its input files; None for a capture."
    )
    digests: DigestReport | None = Field(
        default=None,
        description="For a snapshot made by ``capreplay import``: what its digest checks found; None for a "
        "capture (whose records capreplay wrote itself) and for manifests written before imports reported it.",
    )

    websockets: WebSocketCounts | None = Field(
        default=None,
        description="For a capture that archived WebSocket connections: how many, and their messages; None when it "
        "archived none (and in manifests written before connections were archived). Not part of the snapshot id: "
        "the records themselves are, through the WARC's sha256.",
    )

    @field_validator("files")
    @classmethod
    def _unique_paths(cls, files: list[FileEntry]) -> list[FileEntry]:
        seen: set[str] = set()
        for entry in files:
            if entry.path in seen:
                raise ValueError(f"{entry.path} is listed twice")
            seen.add(entry.path)
        return files


def snapshot_id(files: list[FileEntry], pages: list[PageEntry]) -> str:
    """The sha256 hex of the canonical JSON of ``{"files": files, "pages": pages}``.

    Canonical: files sorted by path, pages in their order (capture order, or the order an import chose),
    every field of each written as the manifest writes it (``model_dump(mode="json")``), keys sorted,
    no spaces, non-ASCII characters escaped (``json.dumps`` defaults). Every file's sha256 is part of the
    hashed text, so a change to any byte of any file changes the id; so does any change to the pages
    (another page, another order, another title).
    """
    ordered = sorted(files, key=lambda f: f.path)
    text = json.dumps(
        {"files": [f.model_dump(mode="json") for f in ordered], "pages": [p.model_dump(mode="json") for p in pages]},
        sort_keys=True,
        separators=(",", ":"),
    )
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
