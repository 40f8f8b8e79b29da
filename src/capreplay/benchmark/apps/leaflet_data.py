"""The map's data from packaged files: time zones, ISO 3166 codes and Natural Earth countries, joined. Pure.

- ``zone1970.tab`` of the IANA time zone database (as PyPI's ``tzdata`` ships it): one row per zone, with the
  ISO 3166 alpha-2 codes of the countries it covers, its principal location in ISO 6709 (``+4852+00220``,
  degrees and minutes, or ``-720041+0023206`` with seconds) and an optional comment;
- ``iso3166-1.json`` of Debian's iso-codes (as PyPI's ``pycountry`` bundles it): name, official name, alpha-2,
  alpha-3 and numeric code of every country;
- a TopoJSON topology of world-atlas (Natural Earth admin 0), whose geometries carry the ISO 3166-1 numeric id
  (absent for a few disputed areas) and the country's short name.

Each map feature becomes a :class:`Country`: the two joined by numeric id, its time zones, and the view (zoom and
centre) that fits its largest polygon in the map's box, which the list's links and the search share.
"""

from __future__ import annotations

import html
import itertools
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

MAP_WIDTH = 940
"""Pixels of the map's box at capreplay's 1280x800 viewport (less the side panel), for :func:`fit_view`."""
MAP_HEIGHT = 744
"""Pixels of the map's box below the page's header."""
MAX_ZOOM = 8
"""The deepest zoom the map allows (and a small country's view is limited to)."""

_ISO6709 = re.compile(r"^(?P<lat>[+-]\d{4}(?:\d{2})?)(?P<lon>[+-]\d{5}(?:\d{2})?)$")


@dataclass(frozen=True)
class Zone:
    """One time zone of ``zone1970.tab``."""

    name: str
    codes: tuple[str, ...]
    """ISO 3166 alpha-2 codes of the countries it covers, in the file's order."""
    lat: float
    lon: float
    comment: str


@dataclass(frozen=True)
class IsoCountry:
    """One country of ISO 3166-1."""

    name: str
    official_name: str
    alpha2: str
    alpha3: str
    numeric: str


@dataclass(frozen=True)
class Shape:
    """One geometry of the topology: its id, its name and the bounds of its largest polygon."""

    id: str | None
    name: str
    bounds: tuple[float, float, float, float]
    """West, south, east, north of the polygon with the largest area (a country's main land)."""
    area: float
    """That polygon's area in square degrees (to tell a country from a territory sharing its id)."""


@dataclass(frozen=True)
class Country:
    """A map feature as the page shows it."""

    key: str
    """What the URL's hash names it by: its alpha-3 code, or its name with ``_`` for spaces where it has none."""
    name: str
    """Natural Earth's short name (the map's label)."""
    iso: IsoCountry | None
    zones: tuple[str, ...]
    view: tuple[int, float, float]
    """Zoom, latitude and longitude that show it."""


def iso6709(text: str) -> tuple[float, float]:
    """Latitude and longitude in decimal degrees (rounded to 4 places) of an ISO 6709 ``±DDMM[SS]±DDDMM[SS]``."""
    match = _ISO6709.match(text)
    if match is None:
        raise ValueError(f"not an ISO 6709 position: {text!r}")
    return _degrees(match["lat"], 2), _degrees(match["lon"], 3)


def _degrees(part: str, width: int) -> float:
    sign = -1 if part[0] == "-" else 1
    digits = part[1:]
    whole = int(digits[:width]) + int(digits[width : width + 2]) / 60 + int(digits[width + 2 :] or 0) / 3600
    return round(sign * whole, 4)


def parse_zone1970(text: str) -> list[Zone]:
    """Every zone of a ``zone1970.tab`` (or ``zone.tab``) file, in the file's order."""
    zones = []
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.split("\t")
        lat, lon = iso6709(fields[1])
        zones.append(Zone(fields[2], tuple(fields[0].split(",")), lat, lon, fields[3] if len(fields) > 3 else ""))
    return zones


def parse_iso3166(document: dict[str, Any]) -> dict[str, IsoCountry]:
    """The countries of iso-codes' ``iso3166-1.json`` by numeric code (``"250"``)."""
    return {
        entry["numeric"]: IsoCountry(
            name=entry["name"],
            official_name=entry.get("official_name", ""),
            alpha2=entry["alpha_2"],
            alpha3=entry["alpha_3"],
            numeric=entry["numeric"],
        )
        for entry in document["3166-1"]
    }


def topology_shapes(topology: dict[str, Any], object_name: str = "countries") -> list[Shape]:
    """Every geometry of ``topology``'s object, decoded only as far as its largest polygon's bounds."""
    arcs = _decode_arcs(topology)
    shapes = []
    for geometry in topology["objects"][object_name]["geometries"]:
        polygons = {"Polygon": [geometry.get("arcs", [])], "MultiPolygon": geometry.get("arcs", [])}.get(
            geometry["type"], []
        )
        rings = [_outline(polygon, arcs) for polygon in polygons if polygon]
        if not rings:
            continue
        largest = max(rings, key=_area)
        lons, lats = [p[0] for p in largest], [p[1] for p in largest]
        if _round_pole(largest):
            lons = [-180.0, 180.0]
        shapes.append(Shape(geometry.get("id"), geometry["properties"]["name"],
                            (min(lons), min(lats), max(lons), max(lats)), _area(largest)))  # fmt: skip
    return shapes


def _decode_arcs(topology: dict[str, Any]) -> list[list[tuple[float, float]]]:
    """The arcs in degrees: TopoJSON stores them quantized and delta-encoded."""
    (sx, sy), (tx, ty) = topology["transform"]["scale"], topology["transform"]["translate"]
    decoded = []
    for arc in topology["arcs"]:
        x = y = 0
        points = []
        for dx, dy in arc:
            x, y = x + dx, y + dy
            points.append((x * sx + tx, y * sy + ty))
        decoded.append(points)
    return decoded


def _ring(indices: Sequence[int], arcs: list[list[tuple[float, float]]]) -> list[tuple[float, float]]:
    """A ring's points: its arcs in order, a negative index (``~i``) meaning arc ``i`` reversed."""
    points: list[tuple[float, float]] = []
    for index in indices:
        arc = arcs[index] if index >= 0 else arcs[~index][::-1]
        points.extend(arc[1:] if points else arc)
    return points


def _outline(polygon: Sequence[Sequence[int]], arcs: list[list[tuple[float, float]]]) -> list[tuple[float, float]]:
    """The points that bound a polygon: its outer ring, unwrapped; for Antarctica, whose outer ring is cut along
    the pole and whose coast comes as a second ring, every ring as it is."""
    outer = _ring(polygon[0], arcs)
    if _round_pole(outer):
        return [point for indices in polygon for point in _ring(indices, arcs)]
    return _unwrap(outer)


def _unwrap(ring: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """The ring with no step across the antimeridian: Natural Earth's Russia and Fiji jump from 180 to -180
    and back, which a flat map draws as a band around the world; each point is moved by whole turns to stay
    within 180 degrees of the one before (the page does the same)."""
    out = [ring[0]]
    for lon, lat in ring[1:]:
        lon += 360 * round((out[-1][0] - lon) / 360)
        out.append((lon, lat))
    return out


def _round_pole(ring: Sequence[tuple[float, float]]) -> bool:
    return min(lat for _, lat in ring) < -85


def _area(ring: Sequence[tuple[float, float]]) -> float:
    """Square degrees inside the ring; a ring round the pole counts all of its band of latitudes."""
    if _round_pole(ring):
        return 360 * (max(lat for _, lat in ring) + 90)
    return abs(sum(x0 * y1 - x1 * y0 for (x0, y0), (x1, y1) in itertools.pairwise(ring))) / 2


def fit_view(bounds: tuple[float, float, float, float], width: int = MAP_WIDTH, height: int = MAP_HEIGHT,
             padding: int = 40) -> tuple[int, float, float]:  # fmt: skip
    """The whole zoom, latitude and longitude (2 places) at which Web Mercator shows ``bounds`` in the box."""
    west, south, east, north = bounds
    x0, x1 = (west + 180) / 360, (east + 180) / 360
    y0, y1 = _mercator_y(north), _mercator_y(south)
    fits = [(size - 2 * padding) / (256 * span) for size, span in ((width, x1 - x0), (height, y1 - y0)) if span > 0]
    zoom = math.floor(math.log2(min(fits))) if fits else MAX_ZOOM
    lat = math.degrees(math.atan(math.sinh(math.pi * (1 - (y0 + y1)))))
    lng = (west + east) / 2
    return max(1, min(MAX_ZOOM, zoom)), round(lat, 2), round(lng - 360 * round(lng / 360), 2)


def _mercator_y(lat: float) -> float:
    lat = max(-85.0511, min(85.0511, lat))
    return (1 - math.log(math.tan(math.pi / 4 + math.radians(lat) / 2)) / math.pi) / 2


def zones_by_country(zones: Iterable[Zone]) -> dict[str, list[str]]:
    """Alpha-2 code -> the names of the zones that cover it, in the file's order."""
    found: dict[str, list[str]] = {}
    for zone in zones:
        for code in zone.codes:
            found.setdefault(code, []).append(zone.name)
    return found


def join_countries(shapes: Iterable[Shape], iso: dict[str, IsoCountry], zones: Iterable[Zone]) -> list[Country]:
    """Each shape as a :class:`Country`, sorted by name.

    Where several shapes share a numeric id (Australia and the Ashmore and Cartier Islands), the largest one is
    named by the alpha-3 code and the others by their own names.
    """
    shapes = list(shapes)
    largest: dict[str, Shape] = {}
    for shape in shapes:
        if shape.id is not None and (shape.id not in largest or shape.area > largest[shape.id].area):
            largest[shape.id] = shape
    covering = zones_by_country(zones)
    countries = []
    for shape in shapes:
        record = iso.get(shape.id) if shape.id is not None else None
        primary = record is not None and largest[shape.id or ""] is shape
        countries.append(
            Country(
                key=record.alpha3 if record is not None and primary else shape.name.replace(" ", "_"),
                name=shape.name,
                iso=record,
                zones=tuple(covering.get(record.alpha2, [])) if record is not None else (),
                view=fit_view(shape.bounds),
            )
        )
    return sorted(countries, key=lambda c: (c.name.casefold(), c.key))


def country_json(country: Country) -> dict[str, Any]:
    """What the page reads of a country (``data/countries.json``)."""
    iso = country.iso
    return {
        "key": country.key,
        "name": country.name,
        "iso_name": iso.name if iso else "",
        "official_name": iso.official_name if iso else "",
        "alpha2": iso.alpha2 if iso else "",
        "alpha3": iso.alpha3 if iso else "",
        "numeric": iso.numeric if iso else "",
        "zones": list(country.zones),
        "view": list(country.view),
    }


def zones_geojson(zones: Iterable[Zone], offsets: Mapping[str, int], day: date) -> dict[str, Any]:
    """The zones as a GeoJSON FeatureCollection of points (``data/zones.geojson``), each with its UTC offset in
    minutes on ``day`` (``offsets``, by zone name), which the page's sliders use; the day is a foreign member."""
    return {
        "type": "FeatureCollection",
        "offset_day": day.isoformat(),
        "features": [
            {
                "type": "Feature",
                "geometry": {"type": "Point", "coordinates": [zone.lon, zone.lat]},
                "properties": {
                    "name": zone.name,
                    "countries": list(zone.codes),
                    "comment": zone.comment,
                    "lat": zone.lat,
                    "lon": zone.lon,
                    "offset": offsets[zone.name],
                },
            }
            for zone in zones
        ],
    }


def view_hash(country: Country) -> str:
    """The map's URL hash that shows and selects ``country``: ``#zoom/lat/lng/key``."""
    zoom, lat, lng = country.view
    return f"#{zoom}/{lat:.2f}/{lng:.2f}/{country.key}"


def table_rows(countries: Iterable[Country]) -> str:
    """The list page's table body: one row per country, its name linking to its view on the map."""
    rows = []
    for c in countries:
        iso = c.iso
        cells = [
            f'<td><a href="index.html{html.escape(view_hash(c))}">{html.escape(c.name)}</a></td>',
            f"<td>{html.escape(iso.name) if iso else ''}</td>",
            f"<td>{iso.alpha2 if iso else ''}</td>",
            f"<td>{iso.alpha3 if iso else ''}</td>",
            f'<td class="num">{iso.numeric if iso else ""}</td>',
            f'<td class="num" data-value="{len(c.zones)}">{len(c.zones)}</td>',
        ]
        rows.append(f"      <tr>{''.join(cells)}</tr>")
    return "\n".join(rows)
