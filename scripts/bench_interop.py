"""The real captures in ``../shared/interop/`` for the benchmarks: which files, what each holds, its import.

What a file holds is read with warcio alone, never with capreplay's reader, so the benchmarks measure
capreplay against the file and not against itself. A file's main page is its first HTML response in
record order (``warcio index`` order; a WACZ's WARCs in name order), as the folder's README defines it.
"""

from __future__ import annotations

import io
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from warcio.archiveiterator import ArchiveIterator
from warcio.timeutils import iso_date_to_timestamp

ROOT = Path(__file__).resolve().parents[1]
INTEROP = ROOT.parent / "shared" / "interop"
IMPORT_TIMEOUT = 300.0
_SUFFIXES = (".warc", ".warc.gz", ".wacz")


def interop_files(folder: Path = INTEROP) -> list[Path]:
    """Every WARC and WACZ under ``folder``, sorted by path."""
    return sorted(p for p in folder.rglob("*") if p.is_file() and p.name.endswith(_SUFFIXES))


def short_name(path: Path, folder: Path = INTEROP) -> str:
    """The file's path under the interop folder, as its README names it."""
    return str(path.relative_to(folder))


@dataclass
class Held:
    """What one file holds, read with warcio."""

    main_page: str | None
    """The first HTML response's URL (any status: a redirect is followed by the browser)."""
    main_timestamp: str | None
    """Its WARC-Date as 14 digits, the time a replayer should prefer."""
    urls: list[str] = field(default_factory=list)
    """Every response, revisit and resource record's target URL, in record order, without repeats."""


def _streams(path: Path) -> Iterator[IO[bytes]]:
    if path.suffix == ".wacz":
        with zipfile.ZipFile(path) as wacz:
            for name in sorted(wacz.namelist()):
                if name.startswith("archive/") and ".warc" in name:
                    yield io.BytesIO(wacz.read(name))
    else:
        with open(path, "rb") as stream:
            yield stream


def read_held(path: Path) -> Held:
    """The main page and every archived URL of a WARC or WACZ."""
    held = Held(None, None)
    seen: set[str] = set()
    for stream in _streams(path):
        for record in ArchiveIterator(stream):
            if record.rec_type not in ("response", "revisit", "resource"):
                continue
            url = record.rec_headers.get_header("WARC-Target-URI") or ""
            if url and url not in seen:
                seen.add(url)
                held.urls.append(url)
            headers = record.http_headers
            kind = (headers.get_header("Content-Type") or "") if headers is not None else ""
            if held.main_page is None and record.rec_type == "response" and "html" in kind.lower():
                held.main_page = url
                held.main_timestamp = iso_date_to_timestamp(record.rec_headers.get_header("WARC-Date"))
    return held


@dataclass(frozen=True)
class Imported:
    """How ``capreplay import`` ended for one file."""

    ok: bool
    snapshot: Path
    message: str
    """The command's stdout line on success, its stderr otherwise."""


def import_file(path: Path, out: Path, extra: list[str] | None = None) -> Imported:
    """``capreplay import FILE -o OUT`` in a subprocess, bounded by ``IMPORT_TIMEOUT``."""
    cmd = [sys.executable, "-m", "capreplay", "import", str(path), "-o", str(out), *(extra or [])]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=IMPORT_TIMEOUT, check=False)
    except subprocess.TimeoutExpired:
        return Imported(False, out, f"import did not finish within {IMPORT_TIMEOUT:.0f} s")
    if done.returncode != 0:
        lines = (done.stderr.strip() or done.stdout.strip()).splitlines()
        return Imported(False, out, lines[-1] if lines else f"exit status {done.returncode}")
    return Imported(True, out, done.stdout.strip())


def code_version() -> dict[str, object]:
    """The commit measured, and the source files that differed from it while the benchmark ran."""
    def git(*args: str) -> str:
        done = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=30, check=False)
        return done.stdout.rstrip("\n")  # not strip(): a porcelain line starts with its status column, maybe a space

    changed = [line[3:] for line in git("status", "--porcelain", "--", "src").splitlines()]
    return {"commit": git("rev-parse", "HEAD"), "uncommitted_src_files": changed}

