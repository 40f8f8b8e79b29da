"""The only archive code that writes files: appending WARC records, and replacing a file atomically."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from types import TracebackType
from typing import Self

from capreplay.errors import CaptureError

_GZIP_MAGIC = b"\x1f\x8b"


class WarcAppender:
    """Appends whole records (gzip members) to a ``.warc.gz`` file, creating it if needed.

    The file is unbuffered and each member goes out in as few writes as the OS allows, so a reader of
    the growing file sees whole records, except after a crash in the middle of a write. A failed write
    is a :class:`CaptureError` (recording failures are never silent) and the appender refuses further
    appends, since the offsets it would report could no longer be trusted.
    """

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._file = open(self.path, "ab", buffering=0)  # noqa: SIM115  # closed by close()
            self._size = os.fstat(self._file.fileno()).st_size
        except OSError as e:
            raise CaptureError(f"cannot open for appending: {e.strerror or e}", where=self.path) from e
        self._broken = False

    @property
    def size(self) -> int:
        """Bytes in the file: the offset the next appended record will get."""
        return self._size

    def append(self, member: bytes) -> tuple[int, int]:
        """Append one record (one gzip member); returns its (offset, length) in the file."""
        if self._file.closed or self._broken:
            raise CaptureError("appender is closed or failed earlier", where=self.path)
        if self.path.name.endswith(".gz") and not member.startswith(_GZIP_MAGIC):
            raise CaptureError("refusing to append a record that is not a gzip member", where=self.path)
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
            raise CaptureError(f"cannot write record at offset {offset}: {e.strerror or e}", where=self.path) from e
        self._size += written
        return offset, written

    def sync(self) -> None:
        """Make every appended record durable (flush and fsync)."""
        try:
            self._file.flush()
            os.fsync(self._file.fileno())
        except OSError as e:
            self._broken = True
            raise CaptureError(f"cannot sync: {e}", where=self.path) from e

    def close(self) -> None:
        """Sync and close; closing twice is harmless."""
        if self._file.closed:
            return
        try:
            if not self._broken:
                self.sync()
        finally:
            self._file.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def write_atomic(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` so a reader sees the old file or the new one, never half of one.

    Writes ``<name>.tmp`` next to it, fsyncs, then renames over it (snapshot listings ignore ``*.tmp``).
    """
    tmp = path.with_name(path.name + ".tmp")
    try:
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
        # the rename itself lives in the folder: sync it too, or a crash may forget the new file
        dir_fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
    except OSError as e:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
        raise CaptureError(f"cannot write: {e.strerror or e}", where=path) from e
