"""Documentation: the manuals of Flask, Jinja, Werkzeug and Click as Debian builds them with Sphinx.

Debian's ``python-*-doc`` packages hold each project's Sphinx HTML (the Pallets theme, its sidebar, the
client-side search over ``searchindex.js``, the API reference, the changelog) for the versions Debian 12 ships:
Flask 2.2.2, Jinja 3.1.2, Werkzeug 2.2.2, Click 8.1.3. They are served as the packages installed them, one
manual per folder (``/flask/``, ``/jinja/``, ``/werkzeug/``, ``/click/``), by Python's own static file server,
with a front page that lists them. The packages' links to the projects' web sites stay as they are: they
lead outside the benchmark, and a replay refuses them.

Nothing calls out: the manuals load only their own files (jQuery and underscore are Debian's, linked into
``_static``).
"""

from __future__ import annotations

import html
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from capreplay.benchmark.application import Application
from capreplay.benchmark.debian import ensure_debian
from capreplay.testing.apps.process import Server, running_static

MANUALS: dict[str, tuple[str, str, str]] = {
    "flask": ("Flask", "python-flask-doc", "2.2.2-3"),
    "jinja": ("Jinja", "python-jinja2-doc", "3.1.2-1+deb12u3"),
    "werkzeug": ("Werkzeug", "python-werkzeug-doc", "2.2.2-3+deb12u1"),
    "click": ("Click", "python-click-doc", "8.1.3-2"),
}
"""Folder -> (project, Debian package, pinned version)."""


def front_page(manuals: dict[str, tuple[str, str, str]]) -> str:
    """The site's front page: one link per manual, with the version its package documents."""
    items = "\n".join(
        f'    <li><a href="/{folder}/index.html">{html.escape(title)}</a> {html.escape(version.split("-")[0])}'
        f" <small>(Debian package {html.escape(package)} {html.escape(version)})</small></li>"
        for folder, (title, package, version) in manuals.items()
    )
    return (
        '<!doctype html>\n<html lang="en">\n<head><meta charset="utf-8"><title>Pallets documentation</title></head>\n'
        f"<body>\n  <h1>Pallets documentation</h1>\n  <ul>\n{items}\n  </ul>\n</body>\n</html>\n"
    )


@contextmanager
def running_docs(cache: Path, work: Path) -> Iterator[Server]:
    """The four manuals under one static server on 127.0.0.1 until the block ends (``cache`` is unused: apt
    keeps what it installed)."""
    ensure_debian({package: version for _, package, version in MANUALS.values()})
    site = work / "site"
    site.mkdir(parents=True, exist_ok=True)
    for folder, (_, package, _) in MANUALS.items():
        link = site / folder
        if not link.exists():
            link.symlink_to(Path("/usr/share/doc") / package / "html", target_is_directory=True)
    (site / "index.html").write_text(front_page(MANUALS), encoding="utf-8")

    with running_static(site, log=work / "docs.log") as server:
        yield server


APP = Application(
    name="docs",
    title="Sphinx",
    kind="docs",
    version="5.3.0",
    source="Debian 12 " + ", ".join(f"{package} {version}" for _, package, version in MANUALS.values()),
    licence="BSD-3-Clause",
    data="the manuals of Flask 2.2.2, Jinja 3.1.2, Werkzeug 2.2.2 and Click 8.1.3 (their reStructuredText built to "
    "HTML by Debian with Sphinx 5.3.0)",
    start=running_docs,
    static=True,  # one search.html for every query: its script reads the query
)
