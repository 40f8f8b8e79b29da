"""SB Admin 2, a Bootstrap admin dashboard, showing the release history of the Pallets projects.

The application is Start Bootstrap's SB Admin 2 4.1.4 (npm ``startbootstrap-sb-admin-2``, MIT): static pages
with Bootstrap 4.6, Chart.js 2.9 charts and a DataTables 1.10 table, all shipped in the package's ``vendor/``.
Its HTML, CSS and scripts are served as shipped; only its demo figures are replaced, at build time, by figures
counted from the ``CHANGES.rst`` of the Pallets projects' source releases on PyPI (Flask 3.0.0, Click 8.1.7,
Jinja2 3.1.2, Werkzeug 3.0.1, MarkupSafe 2.1.3, ItsDangerous 2.1.2; BSD-3-Clause; see
:mod:`capreplay.benchmark.sdists`): every dated release with its date, codename and changes.

- ``index.html``: cards (releases, changes, share of releases with a codename, latest release), releases per
  year (area chart), changes by project (donut with its legend), share of fixes per project (progress bars);
- ``charts.html``: releases per year, changes per Flask 2.x release (bars), changes by project, and under them
  every release on one timeline, its legend filtering the projects, zoomed and panned with npm
  ``chartjs-plugin-zoom`` 0.7.7 and ``hammerjs`` 2.0.8 (MIT) served from ``vendor/``
  (:mod:`~capreplay.benchmark.apps.sbadmin_timeline`);
- ``tables.html``: every release (project, version, date, codename, changes, issues and pull requests named)
  in DataTables, which searches, sorts (versions as numbers) and pages it in the browser;
- ``cards.html``: other totals on the same cards; every page's topbar: the newest releases (alerts) and their
  first changes (messages);
- ``calendar.html``: every release on a calendar, npm ``fullcalendar`` 6.1.22 (MIT) served from ``vendor/``, with
  year, month, week and list views, a day's releases listed by clicking it, and a Bootstrap popover for each
  release (:mod:`~capreplay.benchmark.apps.sbadmin_calendar`); every page's sidebar links to it.
The other shipped pages (buttons, utilities, login, register, forgot password, 404, blank) are the theme's own
and stay as shipped, but for the shared topbar and footer. The figures are in ``js/demo/pallets-data.js`` and
the pages, written by pure functions (:mod:`~capreplay.benchmark.apps.sbadmin_figures`,
:mod:`~capreplay.benchmark.apps.sbadmin_pages`) from the data alone, so two builds give the same bytes.

Switched off to stay offline: the Google Fonts stylesheet is replaced by Nunito from npm
``@fontsource/nunito`` 5.3.0 (OFL-1.1) served from ``fonts/nunito/``, and the one avatar loaded from
source.unsplash.com by the package's own ``img/undraw_profile.svg``. Links out of the site (Start Bootstrap,
unDraw, Chart.js and DataTables documentation) stay as links; nothing loads from them. The pages are served by
Python's ``http.server`` from the work folder.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from capreplay.benchmark.application import Application
from capreplay.benchmark.apps import sbadmin_calendar as calendar, sbadmin_pages as pages, sbadmin_timeline as timeline
from capreplay.benchmark.apps.sbadmin_figures import (
    DISPLAY_NAMES,
    Row,
    changes_by_project,
    changes_per_release,
    fix_share,
    newest_first,
    release_timeline,
    releases_per_year,
    rows_of,
    summary,
)
from capreplay.benchmark.changelog import parse_changelog
from capreplay.benchmark.sdists import PROJECTS, changes_file, ensure_sdists
from capreplay.testing.apps.npm_cdn import unpack_npm
from capreplay.testing.apps.process import Server, running_static
from capreplay.util.files import locked

SB_ADMIN = "startbootstrap-sb-admin-2@4.1.4"
NUNITO = "@fontsource/nunito@5.3.0"
FLASK_MAJOR = "2"
"""The bar chart's Flask releases: those of this major version."""
DASHBOARD_PAGES = ("index.html", "charts.html", "tables.html", "cards.html", "buttons.html", "utilities-color.html",
                   "utilities-border.html", "utilities-animation.html", "utilities-other.html", "404.html",
                   "blank.html")  # fmt: skip
"""Pages with the sidebar and topbar."""
FORM_PAGES = ("login.html", "register.html", "forgot-password.html")
"""Pages with neither: only their font link changes."""
SHIPPED = ("vendor", "css", "img")
"""The package's folders served as they are."""


def release_rows(changelogs: dict[str, str]) -> list[Row]:
    """Every dated release of every project from ``{project: CHANGES.rst text}``, in the projects' order."""
    return [row for project in PROJECTS for row in rows_of(project, parse_changelog(changelogs[project]))]


def render_site(shipped: dict[str, str], rows: list[Row]) -> dict[str, str]:
    """The files written for the site (path -> text): ``shipped`` (path -> the package's text) filled with ``rows``."""
    names = [DISPLAY_NAMES[p] for p in PROJECTS]
    top = summary(rows)
    latest = newest_first(rows)
    by_project = changes_by_project(rows, names)
    files: dict[str, str] = {}
    for page in DASHBOARD_PAGES:
        files[page] = calendar.with_calendar_link(pages.chrome(shipped[page], latest))
    files[calendar.PAGE] = calendar.calendar_page(pages.chrome(shipped["blank.html"], latest), rows, names)
    for page in FORM_PAGES:
        files[page] = pages.fonts(shipped[page])
    files["index.html"] = pages.with_data_script(pages.index_page(files["index.html"], top, by_project,
                                                                  fix_share(rows, names)))  # fmt: skip
    files["charts.html"] = timeline.timeline_card(pages.charts_page(files["charts.html"], FLASK_MAJOR))
    files["tables.html"] = pages.tables_page(files["tables.html"], rows)
    files["cards.html"] = pages.cards_page(files["cards.html"], top)
    files["js/demo/pallets-data.js"] = pages.data_script(
        releases_per_year(rows), by_project, changes_per_release(rows, "Flask", FLASK_MAJOR)
    )
    files["js/demo/chart-area-demo.js"] = pages.area_script(shipped["js/demo/chart-area-demo.js"])
    files["js/demo/chart-bar-demo.js"] = pages.bar_script(shipped["js/demo/chart-bar-demo.js"])
    files["js/demo/chart-pie-demo.js"] = pages.pie_script(shipped["js/demo/chart-pie-demo.js"])
    files["js/demo/datatables-demo.js"] = shipped["js/demo/datatables-demo.js"]
    files["js/demo/pallets-releases.js"] = timeline.timeline_script(release_timeline(rows, names))
    files["js/demo/chart-releases-demo.js"] = timeline.CHART_SCRIPT
    files["js/demo/pallets-calendar.js"] = calendar.calendar_data(rows, names)
    files["js/demo/calendar-releases-demo.js"] = calendar.CALENDAR_SCRIPT
    return files


def build_site(cache: Path, site: Path) -> Path:
    """Fetch the theme, the font and the changelogs (once, under ``cache``) and write the filled site to ``site``."""
    store = cache / "npm"
    store.mkdir(parents=True, exist_ok=True)
    with locked(store / ".lock"):
        theme = unpack_npm(SB_ADMIN, store)
        nunito = unpack_npm(NUNITO, store)
        plugins = {name: unpack_npm(spec, store) / folder
                   for name, (spec, folder) in (timeline.VENDOR | calendar.VENDOR).items()}  # fmt: skip
    unpacked = ensure_sdists(cache)
    changelogs = {p: changes_file(p, unpacked).read_text(encoding="utf-8") for p in PROJECTS}
    wanted = [*DASHBOARD_PAGES, *FORM_PAGES, "js/demo/chart-area-demo.js", "js/demo/chart-bar-demo.js",
              "js/demo/chart-pie-demo.js", "js/demo/datatables-demo.js"]  # fmt: skip
    shipped = {name: (theme / name).read_text(encoding="utf-8") for name in wanted}
    shutil.rmtree(site, ignore_errors=True)
    for name, text in render_site(shipped, release_rows(changelogs)).items():
        (site / name).parent.mkdir(parents=True, exist_ok=True)
        (site / name).write_text(text, encoding="utf-8")
    for shipped_folder in SHIPPED:
        if shipped_folder != "vendor":
            (site / shipped_folder).symlink_to(theme / shipped_folder, target_is_directory=True)
    # the theme's vendor folders as shipped, and the timeline's zoom plugin, its gesture library and the calendar
    # next to them
    (site / "vendor").mkdir()
    for shipped_vendor in sorted((theme / "vendor").iterdir()):
        (site / "vendor" / shipped_vendor.name).symlink_to(shipped_vendor, target_is_directory=shipped_vendor.is_dir())
    for name, folder in plugins.items():
        (site / "vendor" / name).symlink_to(folder, target_is_directory=True)
    (site / "js" / "sb-admin-2.min.js").symlink_to(theme / "js" / "sb-admin-2.min.js")
    (site / "fonts").mkdir()
    (site / "fonts" / "nunito").symlink_to(nunito, target_is_directory=True)
    return site


@contextmanager
def start(cache: Path, work: Path) -> Iterator[Server]:
    """The filled dashboard served by ``http.server`` on 127.0.0.1 until the block ends."""
    site = build_site(cache, work / "site")
    with running_static(site, log=work / "http.log") as server:
        yield server


APP = Application(
    name="dashboard",
    title="SB Admin 2",
    kind="dashboard",
    version="4.1.4",
    source=f"npm {SB_ADMIN} (with {NUNITO})",
    licence="MIT",
    data="the release history in the CHANGES.rst of Flask 3.0.0, Click 8.1.7, Jinja2 3.1.2, Werkzeug 3.0.1, "
    "MarkupSafe 2.1.3 and ItsDangerous 2.1.2 (PyPI source releases, BSD-3-Clause)",
    start=start,
    static=True,  # static files; DataTables searches and sorts in the page
)
