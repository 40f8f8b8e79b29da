"""The ready responses a running server sends from: opened at once when whole, else built in the background.

Building them for a large snapshot takes seconds (every record read once); a server must not keep its
first request waiting that long. So a server starts with the general path answering everything, and a
background thread (whose work runs in worker processes, see :mod:`capreplay.replay.ready.builder`) builds
the ready file and then puts it in the slot; from the next request on, plain GETs are sent ready-made.
Small snapshots are built in place before the server starts, which is quicker than a thread's hand-over.
"""

from __future__ import annotations

import logging
import threading

from capreplay.replay.ready.builder import PARALLEL_BYTES, open_ready
from capreplay.replay.ready.responses import ReadyResponses, check_folder, ready_folder
from capreplay.replay.store import INDEX_FILE, SnapshotStore

log = logging.getLogger("capreplay.replay")


class ReadySlot:
    """Holds the ready responses of one server: ``current`` is None until they are there (or for good)."""

    def __init__(self) -> None:
        self.current: ReadyResponses | None = None
        self.done = threading.Event()
        """Set once the ready responses are open, or known not to be coming."""
        self._lock = threading.Lock()
        self._closed = False

    def start(self, store: SnapshotStore, *, background: bool | None = None) -> None:
        """Open ``store``'s ready responses, building them when missing or stale: in a background thread for
        an index over :data:`PARALLEL_BYTES` (``background`` None), else now."""
        index = next((f for f in store.manifest.files if f.path == INDEX_FILE), None)
        if index is None:  # an interrupted capture: its index is built in memory, nothing to derive from
            self.done.set()
            return
        whole = check_folder(ready_folder(store.snapshot_id, index.sha256), store.snapshot_id, index.sha256)
        if background is None:
            background = whole is None and index.size >= PARALLEL_BYTES
        if not background:
            self._open(store, index.sha256)
            return
        threading.Thread(target=self._open, args=(store, index.sha256), name="ready-build", daemon=True).start()

    def _open(self, store: SnapshotStore, index_sha256: str) -> None:
        try:
            opened = open_ready(store.root, store.snapshot_id, index_sha256)
        except Exception:  # the general path answers everything: a failed build costs speed, not answers
            log.exception("could not build the ready responses of %s", store.root)
            opened = None
        with self._lock:
            if self._closed and opened is not None:
                opened.close()
            else:
                self.current = opened
        self.done.set()

    def wait(self, timeout: float | None = None) -> ReadyResponses | None:
        """The ready responses once opened or built (None if there are none), waiting up to ``timeout``."""
        self.done.wait(timeout)
        return self.current

    def close(self) -> None:
        """Close the ready responses; a build still running closes its result when it ends."""
        with self._lock:
            self._closed = True
            if self.current is not None:
                self.current.close()
                self.current = None
