"""Appending WARC records to a file, one gzip member each, durably."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from capreplay.errors import OutputError, os_reason
from capreplay.util.closing import Closing

_GZIP_MAGIC = b"\x1f\x8b"


class WarcAppender(Closing):
    """Appends whole records (gzip members) to a ``.warc.gz`` file, creating it if needed.

    The file is unbuffered and each member goes out in as few writes as the OS allows, so a reader of
    the growing file sees whole records, except after a crash in the middle of a write. A failed write
    is a :class:`OutputError` (recording failures are never silent) and the appender refuses further
    appends, since the offsets it would report could no longer be trusted.
    """

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._file = open(self.path, "ab", buffering=0)  # noqa: SIM115  # closed by close()
            self._size = os.fstat(self._file.fileno()).st_size
        except OSError as e:
            raise OutputError(f"cannot open for appending: {os_reason(e)}", where=self.path) from e
        self._broken = False

    @property
    def size(self) -> int:
        """Bytes in the file: the offset the next appended record will get."""
        return self._size

    def append(self, member: bytes) -> tuple[int, int]:
        """Append one record (one gzip member); returns its (offset, length) in the file."""
        if self._file.closed or self._broken:
            raise OutputError("appender is closed or failed earlier", where=self.path)
        if self.path.name.endswith(".gz") and not member.startswith(_GZIP_MAGIC):
            raise OutputError("refusing to append a record that is not a gzip member", where=self.path)
        offset = self._size
        view = memoryview(member)
        written = 0
        try:
            while written < len(view):
                # a raw file may write less than asked (signals, full disks); keep going
                n = self._file.write(view[written:])
                if not n:
                    raise OSError("write returned 0 bytes")
                written += n
        except OSError as e:
            self._broken = True
            # Cut the half-written record off so the file stays a sequence of whole records.
            with contextlib.suppress(OSError):
                os.ftruncate(self._file.fileno(), offset)
            raise OutputError(f"cannot write record at offset {offset}: {os_reason(e)}", where=self.path) from e
        self._size += written
        return offset, written

    def sync(self) -> None:
        """Make every appended record durable (flush and fsync)."""
        try:
            self._file.flush()
            os.fsync(self._file.fileno())
        except OSError as e:
            self._broken = True
            raise OutputError(f"cannot sync: {e}", where=self.path) from e

    def close(self) -> None:
        """Sync and close; closing twice is harmless."""
        if self._file.closed:
            return
        try:
            if not self._broken:
                self.sync()
        finally:
            self._file.close()

