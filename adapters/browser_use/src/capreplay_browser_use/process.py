"""What every adapter process does first: keep stdout for protocol lines, and keep browser-use's files in one
temporary folder.

Nothing here imports browser-use: both must be in place before it is imported.
"""

import os
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO


def protocol_stream() -> TextIO:
    """The stream protocol lines go to: file descriptor 1 is kept for it and pointed at stderr, so a stray
    ``print`` (browser-use prints on pause and resume) or a child process's output cannot corrupt it."""
    out = os.fdopen(os.dup(1), "w", encoding="utf-8", newline="\n")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return out


@contextmanager
def scratch_folder(prefix: str) -> Iterator[str]:
    """One temporary folder for everything browser-use writes, removed at exit.

    browser-use makes temporary folders of its own (downloads, profile, the agent's files and screenshots; one
    already on import) and never removes them. Its config folder too, forced rather than defaulted: browser-use
    reads settings (even a default model) from there, and a user's would change the adapter's behaviour. Costs
    would need browser-use's price list, fetched from the network; capreplay counts tokens itself.
    """
    with tempfile.TemporaryDirectory(prefix=prefix) as scratch:
        tempfile.tempdir = scratch
        os.environ["BROWSER_USE_CONFIG_DIR"] = os.path.join(scratch, "config")
        os.environ["BROWSER_USE_CALCULATE_COST"] = "false"
        try:
            yield scratch
        finally:
            tempfile.tempdir = None
