"""Trac 1.6, the issue tracker and wiki, holding the change history of the six Pallets projects.

Data: the ``CHANGES.rst``, ``README.rst`` and PKG-INFO of the pinned source releases of Flask, Click, Jinja,
Werkzeug, MarkupSafe and ItsDangerous on PyPI (:mod:`capreplay.benchmark.sdists`; BSD-3-Clause). Each project
is a component (described by its PKG-INFO ``Summary``), each release a milestone ``<project> <version>``
(completed on its release date) and a version of the same name, each changelog entry a closed ticket reported by
``changelog``: :mod:`.trac_tickets` holds the rules that derive summary, type and dates. The wiki start page
lists the projects, and a wiki page per project shows its README (rendered by Trac's reStructuredText
processor); Trac's default reports, which list open tickets, are replaced by reports over releases and changes
(:mod:`.trac_pages`). Trac's own help pages (TracGuide and the rest) stay, dated like the newest change.
The records are written with SQL into the database ``trac-admin initenv`` made, then tracd serves it.

Determinism: every time Trac stores comes from the data, dates show as ISO 8601 in UTC, and the two templates
that print a milestone's age whatever the settings are patched to print its date (only tooltips still say
"3 years ago"). Offline: Trac calls nothing on its own (no gravatar, no update check, no web fonts); the
version control browser (no repository) and the login link (no accounts) are switched off, notifications
stay off, and the logo is Trac's own banner (the default names a file that does not exist).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import closing, contextmanager
from datetime import datetime
from pathlib import Path

from capreplay.benchmark.application import Application
from capreplay.benchmark.apps.trac_pages import REPORTS, project_page, start_page
from capreplay.benchmark.apps.trac_tickets import REPORTER, TITLES, Content, build_content, noon
from capreplay.benchmark.changelog import parse_changelog
from capreplay.benchmark.sdists import PROJECTS, SDISTS, Sdist, changes_file, ensure_sdists
from capreplay.errors import CapreplayError
from capreplay.testing.apps.env import ensure_env
from capreplay.testing.apps.process import Server, running_server
from capreplay.testing.pywb import _run

VERSION = "1.6"
REQUIREMENTS = [
    f"Trac=={VERSION}",
    "Jinja2==3.1.6",
    "MarkupSafe==3.0.3",
    "Pygments==2.19.2",
    "docutils==0.21.2",
    "setuptools==80.9.0",
]
"""Trac imports ``pkg_resources``, which setuptools 81 and later no longer ship; docutils renders the READMEs."""
HOST = "tracker.bench.test"
_QUIET = {"PYTHONWARNINGS": "ignore"}  # pkg_resources' deprecation warning on every start of trac-admin and tracd

CONFIG = f"""\
[project]
name = Pallets
descr = The change history of the Pallets projects: one ticket per changelog entry
footer = Changes from the Pallets projects' changelogs (BSD-3-Clause)
icon = common/trac.ico

[header_logo]
src = common/trac_banner.png
alt = Trac
link = http://{HOST}/
width = 236
height = 73

[trac]
database = sqlite:db/trac.db
base_url = http://{HOST}/
use_base_url_for_redirect = enabled
default_timezone = UTC
default_date_format = iso8601
default_dateinfo_format = absolute

[components]
trac.versioncontrol.* = disabled
trac.web.auth.loginmodule = disabled

[wiki]
ignore_missing_pages = enabled

[query]
default_anonymous_query = status=closed&order=id&desc=1
default_query = status=closed&order=id&desc=1
items_per_page = 50
ticketlink_query = ?order=id&desc=1

[report]
items_per_page = 50

[milestone]
default_group_by = type

[roadmap]
stats_provider = DefaultTicketGroupStatsProvider

[timeline]
default_daysback = 30
ticket_show_component = enabled

[notification]
smtp_enabled = disabled

[logging]
log_type = file
log_level = WARNING
"""
"""The environment's ``trac.ini`` (given to ``trac-admin initenv --config``)."""

TEMPLATE_PATCHES: dict[str, tuple[str, str]] = {
    "milestone_view.html": (
        '${tag_("Completed %(duration)s ago (%(date)s)",\n                 duration=dateinfo(milestone.completed),',
        '${tag_("Completed %(date)s",',
    ),
    "roadmap.html": ("Completed ${duration} ago (${date})", "Completed ${date}"),
}
"""Trac's two templates that print a milestone's age ("Completed 3 years ago") whatever the date format: the
environment's copies (its ``templates`` folder comes first) print only the date, which does not age."""


def readme(project: str, unpacked: dict[Sdist, Path]) -> str:
    """The ``README.rst`` of the newest unpacked release of ``project`` that ships one (Jinja 3.1.4 has .md)."""
    for sdist in reversed([s for s in SDISTS if s.project == project and s in unpacked]):
        path = unpacked[sdist] / "README.rst"
        if path.is_file():
            return path.read_text()
    raise CapreplayError(f"no release of {project} here ships a README.rst")


def summary_of(project: str, unpacked: dict[Sdist, Path]) -> str:
    """The ``Summary`` line of the newest release's PKG-INFO."""
    newest = [s for s in SDISTS if s.project == project and s in unpacked][-1]
    for line in (unpacked[newest] / "PKG-INFO").read_text().splitlines():
        if line.startswith("Summary:"):
            return line.removeprefix("Summary:").strip()
    raise CapreplayError(f"{newest.filename} has no Summary in its PKG-INFO")


def _micros(when: datetime) -> int:
    return int(when.timestamp()) * 1_000_000


def fill_database(db: Path, content: Content, summaries: dict[str, str], readmes: dict[str, str]) -> None:
    """Write the components, releases, tickets, reports and wiki pages into a new environment's database."""
    wiki_time = _micros(content.tickets[-1].when)  # the newest change: Trac's own pages get no build date
    with closing(sqlite3.connect(db)) as conn, conn:
        for table in ("component", "milestone", "version", "report"):
            conn.execute(f"DELETE FROM {table}")  # Trac's examples: component1, milestone1, ...
        conn.executemany(
            "INSERT INTO component (name, owner, description) VALUES (?, '', ?)", [(p, summaries[p]) for p in PROJECTS]
        )
        for m in content.milestones:
            completed = _micros(noon(m.released)) if m.released else None
            conn.execute(
                "INSERT INTO milestone (name, due, completed, description) VALUES (?, NULL, ?, ?)",
                (m.name, completed, m.description),
            )
            conn.execute("INSERT INTO version (name, time, description) VALUES (?, ?, '')", (m.name, completed))
        conn.executemany(
            "INSERT INTO ticket (id, type, time, changetime, component, severity, priority, owner, reporter, cc,"
            " version, milestone, status, resolution, summary, description, keywords)"
            " VALUES (?, ?, ?, ?, ?, '', 'major', '', ?, '', ?, ?, 'closed', 'fixed', ?, ?, '')",
            [
                (
                    t.id,
                    t.type,
                    _micros(t.when),
                    _micros(t.when),
                    t.component,
                    REPORTER,
                    t.milestone,
                    t.milestone,
                    t.summary,
                    t.description,
                )
                for t in content.tickets
            ],
        )
        conn.executemany(
            "INSERT INTO report (id, author, title, query, description) VALUES (?, ?, ?, ?, ?)",
            [(n, REPORTER, title, query, text) for n, (title, text, query) in enumerate(REPORTS, start=1)],
        )
        conn.execute("DELETE FROM wiki WHERE name = 'WikiStart'")
        conn.execute("UPDATE wiki SET time = ?", (wiki_time,))
        pages = {"WikiStart": start_page(content, summaries)} | {
            TITLES[p]: project_page(p, readmes[p]) for p in PROJECTS
        }
        conn.executemany(
            "INSERT INTO wiki (name, version, time, author, text, comment, readonly) VALUES (?, 1, ?, ?, ?, '', 0)",
            [(name, wiki_time, REPORTER, text) for name, text in sorted(pages.items())],
        )


def patch_templates(bin_dir: Path, env: Path) -> None:
    """Copy the templates of :data:`TEMPLATE_PATCHES` from Trac's package into ``env/templates``, patched."""
    for name, (old, new) in TEMPLATE_PATCHES.items():
        found = sorted(bin_dir.parent.glob(f"lib/python3*/site-packages/trac/ticket/templates/{name}"))
        text = found[0].read_text() if found else ""
        if old not in text:
            raise CapreplayError(f"Trac's {name} no longer reads {old!r}: the patch needs updating")
        (env / "templates" / name).write_text(text.replace(old, new))


def ensure_trac(cache: Path) -> Path:
    """Trac's environment folder, installed under ``cache`` if needed."""
    return ensure_env(cache / "apps" / f"trac-{VERSION}", REQUIREMENTS, check="import trac.env, docutils").bin_dir


@contextmanager
def running_trac(cache: Path, work: Path) -> Iterator[Server]:
    """A new Trac environment filled with the Pallets changelogs, served by tracd on 127.0.0.1."""
    bin_dir = ensure_trac(cache)
    unpacked = ensure_sdists(cache)
    content = build_content({p: parse_changelog(changes_file(p, unpacked).read_text()) for p in PROJECTS})
    work.mkdir(parents=True, exist_ok=True)
    config, env = work / "trac-config.ini", work / "pallets"
    config.write_text(CONFIG)
    _run(
        [str(bin_dir / "trac-admin"), str(env), "initenv", f"--config={config}"],
        timeout=120,
        what="creating the Trac environment",
    )
    patch_templates(bin_dir, env)
    fill_database(
        env / "db" / "trac.db",
        content,
        {p: summary_of(p, unpacked) for p in PROJECTS},
        {p: readme(p, unpacked) for p in PROJECTS},
    )

    def command(port: int) -> list[str]:
        return [str(bin_dir / "tracd"), "--single-env", "--hostname=127.0.0.1", f"--port={port}", str(env)]

    with running_server(command, ready_path="/", log=work / "tracd.log", cwd=work, env=_QUIET) as server:
        yield server


APP = Application(
    name="tracker",
    title="Trac",
    kind="tracker",
    version=VERSION,
    source=f"PyPI Trac=={VERSION} (SQLite, served by tracd)",
    licence="BSD-3-Clause",
    data=(
        "The changelogs (CHANGES.rst) and READMEs of the PyPI source releases flask 3.0.0, click 8.1.7, "
        "Jinja2 3.1.2/3.1.4, werkzeug 3.0.1, MarkupSafe 2.1.3 and itsdangerous 2.1.2: 268 releases as "
        "milestones, 2,156 changes as tickets"
    ),
    start=running_trac,
)
