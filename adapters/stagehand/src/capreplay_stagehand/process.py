"""What the adapter process does first: keep stdout for protocol lines, and keep Stagehand's files in one
temporary folder.

Nothing here imports Stagehand: both must be in place before it is imported.
"""

import os
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO


def protocol_stream() -> TextIO:
    """The stream protocol lines go to: file descriptor 1 is kept for it and pointed at stderr, so a stray
    ``print`` or a child process's output cannot corrupt it (Stagehand writes its own log lines to stderr)."""
    out = os.fdopen(os.dup(1), "w", encoding="utf-8", newline="\n")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return out


@contextmanager
def scratch_folder(prefix: str) -> Iterator[str]:
    """One temporary folder for everything the adapter and Stagehand write, removed at exit.

    Stagehand makes a throw-away Chromium profile per launch with ``tempfile.mkdtemp``; a browser that dies
    before Stagehand removes it would otherwise leave it behind.
    """
    with tempfile.TemporaryDirectory(prefix=prefix) as scratch:
        tempfile.tempdir = scratch
        try:
            yield scratch
        finally:
            tempfile.tempdir = None
