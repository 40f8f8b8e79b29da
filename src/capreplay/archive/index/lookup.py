"""Lookups in a sorted CDXJ index without loading it: binary search over the file's bytes.

Replay must not hold one Python object per archived record: at 100,000 records that cost seconds at
start-up and hundreds of megabytes. The index is sorted by its SURT key, so the lines for one key (or one
key prefix) form a contiguous run that a binary search over the file finds in about log2(file size)
reads, the way pywb searches its CDXJ files. Only the lines a request needs are parsed.
"""

from __future__ import annotations

import bisect
import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from capreplay.archive.index.cdxj import IndexEntry
from capreplay.archive.index.keys import origin_of
from capreplay.errors import SnapshotError, os_reason, validation_reason

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
    """A CDXJ index as :func:`capreplay.archive.index.cdxj.write_index` writes it, searched in place.

    An index on disk is read with ``pread`` (the page cache holds it, not the process: a memory map would
    count every page a lookup touched in the server's resident set); one built in memory is ``bytes``.
    """

    def __init__(self, data: bytes | int, where: str, size: int | None = None) -> None:
        """``data``: the index's bytes, or an open file descriptor (then ``size`` is the file's size)."""
        self._data = data
        self._size = len(data) if isinstance(data, bytes) else int(size or 0)
        self.where = where
        self._sampled: tuple[list[bytes], list[int]] | None = None

    @classmethod
    def open(cls, path: Path) -> SortedIndex:
        """Open ``path`` for lookups. An empty file is an empty index."""
        try:
            fd = os.open(path, os.O_RDONLY)
            return cls(fd, str(path), os.fstat(fd).st_size)
        except OSError as e:
            raise SnapshotError(f"cannot read the index: {os_reason(e)}", where=path) from e

    def close(self) -> None:
        """Close the file (lookups after this raise)."""
        if isinstance(self._data, int) and self._data >= 0:
            os.close(self._data)
            self._data = -1

    def lines(self, key: str) -> list[tuple[int, bytes]]:
        """``(offset, line)`` of every line whose key is exactly ``key``, in file order."""
        needle = key.encode("utf-8")
        return list(self._run(self._lower_bound(needle), lambda k: k == needle))

    def lines_under(self, key: str, separator: str) -> list[tuple[int, bytes]]:
        """Lines whose key is ``key`` or starts with ``key + separator``, in file order."""
        prefix = (key + separator).encode("utf-8")
        return self.lines(key) + list(self._run(self._lower_bound(prefix), lambda k: k.startswith(prefix)))

    def __iter__(self) -> Iterator[tuple[int, bytes]]:
        """Every index line (metadata lines skipped) with its offset, in file order."""
        pos, rest = 0, b""
        while pos + len(rest) < self._size or rest:
            chunk = self._read(pos + len(rest), _SCAN) if pos + len(rest) < self._size else b""
            data = rest + chunk
            last = data.rfind(b"\n")
            if last < 0 and chunk:
                rest = data
                continue
            complete = data if last < 0 else data[: last + 1]
            for line in complete.splitlines(keepends=True):
                body = line.rstrip(b"\r\n")
                if body.strip() and not body.startswith(b"!"):
                    yield pos, body
                pos += len(line)
            rest = b"" if last < 0 else data[last + 1 :]

    def entry(self, offset: int) -> IndexEntry:
        """The full entry of the line at ``offset`` (an offset from :meth:`lines` or iteration)."""
        return parse_line(self._line_at(offset)[0], f"{self.where}@{offset}")

    def line_number(self, offset: int) -> int:
        """The 1-based line number of the line at ``offset``, for error messages."""
        return sum(self._read(at, min(_SCAN, offset - at)).count(b"\n") for at in range(0, offset, _SCAN)) + 1

    def _read(self, pos: int, size: int) -> bytes:
        if isinstance(self._data, bytes):
            return self._data[pos : pos + size]
        return os.pread(self._data, size, pos)

    def _line_at(self, start: int) -> tuple[bytes, int]:
        """The line starting at ``start`` (without its newline) and the offset of the next one."""
        parts: list[bytes] = []
        pos = start
        while pos < self._size:
            chunk = self._read(pos, _PROBE)
            newline = chunk.find(b"\n")
            if newline >= 0:
                parts.append(chunk[:newline])
                return b"".join(parts), pos + newline + 1
            parts.append(chunk)
            pos += len(chunk)
        return b"".join(parts), self._size

    def _line_start_from(self, pos: int) -> int:
        """The first line start at or after ``pos``."""
        if pos == 0:
            return 0
        return self._line_at(pos - 1)[1]  # the rest of the line holding byte pos - 1, then the next line

    def _summary(self) -> tuple[list[bytes], list[int]]:
        """The key of the first line starting at or after every :data:`_BLOCK` bytes, and where it starts.

        A few kilobytes per megabyte of index, read once: a lookup bisects it in memory, then reads the one
        block its key can be in (pywb keeps the same kind of summary for its compressed indexes).
        """
        if self._sampled is None:
            keys: list[bytes] = []
            starts: list[int] = []
            for pos in range(0, self._size, _BLOCK):
                start = self._line_start_from(pos)
                if start < self._size and (not starts or start != starts[-1]):
                    keys.append(self._line_at(start)[0].split(b" ", 1)[0])
                    starts.append(start)
            self._sampled = (keys, starts)
        return self._sampled

    def _lower_bound(self, needle: bytes) -> int:
        """Offset of the first line whose key is >= ``needle`` (the file's length when none is)."""
        keys, starts = self._summary()
        # Sampled line i - 1 has a smaller key and sampled line i does not: the answer lies between them.
        i = bisect.bisect_left(keys, needle)
        low = starts[i - 1] if i > 0 else 0
        high = starts[i] if i < len(starts) else self._size
        span = self._read(low, high - low)
        pos = low
        for line in span.splitlines(keepends=True):
            if line.split(b" ", 1)[0].rstrip(b"\r\n") >= needle:
                return pos
            pos += len(line)
        return high

    def _run(self, start: int, belongs: Any) -> Iterator[tuple[int, bytes]]:
        pos = start
        while pos < self._size:
            line, following = self._line_at(pos)
            if not belongs(line.split(b" ", 1)[0]):
                return
            yield pos, line
            pos = following


_PROBE = 2048  # bytes read per probe: a whole index line (about 450 bytes) with room to spare
_SCAN = 1 << 20  # bytes read at a time when walking the whole index
_BLOCK = 8192  # bytes of index per summary entry


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
        return f"malformed index line: {validation_reason(e, 'entry')}"
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
            raise SnapshotError(f"malformed index line: {validation_reason(e, 'entry')}", where=where) from e
        raise SnapshotError(f"malformed index line: {e}", where=where) from e
