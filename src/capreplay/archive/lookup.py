"""Lookups in a sorted CDXJ index without loading it: binary search over the file's bytes.

Replay must not hold one Python object per archived record: at 100,000 records that cost seconds at
start-up and hundreds of megabytes. The index is sorted by its SURT key, so the lines for one key (or one
key prefix) form a contiguous run that a binary search over the memory-mapped file finds in about
log2(file size) probes, the way pywb searches its CDXJ files. Only the lines a request needs are parsed.
"""

from __future__ import annotations

import json
import mmap
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from capreplay.archive.index import IndexEntry
from capreplay.archive.keys import origin_of
from capreplay.errors import SnapshotError

_TIMESTAMP = re.compile(rb"\d{14}")

# The JSON part of a line: every field of an IndexEntry but the two in front. Checked by pydantic's own JSON
# parser in one call per line, several times faster than json.loads followed by validation.
_LineFields: type[BaseModel] = create_model(
    "_LineFields",
    __config__=ConfigDict(extra="forbid", frozen=True),
    **{
        name: (field.annotation, field)  # type: ignore[call-overload]
        for name, field in IndexEntry.model_fields.items()
        if name not in ("urlkey", "timestamp")
    },
)


class SortedIndex:
    """A CDXJ index as :func:`capreplay.archive.index.write_index` writes it, searched in place.

    ``data`` is the file's bytes: a read-only memory map for an index on disk (the page cache holds it,
    not the process), or a ``bytes`` object for one built in memory.
    """

    def __init__(self, data: bytes | mmap.mmap, where: str) -> None:
        self._data = data
        self.where = where

    @classmethod
    def open(cls, path: Path) -> SortedIndex:
        """Map ``path`` read-only. An empty file is an empty index."""
        try:
            with open(path, "rb") as f:
                if f.seek(0, 2) == 0:
                    return cls(b"", str(path))
                return cls(mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ), str(path))
        except OSError as e:
            raise SnapshotError(f"cannot read the index: {e.strerror or e}", where=path) from e

    def close(self) -> None:
        """Release the map (lookups after this raise)."""
        if isinstance(self._data, mmap.mmap):
            self._data.close()

    def lines(self, key: str) -> list[tuple[int, bytes]]:
        """``(offset, line)`` of every line whose key is exactly ``key``, in file order."""
        needle = key.encode("utf-8")
        start = self._lower_bound(needle)
        return list(self._run(start, lambda k: k == needle))

    def lines_under(self, key: str, separator: str) -> list[tuple[int, bytes]]:
        """Lines whose key is ``key`` or starts with ``key + separator``, in file order."""
        exact = self.lines(key)
        prefix = (key + separator).encode("utf-8")
        start = self._lower_bound(prefix)
        return exact + list(self._run(start, lambda k: k.startswith(prefix)))

    def __iter__(self) -> Iterator[tuple[int, bytes]]:
        """Every index line (metadata lines skipped) with its offset, in file order."""
        data, pos, end = self._data, 0, len(self._data)
        while pos < end:
            stop = data.find(b"\n", pos)
            stop = end if stop < 0 else stop
            line = data[pos:stop]
            if line.strip() and not line.startswith(b"!"):
                yield pos, line
            pos = stop + 1

    def entry(self, offset: int) -> IndexEntry:
        """The full entry of the line at ``offset`` (an offset from :meth:`lines` or iteration)."""
        stop = self._data.find(b"\n", offset)
        return parse_line(self._data[offset : stop if stop >= 0 else len(self._data)], f"{self.where}@{offset}")

    def line_number(self, offset: int) -> int:
        """The 1-based line number of the line at ``offset``, for error messages."""
        return self._data[:offset].count(b"\n") + 1

    def _key_at(self, start: int) -> bytes:
        space = self._data.find(b" ", start)
        newline = self._data.find(b"\n", start)
        if newline < 0:
            newline = len(self._data)
        return self._data[start : space if 0 <= space < newline else newline]

    def _lower_bound(self, needle: bytes) -> int:
        """Offset of the first line whose key is >= ``needle`` (the file's length when none is)."""
        data = self._data
        low, high = 0, len(data)
        # Invariant: every line starting before ``low`` has a smaller key; the line at ``high`` (or the end
        # of the file) has a key >= needle. Each probe takes the line containing the midpoint.
        while low < high:
            mid = (low + high) // 2
            start = data.rfind(b"\n", low, mid) + 1 or low
            if self._key_at(start) < needle:
                following = data.find(b"\n", start)
                low = len(data) if following < 0 else following + 1
            else:
                high = start
        return low

    def _run(self, start: int, belongs: Any) -> Iterator[tuple[int, bytes]]:
        data, pos, end = self._data, start, len(self._data)
        while pos < end:
            stop = data.find(b"\n", pos)
            stop = end if stop < 0 else stop
            line = data[pos:stop]
            if not belongs(line.split(b" ", 1)[0]):
                return
            yield pos, line
            pos = stop + 1


def check_index(index: SortedIndex, root: Path, sizes: dict[str, int]) -> list[tuple[str, str, int]]:
    """Check every line of ``index`` once; return the ``(scheme, host, port)`` origins it holds.

    Every line must be a valid entry, the lines must be sorted as :func:`write_index` sorts them (or binary
    search would miss some), and every record must lie inside its file (``sizes``: path in the snapshot
    ``root`` -> bytes), so that no later read runs past an end. The first problem is a
    :class:`SnapshotError` naming the index line, or the WARC file a record does not fit in.
    """
    origins: set[tuple[str, str, int]] = set()
    previous = b""
    for offset, line in index:
        problem = _line_problem(line, previous, sizes)
        if isinstance(problem, tuple) and isinstance(problem[1], int):
            filename, size, start, length = problem
            raise SnapshotError(
                f"record at offset {start} ({length} bytes, index line {index.line_number(offset)}) ends past "
                f"the end of the file ({size} bytes): truncated",
                where=root / filename,
            )
        if isinstance(problem, str):
            raise SnapshotError(problem, where=f"{index.where}:{index.line_number(offset)}")
        previous, url = problem
        origins.add(origin_of(url))
    return sorted(origins)


def _line_problem(
    line: bytes, previous: bytes, sizes: dict[str, int]
) -> str | tuple[str, int, int, int] | tuple[bytes, str]:
    """What is wrong with one index line (a message, or ``(file, size, offset, length)`` of a record that
    does not fit in its file), or its sort key and URL when nothing is."""
    parts = line.split(b" ", 2)
    if len(parts) != 3 or not _TIMESTAMP.fullmatch(parts[1]):
        return "malformed index line: expected 'urlkey timestamp {json}'"
    try:
        fields = _LineFields.model_validate_json(parts[2])
    except ValidationError as e:
        first = e.errors()[0]
        loc = ".".join(str(p) for p in first["loc"]) or "entry"
        return f"malformed index line: {loc}: {first['msg']}"
    order = parts[0] + b" " + parts[1]
    if order < previous:
        return "index lines are not sorted by key and timestamp"
    values = fields.__dict__
    places = [(values["filename"], values["offset"], values["length"])]
    if values["orig_filename"] is not None and values["orig_offset"] is not None:
        places.append((values["orig_filename"], values["orig_offset"], values["orig_length"] or 0))
    for filename, start, length in places:
        size = sizes.get(filename)
        if size is None:
            return f"names {filename}, which the snapshot does not hold"
        if start + length > size:
            return filename, size, start, length
    return order, values["url"]


def parse_line(line: bytes, where: str) -> IndexEntry:
    """One CDXJ line as an entry; anything malformed is a :class:`SnapshotError` naming ``where``."""
    parts = line.split(b" ", 2)
    if len(parts) != 3:
        raise SnapshotError("malformed index line: expected 'urlkey timestamp {json}'", where=where)
    try:
        fields = json.loads(parts[2])
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise SnapshotError(f"malformed index line: invalid JSON ({e})", where=where) from e
    if not isinstance(fields, dict):
        raise SnapshotError("malformed index line: the JSON is not an object", where=where)
    try:
        return IndexEntry.model_validate(
            {**fields, "urlkey": parts[0].decode("utf-8"), "timestamp": parts[1].decode("ascii")}
        )
    except (ValidationError, UnicodeDecodeError) as e:
        if isinstance(e, ValidationError):
            first = e.errors()[0]
            loc = ".".join(str(p) for p in first["loc"]) or "entry"
            raise SnapshotError(f"malformed index line: {loc}: {first['msg']}", where=where) from e
        raise SnapshotError(f"malformed index line: {e}", where=where) from e
