"""Files written so that a reader never sees half of one, and JSON files read into a model with one-line errors."""

from __future__ import annotations

import contextlib
import fcntl
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from pydantic import BaseModel, ValidationError

from capreplay.errors import InputError, OutputError, UsageError, os_reason, validation_reason


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
        raise OutputError(f"cannot write: {os_reason(e)}", where=path) from e


@contextlib.contextmanager
def locked(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on the file ``path`` (made if missing) for the block: one process at a time, on
    this machine, gets past it; the lock goes with the process if it dies."""
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def read_model[M: BaseModel](path: Path, model: type[M], *, invalid: str, missing: str = "no such file") -> M:
    """``path`` read as JSON into ``model``; a missing, unreadable or invalid file is one ``InputError`` line.

    ``invalid`` starts the message when the file does not fit the model (``invalid task_index.json``, then
    the field and the problem); ``missing`` is said when there is no such file, for the caller to say what
    the folder is not.
    """
    try:
        data = path.read_bytes()
    except FileNotFoundError as e:
        raise InputError(missing, path) from e
    except OSError as e:
        raise InputError(f"cannot read: {os_reason(e)}", path) from e
    try:
        return model.model_validate_json(data)
    except ValidationError as e:
        raise InputError(f"{invalid}: {validation_reason(e)}", path) from e


def refuse_unmakeable_folder(folder: Path) -> None:
    """An ``InputError`` if ``folder`` cannot be made: a file stands there or at one of its parents.

    Checked before anything is written, so a mistyped output path costs nothing.
    """
    if folder.exists() and not folder.is_dir():
        raise InputError("cannot be created: a file of that name exists", folder)
    ancestor = next(p for p in folder.absolute().parents if p.exists())
    if not ancestor.is_dir():
        raise InputError(f"cannot be created: {ancestor} is a file, not a folder", folder)


@contextlib.contextmanager
def atomic_output(out: Path, *, force: bool, what: str) -> Iterator[BinaryIO]:
    """A temporary file next to ``out`` that becomes ``out`` only if the block finishes; never half a file.

    ``what`` names the file in messages ("WACZ": "cannot write the WACZ: ..."). It is made readable by all, as
    an export is for sharing.

    Without ``force`` the file is published with a hard link, which fails rather than replace a file
    that appeared meanwhile; the temporary file is removed whatever happens, even on Ctrl-C.
    """
    try:
        fd, name = tempfile.mkstemp(dir=out.parent, prefix=f".{out.name}.", suffix=".tmp")
    except OSError as e:
        raise UsageError(f"cannot write in {out.parent}: {os_reason(e)}", where=out) from e
    tmp = Path(name)
    try:
        try:
            with os.fdopen(fd, "w+b") as stream:
                yield stream
                os.fchmod(stream.fileno(), 0o644)  # mkstemp makes it private; an export is for sharing
                stream.flush()
                os.fsync(stream.fileno())
        except OSError as e:
            raise OutputError(f"cannot write the {what}: {os_reason(e)}", where=out) from e
        _publish(tmp, out, force=force, what=what)
    finally:
        tmp.unlink(missing_ok=True)


def _publish(tmp: Path, out: Path, *, force: bool, what: str) -> None:
    try:
        if force:
            os.replace(tmp, out)
        else:
            try:
                os.link(tmp, out)
            except FileExistsError:
                raise
            except OSError:
                # a file system without hard links: check, then rename (a race remains, a small one)
                if out.exists():
                    raise FileExistsError(out) from None
                os.replace(tmp, out)
        dir_fd = os.open(out.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)  # the new name lives in the folder; sync it, or a crash may forget it
        finally:
            os.close(dir_fd)
    except FileExistsError as e:
        raise UsageError("already exists (it appeared during the export); pass --force to replace it", where=out) from e
    except OSError as e:
        raise OutputError(f"cannot write the {what}: {os_reason(e)}", where=out) from e
