"""The ready responses built with the index: each response record read once for both.

Where an index is written (a capture's last step, a generated snapshot), its ready responses are made in
the same pass (:func:`capreplay.archive.index.one_pass.build_index_text`): every worker writes the ready
bytes of each response of its files into a part file of its own while it collects their index fields, and
the parent keeps those the matcher would pick (:func:`chosen_slots`, the rule of
:mod:`capreplay.replay.ready.builder`). Their folder's name needs the snapshot's id, which the manifest gives
once the index is written, so the parts wait in a work folder next to the cache's ready folders until
:meth:`IndexWithReady.place` renames them into place. A server then finds them whole, and one stopped
early no longer loses a build running in its background. What cannot be written to the cache is left to
the server, which builds it from the index as before (:func:`capreplay.replay.ready.builder.open_ready`).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import BinaryIO

from capreplay.archive.index.one_pass import BuiltIndex, Line, build_index_text, paused_gc
from capreplay.archive.warc.stored import PARSE_ERRORS, StoredRecord, stored_record
from capreplay.replay.ready.builder import Slot, _chosen, finish_folder, write_ready
from capreplay.replay.ready.responses import ReadyStamps, part_name, ready_folder
from capreplay.replay.ready.work_folders import WorkFolder
from capreplay.util.cache_folder import cache_dir


class PartWriter:
    """The :class:`~capreplay.archive.index.one_pass.ResponseSink` of one job: writes its part file."""

    def __init__(self, path: Path, number: int) -> None:
        self._file: BinaryIO | None
        try:
            # a large buffer: most responses are a few kilobytes, each written as two pieces
            self._file = open(path, "wb", buffering=1 << 20)  # noqa: SIM115  # closed by close(), when the job ends
        except OSError:
            self._file = None  # no ready responses this time: the index is built all the same
        self._number = number
        self._offset = 0

    def add(self, url: str, record: StoredRecord | None, headers: list[tuple[str, str]], block: bytes) -> Slot | None:
        """Write the ready response of this response record, if it gets one; return its slot."""
        if self._file is None:
            return None
        if record is None:
            try:
                # the record's id and date play no part in what is sent
                record = stored_record(
                    rec_type="response",
                    record_id="",
                    url=url,
                    date="",
                    warc_headers=headers,
                    offset=0,
                    length=0,
                    block=block,
                    digests="skip",
                )
            except PARSE_ERRORS:
                return None  # the general path answers it (with its 502), as when built from the index
        try:
            slot = write_ready(self._file, self._offset, self._number, url, record)
        except OSError:  # a full disk, say: give the ready responses up, not the index
            with contextlib.suppress(OSError):
                self._file.close()
            self._file = None
            return None
        if slot is not None:
            self._offset += slot[2]
        return slot

    def close(self) -> bool:
        """Flush and close the part file; False when a write failed (the part is then of no use)."""
        if self._file is None:
            return False
        try:
            self._file.close()
        except OSError:
            return False
        return True


@dataclass(frozen=True)
class ReadyParts:
    """Makes each job's :class:`PartWriter` in ``work``; pickled to the worker processes."""

    work: Path

    def __call__(self, number: int) -> PartWriter:
        return PartWriter(self.work / part_name(number), number)


def chosen_slots(lines: list[Line]) -> list[Slot]:
    """The slots of the responses that get a ready response, from the index's lines in order: a key's one
    recording when it is a plain ``GET``, else the matcher's choice among the key's lines (:func:`_chosen`)."""
    slots: list[Slot] = []
    start, count = 0, len(lines)
    while start < count:
        end = start + 1
        while end < count and lines[end].urlkey == lines[start].urlkey:
            end += 1
        if end == start + 1:
            line = lines[start]
            if line.simple_get and line.made is not None:
                slots.append(line.made)  # type: ignore[arg-type]  # what PartWriter.add made
        else:
            group = lines[start:end]
            for _, at, _ in _chosen([(n, line.text.encode()) for n, line in enumerate(group)]):
                if group[at].made is not None:
                    slots.append(group[at].made)  # type: ignore[arg-type]
        start = end
    return slots


class IndexWithReady:
    """A snapshot's index and its ready responses' parts, waiting for the snapshot's id to be placed.

    Use as a context manager: parts not placed by the end are removed.
    """

    def __init__(self, root: Path, archive_files: list[str], *, workers: int | None = None) -> None:
        """Index ``archive_files`` of the snapshot ``root``, writing the ready responses' parts on the way (or
        only the index, when the cache folder cannot be written)."""
        self._work: WorkFolder | None
        try:
            self._work = WorkFolder(cache_dir() / "ready")
        except OSError:
            self._work = None
        try:
            sink = ReadyParts(self._work.path) if self._work is not None else None
            self.index: BuiltIndex = build_index_text(root, archive_files, workers=workers, sink=sink)
        except BaseException:
            self.discard()
            raise

    def place(self, snapshot_id: str, index_sha256: str) -> ReadyStamps | None:
        """Put the ready responses where a server of snapshot ``snapshot_id`` looks for them; None when they
        could not be (the server then builds them from the index)."""
        work, self._work = self._work, None
        if work is None:
            return None
        try:
            if not self.index.sinks_whole:
                return None
            with paused_gc():  # (100,000s of slots, no cycles: see paused_gc)
                slots = chosen_slots(self.index.lines)
                return finish_folder(
                    work.path,
                    slots,
                    self.index.jobs,
                    ready_folder(snapshot_id, index_sha256),
                    snapshot_id,
                    index_sha256,
                )
        except OSError:
            return None
        finally:
            work.close()

    def discard(self) -> None:
        """Remove the parts, if not placed."""
        work, self._work = self._work, None
        if work is not None:
            work.close()

    def __enter__(self) -> IndexWithReady:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        self.discard()
