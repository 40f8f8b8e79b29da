"""The one exception tree of capreplay.

    CapreplayError                  every error capreplay raises on purpose
    ├── InputError                  the user's input is wrong; the CLI prints one line, exit status 2
    │   ├── SnapshotError           a folder is not a snapshot, or its files do not match its manifest
    │   ├── ArchiveError            a WARC/WACZ file cannot be read or is malformed
    │   ├── PlanError               a capture plan is invalid
    │   └── UsageError              bad command-line arguments
    ├── CaptureError                recording failed (proxy died, a page could not be captured); exit 1
    ├── OutputError                 a file could not be written (import, export, reports, run logs); exit 1
    ├── ReplayError                 the replay server could not start or serve
    ├── BrowserError                no Chromium found, or it could not be launched
    └── ModelError                  a model API call failed (timeout, rate limit, error status, connection)

Each error carries the file or thing it is about in ``where`` so the command line can name it;
:func:`os_reason` and :func:`validation_reason` turn the errors of the standard library and of pydantic
into the words of that one line.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import ValidationError


class CapreplayError(Exception):
    """Base of every error capreplay raises on purpose."""

    exit_code = 1

    def __init__(self, message: str, where: str | Path | None = None) -> None:
        self.message = message
        self.where = str(where) if where is not None else None
        super().__init__(self.line())

    def line(self) -> str:
        """The one line the command line prints: ``where: message``."""
        return f"{self.where}: {self.message}" if self.where else self.message


class InputError(CapreplayError):
    """The user's input is wrong. Reported in one line with exit status 2; nothing is written."""

    exit_code = 2


class SnapshotError(InputError):
    """A folder is not a snapshot, or a file differs from the manifest (changed, missing, extra)."""


class ArchiveError(InputError):
    """A WARC or WACZ file cannot be read: truncated, corrupt, or not an archive at all."""


class PlanError(InputError):
    """A capture plan is not valid JSON or does not follow the plan model."""


class UsageError(InputError):
    """Command-line arguments that cannot be acted on."""


class CaptureError(CapreplayError):
    """Recording failed. A capture never lets traffic go by unrecorded, so this is fatal."""


class OutputError(CapreplayError):
    """A file could not be written (disk full, no permission): whatever stood there before is left as it was."""


class ReplayError(CapreplayError):
    """The replay server could not start or could not serve the snapshot."""


class BrowserError(CapreplayError):
    """No usable Chromium was found, or it failed to launch."""


class ClusterError(CapreplayError):
    """The Ray that ``--backend ray`` starts for a run of its own did not come up."""


ModelErrorKind = Literal["timeout", "rate_limit", "api_status", "connection", "bad_response"]
"""Why a model call failed; a run counts each kind apart from wrong answers."""


class ModelError(CapreplayError):
    """A model API call failed. Calls are never retried, so a run records this once per failed call.

    ``kind`` says why: ``timeout`` (no answer within the settings' timeout), ``rate_limit`` (status 429),
    ``api_status`` (any other error status, in ``status``), ``connection`` (the endpoint could not be
    reached) or ``bad_response`` (an answer that is not the API's response shape). ``request_id`` is the
    provider's id of the failed request when it sent one.
    """

    def __init__(
        self,
        message: str,
        kind: ModelErrorKind,
        *,
        where: str | None = None,
        status: int | None = None,
        request_id: str | None = None,
    ) -> None:
        self.kind: ModelErrorKind = kind
        self.status = status
        self.request_id = request_id
        super().__init__(f"{kind}: {message}", where)


def os_reason(e: OSError) -> str:
    """Why an operating-system call failed, in words (``No such file or directory``), never a traceback."""
    return e.strerror or str(e)


def validation_reason(e: ValidationError, top: str = "(top level)") -> str:
    """pydantic's first problem as ``field.path: message`` (``top`` names the whole value), and how many more."""
    first = e.errors()[0]
    field = ".".join(str(part) for part in first["loc"]) or top
    others = e.error_count() - 1
    more = f" (and {others} more problem{'s' if others > 1 else ''})" if others else ""
    return f"{field}: {first['msg']}{more}" if field else f"{first['msg']}{more}"
