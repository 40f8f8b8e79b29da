"""Reading a HAR file: parsed and checked against the HAR model, every problem one line naming the file.

A HAR is UTF-8 JSON (a byte-order mark, which some Windows tools write, is allowed). The file must hold
``{"log": {"entries": [...]}}`` with, in each entry, what a conversion needs (see
:mod:`capreplay.archive.har.model`); anything else is an :class:`ArchiveError` such as
``trace.har: not a HAR file: not valid JSON (Expecting value: line 1 column 1)`` or
``trace.har: invalid HAR: log.entries.3.request.url: Field required``. Bodies that Playwright keeps in
files beside the HAR (``_file``) are read too; one that is missing, or lies outside the HAR's folder, is
an error.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from capreplay.archive.har.model import Har
from capreplay.errors import ArchiveError, os_reason, validation_reason


@dataclass(frozen=True)
class HarFile:
    """A checked HAR and the file it came from."""

    har: Har
    path: Path
    size: int
    sha256: str
    """sha256 of the file's bytes, lowercase hex."""
    attachments: dict[str, bytes]
    """The bodies Playwright keeps in files of their own (``record_har_content="attach"``, and
    ``route_from_har(update=True)``), by the ``_file`` name the entries give, read from the HAR's folder."""


def read_har(path: Path) -> HarFile:
    """Read and check the HAR at ``path`` and the files its entries attach; raises :class:`ArchiveError`
    naming it for anything wrong."""
    try:
        data = path.read_bytes()
    except OSError as e:
        raise ArchiveError(f"cannot read: {os_reason(e)}", where=path) from e
    har = parse_har(data, str(path))
    return HarFile(har, path, len(data), hashlib.sha256(data).hexdigest(), _attachments(har, path))


def _attachments(har: Har, path: Path) -> dict[str, bytes]:
    """Every ``_file`` an entry names, read from the HAR's own folder (and never from outside it)."""
    folder = path.parent.resolve()
    found: dict[str, bytes] = {}
    for position, entry in enumerate(har.log.entries):
        named = [("response.content", entry.response.content.extra("_file"))]
        if entry.request.postData is not None:
            named.append(("request.postData", entry.request.postData.extra("_file")))
        for field, name in named:
            if name is None or name in found:
                continue
            where = f"log.entries[{position}].{field}._file"
            target = (folder / str(name)).resolve()
            if not isinstance(name, str) or not name or not target.is_relative_to(folder):
                raise ArchiveError(f"{where} {name!r} is no file in the HAR's folder", where=path)
            try:
                found[name] = target.read_bytes()
            except OSError as e:
                raise ArchiveError(f"{where}: cannot read {name}: {os_reason(e)}", where=path) from e
    return found


def parse_har(data: bytes, where: str) -> Har:
    """The HAR in ``data``; ``where`` names it in errors."""
    if not data.strip():
        raise ArchiveError("not a HAR file: it is empty", where=where)
    try:
        value = json.loads(data.decode("utf-8-sig"))
    except UnicodeDecodeError as e:
        raise ArchiveError(f"not a HAR file: not UTF-8 text (byte {e.start})", where=where) from e
    except json.JSONDecodeError as e:
        raise ArchiveError(f"not a HAR file: not valid JSON ({e.msg}: line {e.lineno} column {e.colno})",
                           where=where) from e  # fmt: skip
    except RecursionError as e:
        raise ArchiveError("not a HAR file: its JSON nests too deeply", where=where) from e
    if not isinstance(value, dict) or not isinstance(value.get("log"), dict):
        raise ArchiveError('not a HAR file: it holds no "log" object', where=where)
    if not isinstance(value["log"].get("entries"), list):
        raise ArchiveError('not a HAR file: its "log" holds no "entries" list', where=where)
    try:
        return Har.model_validate(value)
    except ValidationError as e:
        raise ArchiveError(f"invalid HAR: {validation_reason(e)}", where=where) from e
