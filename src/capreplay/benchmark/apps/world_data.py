"""World reference data read from the files two PyPI packages ship: ISO codes from pycountry, time zones from tzdata.

pycountry bundles the iso-codes project's JSON databases (``pycountry/databases/iso3166-1.json`` and its
siblings: ``{"3166-1": [{"alpha_2": "FR", ...}, ...]}``); tzdata bundles the tz database's tables
(``tzdata/zoneinfo/zone.tab``, ``zone1970.tab``, ``iso3166.tab``: tab-separated, ``#`` comments). Each
function here turns the text of one file into rows (a dict per row, keyed by column, sorted by primary key),
with no I/O, so the same packages always give the same rows. The only derived values are the zones' decimal
coordinates: sign x (degrees + minutes / 60 + seconds / 3600) of the ISO 6709 text, rounded to 4 decimals.
"""

from __future__ import annotations

import json
import re
from typing import Any

Row = dict[str, Any]
"""One row of a table: column name -> value (str, float, int or None)."""

LANGUAGE_SCOPES = {"I": "Individual", "M": "Macrolanguage", "S": "Special"}
"""ISO 639-3 scope codes and their names (the standard's own words)."""
LANGUAGE_TYPES = {"A": "Ancient", "C": "Constructed", "E": "Extinct", "H": "Historical", "L": "Living",
                  "S": "Special"}  # fmt: skip
"""ISO 639-3 language type codes and their names."""

_ISO6709 = re.compile(r"^([+-])(\d{2})(\d{2})(\d{2})?([+-])(\d{3})(\d{2})(\d{2})?$")


def _entries(text: str, key: str) -> list[dict[str, str]]:
    entries: list[dict[str, str]] = json.loads(text)[key]
    return entries


def _pick(entry: dict[str, str], columns: list[str]) -> Row:
    return {column: entry.get(column) for column in columns}


def countries(iso3166_1: str, tz_names: dict[str, str]) -> list[Row]:
    """ISO 3166-1 countries from ``iso3166-1.json``, each with its name in the tz database (``iso3166.tab``)."""
    columns = ["alpha_2", "alpha_3", "numeric", "name", "official_name", "common_name", "flag"]
    rows = [_pick(e, columns) | {"tz_name": tz_names.get(e["alpha_2"])} for e in _entries(iso3166_1, "3166-1")]
    return sorted(rows, key=lambda r: str(r["alpha_2"]))


def subdivisions(iso3166_2: str) -> list[Row]:
    """ISO 3166-2 subdivisions; the country is the code's prefix (``FR-IDF`` -> ``FR``), the parent a code or None."""
    rows = [
        {"code": e["code"], "name": e["name"], "type": e["type"], "country_code": e["code"].split("-", 1)[0],
         "parent_code": e.get("parent")}
        for e in _entries(iso3166_2, "3166-2")
    ]  # fmt: skip
    return sorted(rows, key=lambda r: str(r["code"]))


def historic_countries(iso3166_3: str) -> list[Row]:
    """ISO 3166-3 formerly used country names, with their withdrawal date."""
    columns = ["alpha_4", "alpha_3", "alpha_2", "numeric", "name", "withdrawal_date", "comment"]
    return sorted((_pick(e, columns) for e in _entries(iso3166_3, "3166-3")), key=lambda r: str(r["alpha_4"]))


def languages(iso639_3: str) -> list[Row]:
    """ISO 639-3 languages; ``scope`` and ``type`` keep the standard's one-letter codes (see the lookup tables)."""
    columns = ["alpha_3", "alpha_2", "bibliographic", "name", "inverted_name", "common_name", "scope", "type"]
    return sorted((_pick(e, columns) for e in _entries(iso639_3, "639-3")), key=lambda r: str(r["alpha_3"]))


def currencies(iso4217: str) -> list[Row]:
    """ISO 4217 currencies."""
    return sorted((_pick(e, ["alpha_3", "numeric", "name"]) for e in _entries(iso4217, "4217")),
                  key=lambda r: str(r["alpha_3"]))  # fmt: skip


def scripts(iso15924: str) -> list[Row]:
    """ISO 15924 writing systems."""
    return sorted((_pick(e, ["alpha_4", "numeric", "name"]) for e in _entries(iso15924, "15924")),
                  key=lambda r: str(r["alpha_4"]))  # fmt: skip


def lookup(names: dict[str, str]) -> list[Row]:
    """A code -> name lookup table (the language scopes or types) as rows."""
    return [{"code": code, "name": name} for code, name in sorted(names.items())]


def _tab_lines(text: str) -> list[list[str]]:
    return [line.split("\t") for line in text.splitlines() if line.strip() and not line.startswith("#")]


def tz_country_names(iso3166_tab: str) -> dict[str, str]:
    """``iso3166.tab``: country code -> the name the tz database gives it (``GB`` -> ``Britain (UK)``)."""
    return {code: name for code, name in _tab_lines(iso3166_tab)}


def iso6709(text: str) -> tuple[float, float]:
    """``+4852+00220`` (or with seconds, ``+404251-0740023``) -> (latitude, longitude) in decimal degrees."""
    match = _ISO6709.match(text)
    if match is None:
        raise ValueError(f"not an ISO 6709 coordinate: {text!r}")
    lat_sign, lat_d, lat_m, lat_s, lon_sign, lon_d, lon_m, lon_s = match.groups()

    def degrees(sign: str, d: str, m: str, s: str | None) -> float:
        value = int(d) + int(m) / 60 + int(s or 0) / 3600
        return round(-value if sign == "-" else value, 4)

    return degrees(lat_sign, lat_d, lat_m, lat_s), degrees(lon_sign, lon_d, lon_m, lon_s)


def zones(zone_tab: str, zone1970_tab: str) -> list[Row]:
    """Every zone of ``zone.tab`` (one country each), with the countries ``zone1970.tab`` gives it (None if absent)."""
    since_1970 = {fields[2]: fields[0] for fields in _tab_lines(zone1970_tab)}
    rows = []
    for fields in _tab_lines(zone_tab):
        code, coordinates, name = fields[:3]
        latitude, longitude = iso6709(coordinates)
        rows.append({"name": name, "country_code": code, "latitude": latitude, "longitude": longitude,
                     "comments": fields[3] if len(fields) > 3 else None,
                     "zone1970_countries": since_1970.get(name)})  # fmt: skip
    return sorted(rows, key=lambda r: str(r["name"]))


def zone_countries(zone_tab: str, zone1970_tab: str) -> list[Row]:
    """Each (zone, country) pair either table gives, and which of the two lists it (``zone.tab, zone1970.tab``)."""
    listed: dict[tuple[str, str], list[str]] = {}
    for source, text in (("zone.tab", zone_tab), ("zone1970.tab", zone1970_tab)):
        for fields in _tab_lines(text):
            for code in fields[0].split(","):
                listed.setdefault((fields[2], code), []).append(source)
    return [{"zone": zone, "country_code": code, "listed_in": ", ".join(sources)}
            for (zone, code), sources in sorted(listed.items())]  # fmt: skip
