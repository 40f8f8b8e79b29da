"""A Leaflet map of the world's countries and time zones, served as static files (the benchmark's ``maps``).

The page (``index.html``, ``app.js``, ``app.css``, written for the benchmark and kept beside this module in
``leaflet_site/``) draws with Leaflet 1.9.4 (npm ``leaflet``):

- the countries as vector polygons on a plain background, Natural Earth's 1:50m admin 0 shapes from npm
  ``world-atlas@2.0.2`` (TopoJSON, ISO 3166-1 numeric ids and short names), decoded in the page by npm
  ``topojson-client@3.1.0`` and shaded by their number of time zones;
- the time zones of the IANA tz database (``zone1970.tab`` of PyPI ``tzdata==2026.6``, IANA 2026f) as points at
  their principal locations, converted when the site is built into ``data/zones.geojson``;
- ISO 3166-1 names and alpha-2, alpha-3 and numeric codes from the iso-codes JSON that PyPI ``pycountry==26.2.16``
  bundles, joined to the shapes by numeric id into ``data/countries.json`` (:mod:`leaflet_data` does the joins);
- each zone's UTC offset on a fixed day (:mod:`leaflet_clock`), read with Python's ``zoneinfo`` from the compiled
  zone files of the same ``tzdata``, for two sliders of npm ``nouislider@15.8.1`` in the side panel: a time of that
  day in UTC, which the zone panel turns into local time, and a range of offsets, which keeps only the zones in it.

Zoom buttons, dragging, a layer control, a side panel for a clicked country or zone, a search by name or code,
and the URL hash ``#zoom/lat/lng[/ALPHA3][&time=HH:MM][&utc=+HH:MM,+HH:MM]`` as the map's state (a slider left
at its default writes nothing, so the hashes written before the sliders mean what they meant); ``countries.html``
lists every area with its codes and number of zones, sortable by column (``?sort=zones&order=desc``), each
linking to its map state.

Offline: no tile server (there is no base map but the countries themselves), no web fonts, no CDN: Leaflet,
topojson-client and noUiSlider are copied from their npm packages; Leaflet's attribution links nowhere. Python's own
``http.server`` (of the data environment's interpreter) serves the folder on 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from string import Template
from zoneinfo import ZoneInfo

from capreplay.benchmark.application import Application
from capreplay.benchmark.apps.leaflet_clock import CLOCK_DAY, day_offsets
from capreplay.benchmark.apps.leaflet_data import (
    country_json,
    join_countries,
    parse_iso3166,
    parse_zone1970,
    table_rows,
    topology_shapes,
    zones_geojson,
)
from capreplay.errors import CapreplayError
from capreplay.testing.apps.env import ensure_env
from capreplay.testing.apps.npm_cdn import unpack_npm
from capreplay.testing.apps.process import Server, running_static
from capreplay.util.files import locked

LEAFLET = "leaflet@1.9.4"
WORLD_ATLAS = "world-atlas@2.0.2"
TOPOJSON_CLIENT = "topojson-client@3.1.0"
NOUISLIDER = "nouislider@15.8.1"
REQUIREMENTS = ["tzdata==2026.6", "pycountry==26.2.16"]
SITE = Path(__file__).with_name("leaflet_site")
"""The page's own files: index.html, countries.html (a template), app.js, clock.js, list.js, app.css."""
FIXED_MTIME = 499137600
"""1985-10-26, the date npm stamps on every file of a tarball: every served file carries it, so the pages' caches
keep the data between pages of a capture and two builds serve the same Last-Modified."""


@dataclass(frozen=True)
class Sources:
    """The installed packages the site is built from."""

    leaflet: Path
    world_atlas: Path
    topojson_client: Path
    nouislider: Path
    site_packages: Path
    python: Path


def ensure_sources(cache: Path) -> Sources:
    """The npm packages unpacked under ``cache/npm`` and the data environment under ``cache/apps`` (once)."""
    store = cache / "npm"
    store.mkdir(parents=True, exist_ok=True)
    with locked(store / ".lock"):
        leaflet, atlas, client, slider = (unpack_npm(spec, store)
                                          for spec in (LEAFLET, WORLD_ATLAS, TOPOJSON_CLIENT, NOUISLIDER))  # fmt: skip
    bin_dir = ensure_env(cache / "apps" / "maps-data", REQUIREMENTS, check="import tzdata, pycountry").bin_dir
    found = sorted(bin_dir.parent.glob("lib/python3*/site-packages"))
    if not found:
        raise CapreplayError("the data environment has no site-packages folder", where=bin_dir.parent)
    return Sources(leaflet, atlas, client, slider, found[0], bin_dir / "python")


def build_site(sources: Sources, site: Path) -> None:
    """Write the whole static site into ``site``: the page's files, the libraries and the data built for it."""
    zoneinfo = sources.site_packages / "tzdata" / "zoneinfo"
    topology_file = sources.world_atlas / "countries-50m.json"
    zones = parse_zone1970((zoneinfo / "zone1970.tab").read_text(encoding="utf-8"))
    iso = parse_iso3166(json.loads((sources.site_packages / "pycountry" / "databases" / "iso3166-1.json").read_bytes()))
    countries = join_countries(topology_shapes(json.loads(topology_file.read_bytes())), iso, zones)
    tz_version = _tz_version((zoneinfo / "tzdata.zi").read_text(encoding="utf-8"))
    attribution = (f"Countries: Natural Earth 1:50m ({WORLD_ATLAS}) · Time zones: IANA tz {tz_version} "
                   f"({REQUIREMENTS[0]}) · Codes: ISO 3166-1 from iso-codes ({REQUIREMENTS[1]})")  # fmt: skip
    coded = sum(1 for c in countries if c.iso is not None)
    summary = (f"{len(countries)} areas of the Natural Earth map, {coded} of them with ISO 3166-1 codes; "
               f"{len(zones)} time zones of the IANA tz database {tz_version}.")  # fmt: skip

    shutil.rmtree(site, ignore_errors=True)
    (site / "data").mkdir(parents=True)
    for name in ("index.html", "app.js", "clock.js", "list.js", "app.css"):
        shutil.copyfile(SITE / name, site / name)
    page = Template((SITE / "countries.html").read_text(encoding="utf-8"))
    (site / "countries.html").write_text(
        page.substitute(rows=table_rows(countries), summary=summary, sources=attribution), encoding="utf-8"
    )
    shutil.copytree(sources.leaflet / "dist", site / "vendor" / "leaflet",
                    ignore=shutil.ignore_patterns("*.map", "*-src*"))  # fmt: skip
    (site / "vendor" / "topojson-client").mkdir(parents=True)
    shutil.copyfile(sources.topojson_client / "dist" / "topojson-client.min.js",
                    site / "vendor" / "topojson-client" / "topojson-client.min.js")  # fmt: skip
    (site / "vendor" / "nouislider").mkdir(parents=True)
    for name in ("nouislider.min.js", "nouislider.min.css"):
        shutil.copyfile(sources.nouislider / "dist" / name, site / "vendor" / "nouislider" / name)
    shutil.copyfile(topology_file, site / "data" / "countries-50m.json")
    _write_json(site / "data" / "countries.json",
                {"attribution": attribution, "countries": [country_json(c) for c in countries],
                 "iso_names": {c.alpha2: c.name for c in sorted(iso.values(), key=lambda c: c.alpha2)}})  # fmt: skip
    offsets = day_offsets(_zone_files(zoneinfo, (zone.name for zone in zones)))
    _write_json(site / "data" / "zones.geojson", zones_geojson(zones, offsets, CLOCK_DAY))
    for path in site.rglob("*"):
        os.utime(path, (FIXED_MTIME, FIXED_MTIME))


def _zone_files(zoneinfo: Path, names: Iterable[str]) -> dict[str, ZoneInfo]:
    """The zones read from the compiled files of PyPI ``tzdata`` (not the machine's own tz database)."""
    zones = {}
    for name in names:
        with (zoneinfo / name).open("rb") as file:
            zones[name] = ZoneInfo.from_file(file, key=name)
    return zones


def _tz_version(tzdata_zi: str) -> str:
    """The IANA release named on ``tzdata.zi``'s first line (``# version 2026f``)."""
    first = tzdata_zi.split("\n", 1)[0]
    return first.removeprefix("# version ").strip()


def _write_json(path: Path, data: object) -> None:
    path.write_text(json.dumps(data, ensure_ascii=False, separators=(",", ":")), encoding="utf-8")


@contextmanager
def running_maps(cache: Path, work: Path) -> Iterator[Server]:
    """The map site built in ``work/site`` and served by ``http.server`` on 127.0.0.1 until the block ends."""
    sources = ensure_sources(cache)
    site = work / "site"
    build_site(sources, site)

    with running_static(site, log=work / "http.log", python=str(sources.python)) as server:
        yield server


APP = Application(
    name="maps",
    title="Leaflet",
    kind="map",
    version="1.9.4",
    source=f"npm {LEAFLET}, {TOPOJSON_CLIENT}, {NOUISLIDER}; served by Python's http.server",
    licence="BSD-2-Clause",
    data=(
        f"Natural Earth 1:50m countries (public domain) from npm {WORLD_ATLAS}; IANA time zones (zone1970.tab, "
        f"public domain) from PyPI {REQUIREMENTS[0]}; ISO 3166-1 codes from iso-codes (LGPL-2.1) bundled in PyPI "
        f"{REQUIREMENTS[1]}"
    ),
    start=running_maps,
    static=True,  # countries.html sorts itself by its query; the map reads its hash
)
