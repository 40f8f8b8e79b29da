"""The work folders ready responses are built in, and the removal of those a killed build left behind.

A build writes its parts into a ``.building-*`` folder next to the ready folders and renames it into place
when whole (:mod:`capreplay.replay.ready.builder`, :mod:`capreplay.replay.ready.with_index`); a build that is
killed leaves its folder, hundreds of megabytes for a large snapshot. Each build holds an exclusive
``flock`` on its folder (the folder itself: renaming keeps its inode, and no lock file ends up in a ready
folder) for as long as it runs, and the kernel drops the lock with the process. A new build removes the
work folders that are old and that no one holds: an hour of age keeps it away from a folder whose build
has only just made it and not yet locked it.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import tempfile
import time
from pathlib import Path

WORK_PREFIX = ".building-"
STALE_SECONDS = 3600.0
"""A work folder untouched for this long and locked by no process is a killed build's."""


class WorkFolder:
    """A new work folder under ``base``, locked until :meth:`close` (which removes it unless it was renamed)."""

    def __init__(self, base: Path) -> None:
        base.mkdir(parents=True, exist_ok=True)
        remove_stale(base)
        self.path = Path(tempfile.mkdtemp(prefix=WORK_PREFIX, dir=base))
        try:
            self._fd: int | None = os.open(self.path, os.O_RDONLY | os.O_DIRECTORY)
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            shutil.rmtree(self.path, ignore_errors=True)
            raise

    def close(self) -> None:
        """Remove the folder (a no-op once it was renamed into place) and let the lock go."""
        fd, self._fd = self._fd, None
        if fd is None:
            return
        try:
            shutil.rmtree(self.path, ignore_errors=True)
        finally:
            os.close(fd)


def remove_stale(base: Path, *, older_than: float = STALE_SECONDS, now: float | None = None) -> list[Path]:
    """Remove the work folders under ``base`` that no process holds and that nothing changed for
    ``older_than`` seconds; return them. Whatever cannot be looked at or removed is left alone."""
    now = time.time() if now is None else now
    removed = []
    with contextlib.suppress(OSError):
        for folder in base.glob(WORK_PREFIX + "*"):
            if _changed_at(folder) > now - older_than:
                continue
            try:
                fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
            except OSError:
                continue
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:  # a live build holds it
                os.close(fd)
                continue
            try:
                shutil.rmtree(folder, ignore_errors=True)
                removed.append(folder)
            finally:
                os.close(fd)
    return removed


def _changed_at(folder: Path) -> float:
    """The latest modification time of the folder and of what is in it (a part being written counts); now, for a
    folder that cannot be looked at, so that it is kept."""
    try:
        latest = folder.stat().st_mtime
        with os.scandir(folder) as entries:
            for entry in entries:
                latest = max(latest, entry.stat(follow_symlinks=False).st_mtime)
    except OSError:
        return time.time()
    return latest
