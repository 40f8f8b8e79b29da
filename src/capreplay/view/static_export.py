"""``capreplay view --export DIR``: the viewer's site written as static files that open from disk.

Every path of the site becomes a file under DIR, with the same bytes the server sends, so the pages' relative
links work from ``file://``. The files are written into a fresh folder beside DIR and renamed into place at
the end: an export that fails half way leaves DIR as it was. DIR must be new or empty.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from capreplay.errors import CapreplayError, InputError, OutputError, os_reason
from capreplay.util.files import refuse_unmakeable_folder
from capreplay.view.site import Site


def export_site(site: Site, out: Path) -> int:
    """Write every path of ``site`` under ``out``; returns how many files were written."""
    refuse_unmakeable_folder(out)
    if out.is_dir() and any(out.iterdir()):
        raise InputError("is not empty: give a new or empty folder to export into", out)
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        count = 0
        for path in site.paths():
            entry = site.get(path)
            assert entry is not None
            target = staging / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(entry.body())
            count += 1
        if out.exists():
            out.rmdir()
        staging.rename(out)
    except OSError as e:
        shutil.rmtree(staging, ignore_errors=True)
        raise OutputError(f"cannot export: {os_reason(e)}", out) from e
    except CapreplayError:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return count
