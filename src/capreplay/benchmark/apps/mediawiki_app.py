"""MediaWiki from Debian 12 on SQLite, holding the Linux man pages of sections 5 and 7, served by PHP's own server.

The application is Debian's ``mediawiki`` 1:1.39.17-1+deb12u2 with PHP 8.2 and its SQLite driver, run in
place from ``/usr/share/mediawiki`` with PHP's built-in web server (``php -S`` and MediaWiki's own router
``maintenance/dev/includes/router.php``); ``MW_CONFIG_FILE`` points it at the ``LocalSettings.php`` that
``maintenance/install.php --dbtype sqlite`` writes in the work folder, next to the database. Pages have short
URLs (``/wiki/signal(7)``) under ``http://wiki.bench.test``; the skin is Vector 2022.

The data is Debian's ``manpages`` 6.03-2 (the Linux man-pages project, release 6.03): every page of
section 5 (file formats) and section 7 (overviews, conventions), 156 pages, plus 54 redirects for the files
that are symbolic links to another page. Each page is converted with Debian's ``pandoc`` 2.17.1.1
(``pandoc -f man -t mediawiki``, see :mod:`capreplay.benchmark.manwiki`), titled ``name(section)`` as ``man``
names it (``$wgCapitalLinks`` is off, so ``signal(7)`` keeps its small letter), linked to the other pages it
refers to and filed in the category "Section 5: File formats" or "Section 7: Overviews". Every revision is
dated from the page's ``.TH`` line and attributed to the user "Man-pages import" (the wiki's administrator);
the pages are imported from a generated XML dump with ``importDump.php``, then the recent changes, site
statistics, links and search index are rebuilt and the job queue is run empty before the server starts. The
rows the installer writes with the build's clock (the default Main Page revision, the administrator account
and its log entry) are dated the day of the earliest page before the import, so two builds show the same
history and the imported Main Page, newer, is the one shown.

Switched off to keep it offline and stable: uploads and InstantCommons, the pingback to mediawiki.org, e-mail,
editing and account creation by visitors, jobs run by web requests (``$wgJobRunRate = 0``), and the recent
changes' live JavaScript filters (the plain form is used). ResourceLoader's module store in the browser's
localStorage is off too: with it, each page asked only for the modules the capture's browser did not hold yet,
so a replay in a fresh browser asked for module sets the capture never fetched. The logo (MediaWiki's sunflower) and the
"Powered by" icons are files MediaWiki ships. Recent changes are kept for 50 years and listed for the last
3,650 days by default, so that the man pages' 2022-2023 dates stay listed.

The editing build (:data:`EDIT_APP`, the snapshot's part ``wikiedit``) is the same wiki with Debian's WikiEditor
extension (0.5.3, shipped in the same package) loaded, so the edit form has its toolbar, with editing open to
visitors and uploads to one user the builder creates (:data:`EDITOR`, whose name and password the tasks state). Its
scripts are served under ``/w`` (``/w/index.php``, ``/w/load.php``, ``/w/api.php``, as Wikipedia lays them out) and
its uploads under ``/images``, while pages keep their ``/wiki/`` URLs (a small router sends every one of them to
MediaWiki, file pages such as ``/wiki/File:Click_icon.png`` included): the startup script that ``load.php`` serves
lists every module, so with WikiEditor loaded it differs from the plain wiki's, and under one URL the replay would
give a browser the plain wiki's first; under ``/w`` no script URL is shared with the plain wiki's part.
"""

from __future__ import annotations

import gzip
import os
import sqlite3
import subprocess
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager, closing, contextmanager
from dataclasses import replace
from datetime import date
from pathlib import Path

from capreplay.benchmark import manwiki
from capreplay.benchmark.application import Application
from capreplay.benchmark.debian import ensure_debian
from capreplay.errors import CapreplayError
from capreplay.testing.apps.process import Server, running_server

VERSION = "1:1.39.17-1+deb12u2"
MANPAGES_VERSION = "6.03-2"
PANDOC_VERSION = "2.17.1.1-2~deb12u1"
PHP_VERSION = "8.2.36-1~deb12u1"
PACKAGES = {
    "mediawiki": VERSION,
    "php8.2-cli": PHP_VERSION,
    "php8.2-sqlite3": PHP_VERSION,
    "php-sqlite3": "2:8.2+93",
    "php8.2-intl": PHP_VERSION,
    "php8.2-mbstring": PHP_VERSION,
    "php8.2-xml": PHP_VERSION,
    "pandoc": PANDOC_VERSION,
    "manpages": MANPAGES_VERSION,
}
"""Debian 12 packages, pinned (``mediawiki`` brings ``mediawiki-classes`` at its own version)."""
HOST = "wiki.bench.test"
SECTIONS = (5, 7)
MEDIAWIKI = Path("/usr/share/mediawiki")
ROUTER = MEDIAWIKI / "maintenance" / "dev" / "includes" / "router.php"
MAINTENANCE_TIMEOUT = 600.0
"""Seconds for one maintenance script (rebuildall parses every page: about a minute here)."""
SETTINGS = """
# Added by capreplay's benchmark builder: short URLs, offline, read-only for visitors, stable listings.
$wgArticlePath = "/wiki/$1";
$wgUsePathInfo = true;
$wgCapitalLinks = false;
$wgDefaultSkin = "vector-2022";
$wgVectorResponsive = true;
$wgEnableUploads = false;
$wgUseInstantCommons = false;
$wgPingback = false;
$wgEnableEmail = false;
$wgEnableUserEmail = false;
$wgUploadDirectory = "{work}/images";
$wgCacheDirectory = "{work}/cache";
$wgJobRunRate = 0;
$wgGroupPermissions['*']['edit'] = false;
$wgGroupPermissions['*']['createaccount'] = false;
$wgGroupPermissions['user']['edit'] = false;
$wgDisableAnonTalk = true;
$wgRCMaxAge = 50 * 365 * 86400;
$wgRCLinkDays = [ 30, 365, 3650 ];
$wgDefaultUserOptions['rcdays'] = 3650;
$wgDefaultUserOptions['rcenhancedfilters-disable'] = 1;
$wgCategoryPagingLimit = 50;
$wgResourceLoaderStorageEnabled = false;
$wgLogos = [ 'icon' => "/resources/assets/mediawiki.png", '1x' => "/resources/assets/mediawiki.png" ];
"""
"""Appended to the installer's ``LocalSettings.php``; ``{work}`` is the wiki's folder."""
EDITOR = ("Editor", "manpages-editor")
"""The user the editing build creates (name, password): the one that may upload files."""
EDIT_SETTINGS = """
# Added for the editing build: WikiEditor's toolbar, editing by visitors, uploads by users, scripts under /w.
wfLoadExtension( 'WikiEditor' );
$wgScriptPath = "/w";
$wgResourceBasePath = "/w";
$wgUploadPath = "/images";
$wgLogos = [ 'icon' => "/w/resources/assets/mediawiki.png", '1x' => "/w/resources/assets/mediawiki.png" ];
$wgEnableUploads = true;
$wgGroupPermissions['*']['edit'] = true;
$wgGroupPermissions['user']['edit'] = true;
$wgGroupPermissions['user']['upload'] = true;
$wgAjaxEditStash = false;
$wgUseImageMagick = false;
$wgResourceModules['mediawiki.action.edit'] = [
    'targets' => [ 'desktop', 'mobile' ],
    'localBasePath' => "$IP/resources/src/mediawiki.action.edit",
    'remoteBasePath' => "$wgResourceBasePath/resources/src/mediawiki.action.edit",
    'packageFiles' => [ 'edit.js', [ 'name' => 'stash.js', 'content' => '// off' ], 'watchlistExpiry.js' ],
    'styles' => 'edit.css',
    'dependencies' => [ 'mediawiki.action.edit.styles', 'mediawiki.editfont.styles', 'jquery.textSelection',
        'oojs-ui-core', 'mediawiki.widgets.visibleLengthLimit', 'mediawiki.api', 'mediawiki.util' ],
];
"""
"""Appended after :data:`SETTINGS` in the editing build. The edit stash is off: the edit form's ``stash.js`` sends the
text to the API whenever the typing pauses, so which texts it sends depends on the typing's timing, and the server's
switch (``$wgAjaxEditStash``) does not stop the script in 1.39; the form's module is registered again as Debian's
``resources/Resources.php`` has it, with an empty ``stash.js``. ImageMagick is off too (whatever ``convert`` the
installer found): the uploads are small enough to be shown at their own size."""
EDIT_ROUTER = """<?php
// The editing build's router (written by capreplay's benchmark builder): every /wiki/ page goes to MediaWiki's
// index.php, even one whose title ends like a file name (File:Click_icon.png), which PHP's server would answer with
// 404 for want of such a file; everything else goes to MediaWiki's own router.
if ( str_starts_with( parse_url( $_SERVER['REQUEST_URI'], PHP_URL_PATH ), '/wiki/' ) ) {
    chdir( '{mediawiki}' );
    require '{mediawiki}/index.php';
    return true;
}
return require '{router}';
"""
"""PHP's router script for the editing build's document root; ``{mediawiki}`` and ``{router}`` are filled in."""


def read_manpages() -> list[manwiki.ManPage]:
    """Every page of sections 5 and 7 that the ``manpages`` package installs (symbolic links excluded)."""
    return [manwiki.ManPage(name=path.name.rsplit(".", 2)[0], section=int(path.suffixes[-2][1:]),
                            roff=gzip.decompress(path.read_bytes()).decode())
            for path in _package_pages() if not path.is_symlink()]  # fmt: skip


def read_aliases() -> dict[str, str]:
    """Title of each page that is a symbolic link -> title of the page it points to."""
    aliases = {}
    for path in _package_pages():
        if path.is_symlink():
            target = path.parent / path.readlink()
            aliases[_title_of(path)] = _title_of(target)
    return aliases


def _package_pages() -> list[Path]:
    done = subprocess.run(["dpkg-query", "-L", "manpages"], capture_output=True, text=True, check=True)
    wanted = tuple(f"/usr/share/man/man{s}/" for s in SECTIONS)
    return sorted(Path(line) for line in done.stdout.splitlines() if line.startswith(wanted) and line.endswith(".gz"))


def _title_of(path: Path) -> str:
    stem, section = path.name.removesuffix(".gz").rsplit(".", 1)
    return manwiki.title(stem, int(section))


def to_wikitext(roff: str) -> str:
    """``pandoc -f man -t mediawiki`` of the page, headings one level down (the page title is the first)."""
    done = subprocess.run(["pandoc", "-f", "man", "-t", "mediawiki", "--shift-heading-level-by=1"],
                          input=manwiki.prepare_tables(roff), capture_output=True, text=True, check=False)  # fmt: skip
    if done.returncode != 0:
        raise CapreplayError(f"pandoc could not convert a man page: {done.stderr.strip()[-500:]}")
    return done.stdout


def wiki_pages(pages: list[manwiki.ManPage], aliases: dict[str, str]) -> list[manwiki.WikiPage]:
    """Every page to import: the articles, the redirects, the two categories and the Main Page."""
    with ThreadPoolExecutor(max_workers=4) as pool:
        texts = list(pool.map(lambda page: to_wikitext(page.roff), pages))
    titles = {manwiki.title(page.name, page.section) for page in pages} | set(aliases)
    dates = {manwiki.title(page.name, page.section): manwiki.page_date(page.roff) for page in pages}
    comment = f"Imported from Debian manpages {MANPAGES_VERSION} with pandoc"
    out = []
    summaries: dict[int, dict[str, str]] = {section: {} for section in SECTIONS}
    for page, text in zip(pages, texts, strict=True):
        name = manwiki.title(page.name, page.section)
        summaries[page.section][name] = manwiki.summary(text)
        when = manwiki.page_time(dates[name])
        out.append(manwiki.WikiPage(name, manwiki.article(page, text, titles), when, comment))
    for alias, target in sorted(aliases.items()):
        out.append(manwiki.WikiPage(alias, manwiki.redirect(target), manwiki.page_time(dates[target]), comment))
    last = manwiki.page_time(max(dates.values()))
    for section in SECTIONS:
        description = manwiki.category_page(section, len(summaries[section]))
        out.append(manwiki.WikiPage(f"Category:{manwiki.CATEGORIES[section]}", description, last, "Section page"))
    first = manwiki.page_time(min(dates.values()))
    out += [manwiki.WikiPage(name, text, first, "Site interface") for name, text in manwiki.INTERFACE.items()]
    release = f"Debian package manpages {MANPAGES_VERSION}"
    out.append(manwiki.WikiPage(manwiki.MAIN_PAGE, manwiki.main_page(summaries, release), last, "Index of the pages"))
    return out


def install_wiki(folder: Path, pages: list[manwiki.WikiPage], first_day: date, *, editing: bool = False) -> Path:
    """A MediaWiki on SQLite in ``folder`` holding ``pages``; its LocalSettings.php. ``editing``: the editing
    build's settings (:data:`EDIT_SETTINGS`) and its user (:data:`EDITOR`), dated with the installer's rows."""
    data = folder / "data"
    data.mkdir(parents=True)
    _maintenance(None, "install.php", "--dbtype", "sqlite", "--dbpath", str(data), "--dbname", "wiki",
                 "--confpath", str(folder), "--scriptpath", "", "--server", f"http://{HOST}", "--lang", "en",
                 "--pass", "man-pages-6.03-import", "--skins", "Vector",
                 "Linux man-pages", manwiki.IMPORT_USER)  # fmt: skip
    settings = folder / "LocalSettings.php"
    with settings.open("a") as out:
        out.write(SETTINGS.replace("{work}", str(folder)))
        if editing:
            out.write(EDIT_SETTINGS)
    if editing:
        _maintenance(settings, "createAndPromote.php", *EDITOR)
    # dated before the import, so that the imported Main Page, newer, becomes the page's current revision
    _date_install(data / "wiki.sqlite", first_day)
    dump = folder / "man-pages.xml"
    dump.write_text(manwiki.export_xml(pages))
    _maintenance(settings, "importDump.php", "--no-updates", str(dump))
    _maintenance(settings, "rebuildrecentchanges.php")
    _maintenance(settings, "rebuildall.php")
    # after the links are rebuilt (an article counts if it links somewhere); without --update it only prints
    _maintenance(settings, "initSiteStats.php", "--update")
    _maintenance(settings, "runJobs.php")
    return settings


def _date_install(database: Path, first_day: date) -> None:
    """Date every row the installer wrote with the build's clock ``first_day``, before anything is imported."""
    stamp = f"{first_day:%Y%m%d}000000"
    columns = {"revision": ["rev_timestamp"], "logging": ["log_timestamp"], "recentchanges": ["rc_timestamp"],
               "user": ["user_registration", "user_touched"]}  # fmt: skip
    with closing(sqlite3.connect(database)) as db, db:
        for table, names in columns.items():
            for column in names:
                db.execute(f"UPDATE {table} SET {column} = ? WHERE {column} IS NOT NULL", (stamp,))


def _maintenance(settings: Path | None, script: str, *args: str) -> None:
    env = {"MW_CONFIG_FILE": str(settings)} if settings else {}
    command = ["php", str(MEDIAWIKI / "maintenance" / script), *args]
    done = subprocess.run(command, cwd=MEDIAWIKI, env=_env(env), capture_output=True, text=True,
                          timeout=MAINTENANCE_TIMEOUT, check=False)  # fmt: skip
    if done.returncode != 0:
        raise CapreplayError(f"{script} failed: {(done.stderr or done.stdout).strip()[-1500:]}")


def _env(extra: dict[str, str]) -> dict[str, str]:
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8", **extra}


@contextmanager
def running_mediawiki(cache: Path, work: Path, *, editing: bool = False) -> Iterator[Server]:
    """MediaWiki with the man pages, built in ``work/wiki``, on 127.0.0.1 until the block ends (``editing``: the
    editing build, see the module's docstring)."""
    del cache  # everything is installed by apt; the wiki itself is built fresh in work
    ensure_debian(PACKAGES)
    manpages = read_manpages()
    pages = wiki_pages(manpages, read_aliases())
    first_day = min(manwiki.page_date(page.roff) for page in manpages)
    settings = install_wiki(work / "wiki", pages, first_day, editing=editing)
    root = edit_root(work / "root", work / "wiki" / "images") if editing else MEDIAWIKI
    router = root / "router.php" if editing else ROUTER

    def command(port: int) -> list[str]:
        return ["php", "-S", f"127.0.0.1:{port}", "-t", str(root), str(router)]

    env = {"MW_CONFIG_FILE": str(settings), "PHP_CLI_SERVER_WORKERS": "4"}
    with running_server(command, ready_path="/wiki/Main_Page", log=work / "mediawiki.log", cwd=MEDIAWIKI,
                        env=env) as server:  # fmt: skip
        yield server


def running_wiki_editor(cache: Path, work: Path) -> AbstractContextManager[Server]:
    """The editing build of the wiki (:data:`EDIT_APP`)."""
    return running_mediawiki(cache, work, editing=True)


def edit_root(root: Path, images: Path) -> Path:
    """The editing build's document root: MediaWiki under ``/w``, the uploads under ``/images``, and
    :data:`EDIT_ROUTER` as ``router.php``."""
    root.mkdir(parents=True)
    images.mkdir(parents=True, exist_ok=True)
    (root / "w").symlink_to(MEDIAWIKI)
    (root / "images").symlink_to(images)
    router = EDIT_ROUTER.replace("{mediawiki}", str(MEDIAWIKI)).replace("{router}", str(ROUTER))
    (root / "router.php").write_text(router)
    return root


APP = Application(
    name="wiki",
    title="MediaWiki",
    kind="wiki",
    version=f"1.39.17 (Debian {VERSION}), PHP {PHP_VERSION}, SQLite",
    source=f"Debian 12 mediawiki {VERSION}",
    licence="GPL-2.0-or-later",
    data=(
        f"Linux man-pages sections 5 and 7 (Debian manpages {MANPAGES_VERSION}: 156 pages and 54 redirects), "
        f"converted with Debian pandoc {PANDOC_VERSION}"
    ),
    start=running_mediawiki,
)

EDIT_APP = replace(APP, version=f"{APP.version}, WikiEditor 0.5.3", start=running_wiki_editor)
"""The editing build, under the same host: the part ``wikiedit`` is captured from it."""
