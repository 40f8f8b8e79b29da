"""What every adapter process does first: keep stdout for protocol lines, and keep the files it writes in one
temporary folder.

Nothing here imports an adapter's framework: both must be in place before it is imported.
"""

import os
import sys
import tempfile
from collections.abc import Callable, Coroutine, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any, TextIO


def protocol_stream() -> TextIO:
    """The stream protocol lines go to: file descriptor 1 is kept for it and pointed at stderr, so a stray
    ``print`` (browser-use prints on pause and resume) or a child process's output cannot corrupt it."""
    out = os.fdopen(os.dup(1), "w", encoding="utf-8", newline="\n")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return out


@contextmanager
def scratch_folder(prefix: str) -> Iterator[str]:
    """One temporary folder for everything the process writes through ``tempfile``, removed at exit.

    Frameworks make temporary folders of their own and do not always remove them (browser-use never does;
    Stagehand's per-launch Chromium profile stays behind when the browser dies first).
    """
    with tempfile.TemporaryDirectory(prefix=prefix) as scratch:
        tempfile.tempdir = scratch
        try:
            yield scratch
        finally:
            tempfile.tempdir = None


def run_adapter(prefix: str, serve: Callable[[TextIO], Coroutine[Any, Any, None]],
                scratch: Callable[[str], AbstractContextManager[str]] = scratch_folder) -> None:  # fmt: skip
    """An adapter's ``main``: the protocol stream set aside, logging to stderr (``$CAPREPLAY_ADAPTER_LOG_LEVEL``,
    default WARNING), then ``serve(stream)`` inside ``scratch(prefix)``. ``serve`` imports the framework itself,
    so nothing of it is imported before the streams and the scratch folder are in place."""
    out = protocol_stream()
    log_to_stderr()

    import asyncio

    with scratch(prefix):
        asyncio.run(serve(out))


def log_to_stderr() -> None:
    """Log lines go to stderr, at ``$CAPREPLAY_ADAPTER_LOG_LEVEL`` (default WARNING)."""
    import logging

    logging.basicConfig(
        stream=sys.stderr,
        level=os.environ.get("CAPREPLAY_ADAPTER_LOG_LEVEL", "WARNING").upper(),
        format="%(levelname)s %(name)s: %(message)s",
    )
