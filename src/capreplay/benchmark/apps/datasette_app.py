"""Datasette serving "World reference data": one SQLite database of ISO codes and time zones, offline.

The database ``world`` holds the ISO 3166-1 countries, ISO 3166-2 subdivisions, ISO 3166-3 historic
countries, ISO 639-3 languages, ISO 4217 currencies and ISO 15924 scripts, read from the iso-codes JSON files
that pycountry 26.2.16 ships, and the time zones of tzdata 2026.6 (the tz database 2026f: ``zone.tab``,
``zone1970.tab``, ``iso3166.tab``), parsed by :mod:`capreplay.benchmark.apps.world_data`. Foreign keys join
subdivisions, zones and the zone-country links to countries (and subdivisions to their parent, languages to
their scope and type), so Datasette links rows across tables; the metadata gives each table its source,
licence, description, facets and full-text search (FTS5 on the names of countries, subdivisions and
languages), and three canned queries.

Offline: Datasette makes no outside calls (no plugins are installed; its pages load only its own CSS and
JavaScript, and name datasette.io and the data's sources in links only). For pages that give the same text on
every build, the database is served immutable with counts computed once (``--inspect-file``), facet
suggestions (cut short by a time limit) are off, and the footer's "Queries took N ms" is removed.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from capreplay.benchmark.application import Application
from capreplay.benchmark.apps import world_data
from capreplay.errors import CapreplayError
from capreplay.testing.apps.env import ensure_env
from capreplay.testing.apps.process import Server, running_server

DATASETTE = "0.65.5"
PYCOUNTRY = "26.2.16"
TZDATA = "2026.6"
REQUIREMENTS = [
    f"datasette=={DATASETTE}", f"pycountry=={PYCOUNTRY}", f"tzdata=={TZDATA}",
    # Datasette's own dependencies, pinned as resolved when this was written, so a later build is the same
    "aiofiles==25.1.0", "anyio==4.16.0", "asgi-csrf==0.11", "asgiref==3.13.0", "certifi==2026.10.19.post1",
    "click==8.5.1", "click-default-group==1.2.4", "flexcache==0.3", "flexparser==0.4", "h11==0.16.0",
    "httpcore==1.0.9", "httpx==0.29.0", "hupper==1.12.1", "idna==3.21", "itsdangerous==2.2.0", "janus==2.0.0",
    "jinja2==3.1.6", "markupsafe==3.0.4", "mergedeep==1.3.4", "pip==26.3", "platformdirs==4.14.9",
    "pluggy==1.7.0", "python-multipart==0.0.34", "pyyaml==6.0.4", "setuptools==84.2.1",
    "typing-extensions==4.16.0", "uvicorn==0.55.0",
]  # fmt: skip
PAGE_SIZE = 50
"""Rows per table page: small pages keep the snapshot small and give every big table a "Next page"."""

ISO_SOURCE = {
    "source": f"pycountry {PYCOUNTRY} (iso-codes)",
    "source_url": f"https://pypi.org/project/pycountry/{PYCOUNTRY}/",
    "license": "LGPL-2.1-or-later",
    "license_url": "https://www.gnu.org/licenses/old-licenses/lgpl-2.1.html",
}
"""Where the ISO tables come from, as Datasette's metadata says it (links only: nothing is fetched)."""
TZ_SOURCE = {
    "source": f"tzdata {TZDATA} (IANA tz database)",
    "source_url": f"https://pypi.org/project/tzdata/{TZDATA}/",
    "license": "Public domain",
    "license_url": "https://www.iana.org/time-zones",
}
"""Where the time zone tables come from."""

SCHEMA = """
CREATE TABLE countries (alpha_2 TEXT PRIMARY KEY, alpha_3 TEXT NOT NULL, numeric TEXT NOT NULL, name TEXT NOT NULL,
  official_name TEXT, common_name TEXT, flag TEXT, tz_name TEXT);
CREATE TABLE subdivisions (code TEXT PRIMARY KEY, name TEXT NOT NULL, type TEXT NOT NULL,
  country_code TEXT NOT NULL REFERENCES countries(alpha_2), parent_code TEXT REFERENCES subdivisions(code));
CREATE TABLE historic_countries (alpha_4 TEXT PRIMARY KEY, alpha_3 TEXT NOT NULL, alpha_2 TEXT NOT NULL,
  numeric TEXT, name TEXT NOT NULL, withdrawal_date TEXT NOT NULL, comment TEXT);
CREATE TABLE language_scopes (code TEXT PRIMARY KEY, name TEXT NOT NULL);
CREATE TABLE language_types (code TEXT PRIMARY KEY, name TEXT NOT NULL);
CREATE TABLE languages (alpha_3 TEXT PRIMARY KEY, alpha_2 TEXT, bibliographic TEXT, name TEXT NOT NULL,
  inverted_name TEXT, common_name TEXT, scope TEXT NOT NULL REFERENCES language_scopes(code),
  type TEXT NOT NULL REFERENCES language_types(code));
CREATE TABLE currencies (alpha_3 TEXT PRIMARY KEY, numeric TEXT NOT NULL, name TEXT NOT NULL);
CREATE TABLE scripts (alpha_4 TEXT PRIMARY KEY, numeric TEXT NOT NULL, name TEXT NOT NULL);
CREATE TABLE zones (name TEXT PRIMARY KEY, country_code TEXT NOT NULL REFERENCES countries(alpha_2),
  latitude REAL NOT NULL, longitude REAL NOT NULL, comments TEXT, zone1970_countries TEXT);
CREATE TABLE zone_countries (zone TEXT NOT NULL REFERENCES zones(name),
  country_code TEXT NOT NULL REFERENCES countries(alpha_2), listed_in TEXT NOT NULL, PRIMARY KEY (zone, country_code));
CREATE INDEX subdivisions_country ON subdivisions(country_code);
CREATE INDEX zone_countries_country ON zone_countries(country_code);
"""
FTS = {"countries": ["name", "official_name", "common_name"], "subdivisions": ["name"],
       "languages": ["name", "inverted_name", "common_name"]}  # fmt: skip
"""The tables searched by full text, and the columns indexed."""


def build_rows(pycountry_db: Path, zoneinfo: Path) -> dict[str, list[world_data.Row]]:
    """Every table's rows, read from pycountry's ``databases`` folder and tzdata's ``zoneinfo`` folder."""

    def iso(name: str) -> str:
        return (pycountry_db / f"{name}.json").read_text(encoding="utf-8")

    def tab(name: str) -> str:
        return (zoneinfo / name).read_text(encoding="utf-8")

    zone_tab, zone1970 = tab("zone.tab"), tab("zone1970.tab")
    return {
        "countries": world_data.countries(iso("iso3166-1"), world_data.tz_country_names(tab("iso3166.tab"))),
        "subdivisions": world_data.subdivisions(iso("iso3166-2")),
        "historic_countries": world_data.historic_countries(iso("iso3166-3")),
        "language_scopes": world_data.lookup(world_data.LANGUAGE_SCOPES),
        "language_types": world_data.lookup(world_data.LANGUAGE_TYPES),
        "languages": world_data.languages(iso("iso639-3")),
        "currencies": world_data.currencies(iso("iso4217")),
        "scripts": world_data.scripts(iso("iso15924")),
        "zones": world_data.zones(zone_tab, zone1970),
        "zone_countries": world_data.zone_countries(zone_tab, zone1970),
    }


def write_database(path: Path, tables: dict[str, list[world_data.Row]]) -> None:
    """The SQLite database at ``path``: the schema, the rows in order, the FTS5 indexes; error on a broken key."""
    path.unlink(missing_ok=True)
    with sqlite3.connect(path) as db:
        db.executescript(SCHEMA)
        for table, rows in tables.items():
            columns = list(rows[0])
            db.executemany(f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})",
                           [[row[c] for c in columns] for row in rows])  # fmt: skip
        for table, columns in FTS.items():
            db.execute(f'CREATE VIRTUAL TABLE {table}_fts USING fts5({", ".join(columns)}, content="{table}")')
            db.execute(f"INSERT INTO {table}_fts ({table}_fts) VALUES ('rebuild')")
        broken = db.execute("PRAGMA foreign_key_check").fetchall()
        if broken:
            raise CapreplayError(f"the world database has rows whose foreign key points nowhere: {broken[:5]}")
    db.close()


def _table(description: str, source: dict[str, str], **more: Any) -> dict[str, Any]:
    return {"description": description, **source, **more}


QUERIES = {
    "countries_with_most_subdivisions": {
        "title": "Countries with the most subdivisions",
        "description": "ISO 3166-2 subdivisions of every level counted per country, most first.",
        "sql": "select c.alpha_2, c.flag, c.name, count(*) as subdivisions, count(distinct s.type) as types\n"
               "from subdivisions s join countries c on c.alpha_2 = s.country_code\n"
               "group by c.alpha_2 order by subdivisions desc, c.name limit 50",
    },
    "countries_with_most_time_zones": {
        "title": "Countries with the most time zones",
        "description": "Zones linked to each country in zone.tab or zone1970.tab, most first.",
        "sql": "select c.alpha_2, c.flag, c.name, count(*) as zones, group_concat(z.zone, ', ') as zone_names\n"
               "from zone_countries z join countries c on c.alpha_2 = z.country_code\n"
               "group by c.alpha_2 order by zones desc, c.name limit 50",
    },
    "subdivision_types_of_a_country": {
        "title": "Subdivision types of a country",
        "description": "How many subdivisions of each type a country has; give its two-letter code.",
        "sql": "select type, count(*) as subdivisions, min(name) as first_by_name\n"
               "from subdivisions where country_code = upper(:country)\n"
               "group by type order by subdivisions desc, type",
    },
}  # fmt: skip


def metadata() -> dict[str, Any]:
    """Datasette's metadata: title, sources and licences, per-table descriptions, facets, search, queries."""
    tables = {
        "countries": _table("Countries and territories of ISO 3166-1, with their name in the tz database.",
                            ISO_SOURCE, label_column="name", fts_table="countries_fts", sort="name"),
        "subdivisions": _table("Principal subdivisions of the countries (ISO 3166-2): regions, states, provinces...",
                               ISO_SOURCE, label_column="name", fts_table="subdivisions_fts",
                               facets=["type", "country_code"]),
        "historic_countries": _table("Country names removed from ISO 3166-1 since 1974 (ISO 3166-3).", ISO_SOURCE,
                                     label_column="name", facets=["withdrawal_date"]),
        "languages": _table("Individual languages, macrolanguages and special codes of ISO 639-3.", ISO_SOURCE,
                            label_column="name", fts_table="languages_fts", facets=["scope", "type"]),
        "language_scopes": _table("The scopes of ISO 639-3 codes.", ISO_SOURCE, label_column="name"),
        "language_types": _table("The types of ISO 639-3 languages.", ISO_SOURCE, label_column="name"),
        "currencies": _table("Currencies of ISO 4217.", ISO_SOURCE, label_column="name"),
        "scripts": _table("Writing systems of ISO 15924.", ISO_SOURCE, label_column="name"),
        "zones": _table("Time zones of the tz database's zone.tab, with the decimal coordinates of the principal "
                        "location and the countries zone1970.tab gives the zone.", TZ_SOURCE, label_column="name",
                        facets=["country_code"]),
        "zone_countries": _table("Which time zones are used in which country, as zone.tab and zone1970.tab list them.",
                                 TZ_SOURCE, facets=["listed_in", "country_code"]),
    }  # fmt: skip
    return {
        "title": "World reference data",
        "description": "Countries, subdivisions, languages, currencies, scripts and time zones from the ISO "
                       "standards (iso-codes, as pycountry ships it) and the IANA tz database.",
        "source": f"pycountry {PYCOUNTRY} and tzdata {TZDATA}",
        "source_url": f"https://pypi.org/project/pycountry/{PYCOUNTRY}/",
        "license": "LGPL-2.1-or-later (ISO codes); public domain (time zones)",
        "databases": {"world": {"title": "World reference data", "tables": tables, "queries": QUERIES}},
    }  # fmt: skip


def footer_without_timing(footer: str) -> str:
    """Datasette's ``_footer.html`` less its "Queries took N ms" line, which differs on every load."""
    return "".join(line for line in footer.splitlines(keepends=True) if "Queries took" not in line)


def _package_folder(venv: Path, relative: str) -> Path:
    found = sorted(venv.glob(f"lib/python*/site-packages/{relative}"))
    if not found:
        raise CapreplayError(f"no {relative} in the environment", where=venv)
    return found[0]


def ensure_datasette(cache: Path) -> Path:
    """The environment folder of Datasette and the data packages, installed under ``cache`` if needed."""
    env = ensure_env(cache / "apps" / f"datasette-{DATASETTE}", REQUIREMENTS, check="import datasette, pycountry")
    return env.bin_dir.parent


@contextmanager
def running_datasette(cache: Path, work: Path) -> Iterator[Server]:
    """Datasette serving ``work/world.db`` on 127.0.0.1 until the block ends."""
    venv = ensure_datasette(cache)
    work.mkdir(parents=True, exist_ok=True)
    database = work / "world.db"
    write_database(database, build_rows(_package_folder(venv, "pycountry/databases"),
                                        _package_folder(venv, "tzdata/zoneinfo")))  # fmt: skip
    (work / "metadata.json").write_text(json.dumps(metadata(), indent=2, ensure_ascii=False) + "\n")
    templates = work / "templates"
    templates.mkdir(exist_ok=True)
    footer = _package_folder(venv, "datasette/templates/_footer.html").read_text()
    (templates / "_footer.html").write_text(footer_without_timing(footer))
    datasette = str(venv / "bin" / "datasette")
    inspect = work / "inspect.json"
    subprocess.run([datasette, "inspect", str(database), "--inspect-file", str(inspect)], check=True,
                   capture_output=True, timeout=120)  # fmt: skip

    def command(port: int) -> list[str]:
        return [
            datasette, "serve", "-i", str(database), "--inspect-file", str(inspect), "--host", "127.0.0.1",
            "--port", str(port), "--metadata", str(work / "metadata.json"), "--template-dir", str(templates),
            "--setting", "default_page_size", str(PAGE_SIZE), "--setting", "suggest_facets", "off",
            "--setting", "facet_time_limit_ms", "5000", "--setting", "sql_time_limit_ms", "5000",
        ]  # fmt: skip

    env = {"DATASETTE_SECRET": "capreplay-benchmark-data"}  # a fixed secret: no random one per start
    with running_server(command, ready_path="/-/versions.json", log=work / "datasette.log", cwd=work, env=env) as s:
        yield s


APP = Application(
    name="data",
    title="Datasette",
    kind="data",
    version=DATASETTE,
    source=f"PyPI datasette=={DATASETTE}",
    licence="Apache-2.0",
    data=f"ISO 3166-1/2/3, ISO 639-3, ISO 4217 and ISO 15924 from PyPI pycountry=={PYCOUNTRY} (iso-codes JSON, "
    f"LGPL-2.1-or-later); time zones from PyPI tzdata=={TZDATA} (tz database 2026f, public domain)",
    start=running_datasette,
)
