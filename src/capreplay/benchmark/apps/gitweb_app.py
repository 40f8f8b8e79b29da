"""Code browser: gitweb over git repositories of the Pallets projects' real source releases.

gitweb (Git's own web interface, Debian 12 ``gitweb``) runs as a CGI script under Debian's ``lighttpd``
(mod_cgi), both pinned, with its configuration and repositories in the work folder. It lists six bare
repositories under the site name "Pallets source": Flask, Click, Jinja2, Werkzeug, MarkupSafe and ItsDangerous,
one commit per pinned source release from PyPI (:mod:`capreplay.benchmark.sdists`: 27 releases, 2018-2024), each
commit the release's whole tree, dated, authored and described by the release itself
(:mod:`capreplay.benchmark.apps.pallets_git`). Each repository's description is its ``PKG-INFO`` Summary. Its
pages: the project list (sortable), each project's summary, shortlog, log, tags, trees, blobs, commits and
commitdiffs, blame, file history, and search over commit messages, authors, file contents (grep) and diffs
(pickaxe).

Kept offline and the same on every build: no avatars (gitweb would fetch them from Gravatar), the logo links
home rather than to git-scm.com, no snapshot downloads, no JavaScript timezone switching (a page would differ
with the browser's zone), no syntax highlighting (Debian's ``highlight`` is not installed). gitweb prints each
commit's age ("4 months ago") against the clock: Perl's ``time`` is fixed to noon of the day after the newest
release, so ages read the same whichever day the site is built.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from pathlib import Path

from capreplay.benchmark.application import HOST_SUFFIX, Application
from capreplay.benchmark.apps.pallets_git import build_repositories, history
from capreplay.benchmark.debian import ensure_debian
from capreplay.benchmark.sdists import PROJECTS, ensure_sdists
from capreplay.testing.apps.process import Server, running_server

NAME = "code"
PACKAGES = {"gitweb": "1:2.39.5-0+deb12u3", "lighttpd": "1.4.69-1", "git": "1:2.39.5-0+deb12u3"}
"""Debian 12 packages, pinned: the CGI script, the server that runs it, and the git it calls."""
GITWEB = Path("/usr/share/gitweb")
"""Where Debian's gitweb puts ``gitweb.cgi`` and its ``static/`` files (served as the document root)."""
SITE_NAME = "Pallets source"
CLOCK_MODULE = "GitwebClock"


def gitweb_config(projectroot: Path, origin: str, temp: Path) -> str:
    """The ``GITWEB_CONFIG`` file (Perl): the repositories, the site's name and URLs, and the features."""
    return f"""\
# gitweb for the capreplay benchmark: {origin}
$projectroot = "{projectroot}";
$project_maxdepth = 1;
$git_temp = "{temp}";
$site_name = "{SITE_NAME}";
$home_link_str = "projects";
# every link gitweb prints is this host's ("/?p=..."), whatever address the request reached
$my_url = "{origin}/";
$my_uri = "/";
$base_url = "{origin}/";
$home_link = "/";
@stylesheets = ("/static/gitweb.css");
$javascript = "/static/gitweb.js";
$logo = "/static/git-logo.png";
$favicon = "/static/git-favicon.png";
$logo_url = "/";
$logo_label = "{SITE_NAME}";
@git_base_url_list = ();
$maxload = undef;
$feature{{'avatar'}}{{'default'}} = [''];
$feature{{'blame'}}{{'default'}} = [1];
$feature{{'search'}}{{'default'}} = [1];
$feature{{'grep'}}{{'default'}} = [1];
$feature{{'pickaxe'}}{{'default'}} = [1];
$feature{{'snapshot'}}{{'default'}} = [];
$feature{{'highlight'}}{{'default'}} = [0];
$feature{{'javascript-actions'}}{{'default'}} = [0];
$feature{{'javascript-timezone'}}{{'default'}} = [undef];
1;
"""


def clock_module(now: datetime) -> str:
    """A Perl module that fixes ``time`` for every script compiled after it (loaded through ``PERL5OPT``)."""
    return f"""\
package {CLOCK_MODULE};
# gitweb prints ages ("4 months ago") against time(); a fixed clock keeps them the same on every build
BEGIN {{ *CORE::GLOBAL::time = sub () {{ {int(now.timestamp())} }}; }}
1;
"""


def lighttpd_config(port: int, work: Path, env: dict[str, str]) -> str:
    """lighttpd serving gitweb's folder on 127.0.0.1:``port``: ``/`` runs gitweb.cgi, ``/static/`` its files."""
    environment = ",\n".join(f'    "{key}" => "{value}"' for key, value in sorted(env.items()))
    return f"""\
server.modules = ("mod_cgi", "mod_setenv", "mod_access")
server.document-root = "{GITWEB}"
server.bind = "127.0.0.1"
server.port = {port}
server.errorlog = "{work / "lighttpd-error.log"}"
server.tag = "lighttpd"
index-file.names = ("gitweb.cgi")
url.access-deny = ("~", ".inc")
cgi.assign = (".cgi" => "/usr/bin/perl")
mimetype.assign = (".css" => "text/css", ".js" => "text/javascript", ".png" => "image/png")
setenv.add-environment = (
{environment}
)
"""


@contextmanager
def running_gitweb(cache: Path, work: Path) -> Iterator[Server]:
    """gitweb under lighttpd on 127.0.0.1, over repositories built in ``work``, until the block ends."""
    ensure_debian(PACKAGES)
    unpacked = ensure_sdists(cache)
    repositories = work / "repositories"
    build_repositories(unpacked, repositories)
    newest = max(commit.when for project in PROJECTS for commit in history(project, unpacked))
    perl = work / "perl"
    perl.mkdir(parents=True, exist_ok=True)
    (perl / f"{CLOCK_MODULE}.pm").write_text(clock_module(newest + timedelta(days=1)), encoding="utf-8")
    temp = work / "tmp"
    temp.mkdir(exist_ok=True)
    config = work / "gitweb_config.perl"
    config.write_text(gitweb_config(repositories, f"http://{NAME}{HOST_SUFFIX}", temp), encoding="utf-8")
    cgi_env = {
        "GITWEB_CONFIG": str(config),
        "GITWEB_CONFIG_COMMON": str(work / "no-common.conf"),  # not /etc/gitweb-common.conf
        "PERL5LIB": str(perl),
        "PERL5OPT": f"-M{CLOCK_MODULE}",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "HOME": str(work),
        "TZ": "UTC",
        "LANG": "C.UTF-8",
    }

    def command(port: int) -> list[str]:
        conf = work / "lighttpd.conf"
        conf.write_text(lighttpd_config(port, work, cgi_env), encoding="utf-8")
        return ["/usr/sbin/lighttpd", "-D", "-f", str(conf)]

    with running_server(command, ready_path="/", log=work / "lighttpd.log", cwd=work) as server:
        yield server


APP = Application(
    name=NAME,
    title="gitweb",
    kind="code",
    version=f"{PACKAGES['gitweb']} (git 2.39.5) under lighttpd {PACKAGES['lighttpd']}",
    source="Debian 12 " + ", ".join(f"{package} {version}" for package, version in PACKAGES.items()),
    licence="GPL-2.0-only",
    data="git repositories of the source releases of Flask, Click, Jinja2, Werkzeug, MarkupSafe and ItsDangerous "
    "(PyPI sdists, 27 releases), one commit per release with its CHANGES.rst entries as the message",
    start=running_gitweb,
)
