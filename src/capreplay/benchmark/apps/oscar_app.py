"""The shop: django-oscar, a real e-commerce framework, selling the flag of every ISO 3166-1 country.

A small Django project (:mod:`capreplay.benchmark.apps.oscar_project`) runs Oscar 4.2.1 on Django 5.2 with
SQLite, a Whoosh search index and gunicorn on 127.0.0.1, all from PyPI at exact versions (:data:`REQUIREMENTS`,
an environment of its own). Its catalogue holds 249 products, one per country, made from packaged data by
:mod:`capreplay.benchmark.apps.flag_catalogue`:

- the flag images: npm ``flag-icons`` 7.5.0 (MIT), its 4:3 SVG files turned into PNG by CairoSVG
  2.9.1 when the shop is built (Oscar's thumbnails, made by sorl-thumbnail with Pillow, need raster images);
- names and codes (alpha-2, alpha-3, numeric, ISO and official names, as product attributes) and the number of
  subdivisions: the iso-codes JSON files bundled in PyPI ``pycountry`` 26.2.16;
- the category (region): the area of the country's first time zone in ``zone.tab`` of PyPI ``tzdata`` 2026.6;
- price and stock: formulas over those data, which each product page's description states (£4.00 plus £0.10
  per ISO 3166-2 subdivision; the numeric code modulo 25 flags in stock).

Kept offline: Oscar's base template loads jQuery from Google's CDN, so the builder writes a copy that loads
Oscar's bundled jQuery instead; Google Analytics stays off (no ``OSCAR_GOOGLE_ANALYTICS_ID``); mail goes to
Django's in-memory backend; Oscar's templates load no web fonts or avatars (Font Awesome ships in its static
files). Anonymous checkout is on, so the checkout's first step shows without an account.

Django's admin is routed at ``/admin/``, with the project's ModelAdmins (:data:`oscar_project.ADMIN`) and one
staff superuser (:data:`oscar_project.ADMIN_USERNAME`, :data:`oscar_project.ADMIN_PASSWORD`); its data adds one
voucher offer per region's month (:mod:`capreplay.benchmark.apps.flag_offers`), which the public pages never show.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from capreplay.benchmark.application import Application
from capreplay.benchmark.apps import flag_catalogue, flag_offers, oscar_project
from capreplay.benchmark.debian import ensure_debian
from capreplay.errors import CapreplayError
from capreplay.testing.apps.env import ensure_env
from capreplay.testing.apps.npm_cdn import unpack_npm
from capreplay.testing.apps.process import Server, running_server, server_env
from capreplay.util.files import locked

NAME = "shop"
HOST = f"{NAME}.bench.test"
OSCAR = "4.2.1"
FLAG_ICONS = "flag-icons@7.5.0"
REQUIREMENTS = [
    "asgiref==3.13.0",
    "babel==2.19.0",
    "cairocffi==1.7.1",
    "cairosvg==2.9.1",
    "cffi==2.1.1",
    "cssselect2==0.10.1",
    "defusedxml==0.7.1",
    "django==5.2.20",
    "django-extra-views==0.16.0",
    "django-haystack==3.4.0",
    f"django-oscar=={OSCAR}",
    "django-phonenumber-field==8.5.0",
    "django-tables2==2.7.0",
    "django-treebeard==7.0.3",
    "django-widget-tweaks==1.5.1",
    "factory-boy==3.3.3",
    "faker==40.63.0",
    "gunicorn==27.0.1",
    "packaging==26.4",
    "phonenumbers==9.0.43",
    "pillow==13.0.0",
    "purl==1.6",
    "pycountry==26.2.16",
    "pycparser==3.12",
    "six==1.17.0",
    "sorl-thumbnail==12.11.0",
    "sqlparse==0.6.1",
    "tinycss2==1.5.1",
    "tzdata==2026.6",
    "webencodings==0.6.1",
    "whitenoise==6.11.0",
    "whoosh==2.7.4",
]
"""Oscar and everything it needs, resolved once and pinned exactly (Django 5.2 is one Oscar 4.2 supports)."""
DEBIAN = {"libcairo2": "1.16.0-7"}
"""The Cairo library CairoSVG loads (Debian 12)."""
BUILD_TIMEOUT = 600.0
"""Seconds for one build step (migrations, the import with its 249 PNG images and their thumbnails, the index)."""


def _site_packages(venv: Path) -> Path:
    found = sorted(venv.glob("lib/python3*/site-packages"))
    if not found:
        raise CapreplayError("the Oscar environment has no site-packages folder", where=venv)
    return found[0]


def write_project(project: Path, site_packages: Path) -> None:
    """The Django project's files under ``project``, with Oscar's base template made offline."""
    files = {
        "settings.py": oscar_project.SETTINGS,
        "urls.py": oscar_project.URLS,
        "wsgi.py": oscar_project.WSGI,
        "manage.py": oscar_project.MANAGE,
        "flagshop/__init__.py": "",
        "flagshop/management/__init__.py": "",
        "flagshop/management/commands/__init__.py": "",
        "flagshop/management/commands/import_flags.py": oscar_project.IMPORT_COMMAND,
        "flagshop/management/commands/region_offers.py": oscar_project.OFFERS_COMMAND,
        "flagshop/admin.py": oscar_project.ADMIN,
    }
    original = (site_packages / "oscar/templates/oscar/base.html").read_text(encoding="utf-8")
    files["templates/oscar/base.html"] = oscar_project.offline_base_template(original)
    for name, text in files.items():
        path = project / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def write_records(data: Path, site_packages: Path) -> tuple[Path, Path, Path]:
    """The importer's product records and category descriptions, made from pycountry's and tzdata's files, and
    the region months' offers made from the categories."""
    databases = site_packages / "pycountry" / "databases"
    records, categories = flag_catalogue.import_files(
        (databases / "iso3166-1.json").read_text(encoding="utf-8"),
        (databases / "iso3166-2.json").read_text(encoding="utf-8"),
        (site_packages / "tzdata" / "zoneinfo" / "zone.tab").read_text(encoding="utf-8"),
        FLAG_ICONS.split("@")[1],
    )
    data.mkdir(parents=True, exist_ok=True)
    (data / "records.json").write_text(records, encoding="utf-8")
    (data / "categories.json").write_text(categories, encoding="utf-8")
    months = flag_offers.months_records(flag_offers.region_months(list(json.loads(categories))))
    (data / "months.json").write_text(json.dumps(months, indent=1), encoding="utf-8")
    return data / "records.json", data / "categories.json", data / "months.json"


def _manage(python: Path, project: Path, env: dict[str, str], log: Path, *args: str) -> None:
    started = time.monotonic()
    with open(log, "ab") as out:
        try:
            done = subprocess.run([str(python), "manage.py", *args], cwd=project, env=env, stdout=out,
                                  stderr=subprocess.STDOUT, timeout=BUILD_TIMEOUT, check=False)  # fmt: skip
        except subprocess.TimeoutExpired as e:
            raise CapreplayError(f"manage.py {args[0]} did not finish within {BUILD_TIMEOUT:.0f} s", where=log) from e
        out.write(f"== manage.py {args[0]}: {time.monotonic() - started:.1f} s\n".encode())
    if done.returncode != 0:
        tail = log.read_text(errors="replace")[-3000:]
        raise CapreplayError(f"manage.py {args[0]} failed (exit {done.returncode}):\n{tail}", where=log)


def build(venv: Path, flags: Path, work: Path, env: dict[str, str]) -> Path:
    """The shop's project under ``work``, migrated, filled, indexed and with its static files collected."""
    site_packages = _site_packages(venv)
    project, data = work / "project", work / "data"
    write_project(project, site_packages)
    records, categories, months = write_records(data, site_packages)
    python, log = venv / "bin" / "python", work / "build.log"
    _manage(python, project, env, log, "migrate", "--noinput")
    _manage(python, project, env, log, "oscar_populate_countries")  # the checkout's countries, from pycountry
    _manage(python, project, env, log, "import_flags", str(records), str(flags / "flags"), HOST, str(categories))
    _manage(python, project, env, log, "region_offers", str(months), oscar_project.ADMIN_USERNAME,
            oscar_project.ADMIN_EMAIL, oscar_project.ADMIN_PASSWORD)  # fmt: skip
    _manage(python, project, env, log, "rebuild_index", "--noinput")
    _manage(python, project, env, log, "collectstatic", "--noinput")
    missing = site_packages / "oscar" / "static" / "oscar" / "img" / "image_not_found.jpg"
    shutil.copyfile(missing, data / "media" / "image_not_found.jpg")  # Oscar asks for it there (its docs)
    return project


@contextmanager
def start(cache: Path, work: Path) -> Iterator[Server]:
    """Install Oscar and the data packages (once), build the shop under ``work`` and serve it on 127.0.0.1."""
    ensure_debian(DEBIAN)
    venv = ensure_env(cache / "apps" / f"oscar-{OSCAR}", REQUIREMENTS, check="import oscar, cairosvg, whoosh")
    venv_dir = venv.bin_dir.parent
    store = cache / "npm"
    store.mkdir(parents=True, exist_ok=True)
    with locked(store / ".lock"):
        flags = unpack_npm(FLAG_ICONS, store)
    work.mkdir(parents=True, exist_ok=True)
    env = {
        "FLAGSHOP_DATA": str((work / "data").absolute()),
        "DJANGO_SETTINGS_MODULE": "settings",
        "PYTHONWARNINGS": "ignore::SyntaxWarning",  # Whoosh 2.7's old string escapes, warned on every import
    }
    project = build(venv_dir, flags, work.absolute(), server_env(env))

    def command(port: int) -> list[str]:
        # Idle connections kept open long: with gunicorn's 2 s, a request sent as the server closes one was lost.
        # No control socket: gunicorn's default one is a file in the home folder that each instance would share.
        return [str(venv.bin_dir / "gunicorn"), "--bind", f"127.0.0.1:{port}", "--workers", "1", "--threads", "4",
                "--no-sendfile", "--keep-alive", "120", "--no-control-socket", "--access-logfile", "-",
                "wsgi:application"]  # fmt: skip

    with running_server(command, ready_path="/", log=work / "gunicorn.log", cwd=project, env=env) as server:
        yield server


APP = Application(
    name=NAME,
    title="django-oscar",
    kind="shop",
    version=f"{OSCAR} (Django 5.2.20)",
    source=f"PyPI django-oscar=={OSCAR}, django==5.2.20, gunicorn==27.0.1 (every dependency pinned)",
    licence="BSD-3-Clause",
    data=(
        "flags from npm flag-icons 7.5.0 (MIT); country names, codes and subdivisions from the iso-codes JSON "
        "bundled in PyPI pycountry 26.2.16; regions from zone.tab of PyPI tzdata 2026.6"
    ),
    start=start,
)
