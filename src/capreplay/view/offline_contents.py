"""The offline study's results in the viewer: a folder holding ``selftest.json`` (every self-test check with its
verdict, as ``capreplay study selftest --json`` and the offline script write it) and the Markdown tables written
beside it (``tokens.md``, ``coverage.md``, ``timings.md``).
(read through :mod:`capreplay.view.selftest_file`).
"""

from __future__ import annotations

from pathlib import Path

from capreplay.errors import InputError, os_reason
from capreplay.util.files import read_model
from capreplay.view.contents import Contents, Listed, safe
from capreplay.view.html import badge, shown_path
from capreplay.view.offline_page import OfflineView, render_offline
from capreplay.view.selftest_file import SelftestFile

OFFLINE_MARKER = "selftest.json"
"""A folder holding this file holds the offline study's results (``capreplay study selftest``)."""
TABLES = ("tokens.md", "coverage.md", "timings.md")
"""The Markdown files shown below the self-test, in this order, when the folder has them."""


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        reason = os_reason(e) if isinstance(e, OSError) else "not UTF-8 text"
        raise InputError(f"cannot read: {reason}", path) from e


def offline_status(selftest: SelftestFile) -> str:
    """The self-test's outcome as badges: every check as expected, or how many were not; pages it could not check."""
    failed = sum(not c.passed for c in selftest.checks)
    parts = [badge(f"{failed} of {len(selftest.checks)} checks failed", "bad") if failed
             else badge(f"all {len(selftest.checks)} checks as expected", "ok")]  # fmt: skip
    if selftest.page_failures:
        lost = len(selftest.page_failures)
        parts.append(badge(f"{lost} page{'s' if lost > 1 else ''} not checked", "bad"))
    if selftest.failures is not None and selftest.failures != failed:
        parts.append(badge(f"the file counts {selftest.failures} failures", "warn"))
    return " ".join(parts)


def add_offline_study(contents: Contents, folder: Path) -> None:
    """The offline study's results page."""
    selftest = read_model(folder / OFFLINE_MARKER, SelftestFile, invalid=f"not a self-test's {OFFLINE_MARKER}")
    tables = {name: _read_text(folder / name) for name in TABLES if (folder / name).is_file()}
    base = f"offline/{safe(folder.name)}"
    for n in range(2, 1000):  # two folders of one name (results/a/study-offline, results/b/study-offline)
        if f"{base}/index.html" not in contents.site:
            break
        base = f"offline/{safe(folder.name)}-{n}"
    view = OfflineView(path=f"{base}/index.html", folder=shown_path(folder), selftest=selftest, tables=tables,
                       status=offline_status(selftest))  # fmt: skip
    contents.site.page(view.path, lambda: render_offline(view))
    pages = len({c.page for c in selftest.checks})
    contents.listed.append(Listed("Offline studies", shown_path(folder), view.path, [str(pages), view.status]))
