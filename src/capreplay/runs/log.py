"""Append-only JSON-lines logs of run records: durable per line, readable after a crash, one record per key.

Study runs (one record per model call) and agent runs (one record per episode) keep their records the same
way: each record is one line, flushed and fsynced before ``append`` returns, so a crash loses at most the line
being written. Reading back ignores an unfinished last line (and the log cuts it off before appending); any
other damaged line, or a key recorded twice, is an ``InputError`` naming the line, because only the last line
can be cut short by a crash.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Hashable
from pathlib import Path
from typing import BinaryIO

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from capreplay.errors import CapreplayError, InputError, os_reason, validation_reason
from capreplay.util.closing import Closing

log = logging.getLogger(__name__)


class LinesRead[R: BaseModel](BaseModel):
    """What a log file holds: its complete records, and an unfinished last line if a crash left one."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    records: list[R]
    complete_bytes: int = Field(description="Length of the file up to the end of its last complete line.")
    torn_tail: bytes = Field(default=b"", description="An unfinished last line, ignored.")


def read_lines[R: BaseModel, K: Hashable](
    path: Path, model: type[R], key: Callable[[R], K], what: str, describe: Callable[[K], str] = str
) -> LinesRead[R]:
    """The records of ``path`` (none if it does not exist), each a ``model``; ``what`` names one in errors."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return LinesRead[R](records=[], complete_bytes=0)
    except OSError as e:
        raise InputError(f"cannot read: {os_reason(e)}", path) from e
    end = data.rfind(b"\n") + 1
    records: list[R] = []
    seen: dict[K, int] = {}
    # split on "\n" only: JSON text escapes every other line break, so a record is exactly one such line
    for number, line in enumerate(data[:end].split(b"\n")[:-1], start=1):
        try:
            record = model.model_validate_json(line)
        except ValidationError as e:
            raise InputError(f"line {number} is not a {what}: {validation_reason(e)}", path) from e
        k = key(record)
        if k in seen:
            raise InputError(f"line {number} records {describe(k)} again (line {seen[k]})", path)
        seen[k] = number
        records.append(record)
    return LinesRead[R](records=records, complete_bytes=end, torn_tail=data[end:])


class LineFile(Closing):
    """A file of lines opened for appending, cut back to its first ``keep`` bytes (what a crash left whole).

    Each :meth:`write_line` is flushed and fsynced before it returns, so a line written is a line kept.
    """

    def __init__(self, path: Path, keep: int | None = None) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            # held open across appends for the life of the log; close() (or the with block) closes it
            self._file: BinaryIO = open(path, "ab")  # noqa: SIM115
            if keep is not None and keep < self._file.tell():
                self._file.truncate(keep)
        except OSError as e:
            raise CapreplayError(f"cannot open for appending: {os_reason(e)}", path) from e

    def write_line(self, line: bytes, what: str) -> None:
        """Append ``line`` and a newline, durably; ``what`` names it in the error if the write fails."""
        try:
            self._file.write(line + b"\n")
            self._file.flush()
            os.fsync(self._file.fileno())
        except OSError as e:
            raise CapreplayError(f"cannot write {what}: {os_reason(e)}", self.path) from e

    def close(self) -> None:
        """Close the file."""
        self._file.close()


class AppendLog[R: BaseModel, K: Hashable](LineFile):
    """A log of records opened for appending: one line per record, at most one record per key."""

    def __init__(
        self, path: Path, model: type[R], key: Callable[[R], K], what: str, describe: Callable[[K], str] = str
    ) -> None:
        """Read what ``path`` holds, cut off an unfinished last line, and open it for appending."""
        self._key = key
        self._describe = describe
        read = read_lines(path, model, key, what, describe)
        self.records: list[R] = list(read.records)
        self.finished: set[K] = {key(r) for r in read.records}
        self.torn_tail = read.torn_tail
        if read.torn_tail:
            log.warning("%s: cutting off an unfinished last line (%d bytes) left by a crash", path, len(read.torn_tail))
        super().__init__(path, read.complete_bytes)

    def append(self, record: R) -> None:
        """Write ``record`` as one line and make it durable; a key already recorded is a ValueError."""
        k = self._key(record)
        if k in self.finished:
            raise ValueError(f"{self._describe(k)} is already recorded")
        self.write_line(record.model_dump_json().encode("utf-8"), "a record")
        self.finished.add(k)
        self.records.append(record)

