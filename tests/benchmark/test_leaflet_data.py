"""The map's data: zone1970.tab rows, ISO 6709 positions, iso-codes entries and TopoJSON bounds, joined."""

from __future__ import annotations

from datetime import date

from capreplay.benchmark.apps.leaflet_data import (
    IsoCountry,
    Shape,
    Zone,
    country_json,
    fit_view,
    iso6709,
    join_countries,
    parse_iso3166,
    parse_zone1970,
    table_rows,
    topology_shapes,
    view_hash,
    zones_geojson,
)

# Rows of zone1970.tab in tzdata 2026.6 (IANA 2026f), its tab-separated layout kept.
ZONE1970 = (
    "# tzdb timezone descriptions, for users who do not care about old timestamps\n"
    "#     for the row with countries CH,DE,LI and name Europe/Zurich\n"
    "CH,DE,LI\t+4723+00832\tEurope/Zurich\tBüsingen\n"
    "AQ\t-720041+0023206\tAntarctica/Troll\tTroll\n"
    "US\t+404251-0740023\tAmerica/New_York\tEastern (most areas)\n"
    "AU\t-3352+15113\tAustralia/Sydney\tNew South Wales (most areas)\n"
    "\n"
)

# Entries of iso-codes' iso3166-1.json as pycountry 26.2.16 bundles it.
ISO = {
    "3166-1": [
        {"alpha_2": "LI", "alpha_3": "LIE", "flag": "🇱🇮", "name": "Liechtenstein", "numeric": "438",
         "official_name": "Principality of Liechtenstein"},
        {"alpha_2": "AU", "alpha_3": "AUS", "flag": "🇦🇺", "name": "Australia", "numeric": "036"},
    ]
}  # fmt: skip


def test_iso6709_reads_minutes_and_seconds() -> None:
    assert iso6709("+4723+00832") == (47.3833, 8.5333)
    assert iso6709("-720041+0023206") == (-72.0114, 2.535)
    assert iso6709("+404251-0740023") == (40.7142, -74.0064)


def test_zone1970_rows_skip_comments_and_keep_every_country() -> None:
    zones = parse_zone1970(ZONE1970)
    assert [z.name for z in zones] == ["Europe/Zurich", "Antarctica/Troll", "America/New_York", "Australia/Sydney"]
    assert zones[0] == Zone("Europe/Zurich", ("CH", "DE", "LI"), 47.3833, 8.5333, "Büsingen")
    collection = zones_geojson(zones[:1], {"Europe/Zurich": 60}, date(2026, 1, 15))
    point = collection["features"][0]
    assert point["geometry"] == {"type": "Point", "coordinates": [8.5333, 47.3833]}
    assert point["properties"]["countries"] == ["CH", "DE", "LI"]
    assert point["properties"]["offset"] == 60
    assert collection["offset_day"] == "2026-01-15"


def test_iso3166_by_numeric_code_with_official_name_when_there_is_one() -> None:
    iso = parse_iso3166(ISO)
    assert iso["438"] == IsoCountry("Liechtenstein", "Principality of Liechtenstein", "LI", "LIE", "438")
    assert iso["036"].official_name == ""


def test_topology_bounds_of_the_largest_polygon_unwrapped_across_the_antimeridian() -> None:
    topology = {
        "type": "Topology",
        "transform": {"scale": [1, 1], "translate": [-180, -90]},
        # arc 0: a 2x2 square at lon 0..2, lat 0..2; arc 1: a 4x2 box from 178 to -178 (182) across 180
        "arcs": [[[180, 90], [2, 0], [0, 2], [-2, 0], [0, -2]],
                 [[358, 89], [-356, 0], [0, 2], [356, 0], [0, -2]]],
        "objects": {"countries": {"type": "GeometryCollection", "geometries": [
            {"type": "MultiPolygon", "arcs": [[[0]], [[~1]]], "id": "242", "properties": {"name": "Fiji"}},
            {"type": "Polygon", "arcs": [[0]], "properties": {"name": "Somewhere"}},
        ]}},
    }  # fmt: skip
    fiji, other = topology_shapes(topology)
    assert fiji == Shape("242", "Fiji", (178.0, -1.0, 182.0, 1.0), 8.0)
    assert other == Shape(None, "Somewhere", (0.0, 0.0, 2.0, 2.0), 4.0)
    assert fit_view(fiji.bounds)[1:] == (0.0, 180.0)


def test_fit_view_picks_the_deepest_whole_zoom_that_holds_the_bounds() -> None:
    # 20 degrees square at the equator: 60x wider and 46x taller than a 256 px world fits in 860x664 px
    assert fit_view((-10, -10, 10, 10)) == (5, 0.0, 0.0)


def test_join_names_each_area_and_lists_the_zones_that_cover_it() -> None:
    shapes = [
        Shape("438", "Liechtenstein", (9.47, 47.05, 9.64, 47.27), 0.02),
        Shape("036", "Ashmore and Cartier Is.", (123.53, -12.44, 123.6, -12.42), 0.001),
        Shape("036", "Australia", (113.3, -39.1, 153.6, -10.7), 680.0),
        Shape(None, "Kosovo", (20.0, 41.8, 21.8, 43.3), 1.2),
    ]
    countries = join_countries(shapes, parse_iso3166(ISO), parse_zone1970(ZONE1970))
    assert [(c.key, c.name, c.zones) for c in countries] == [
        ("Ashmore_and_Cartier_Is.", "Ashmore and Cartier Is.", ("Australia/Sydney",)),
        ("AUS", "Australia", ("Australia/Sydney",)),
        ("Kosovo", "Kosovo", ()),
        ("LIE", "Liechtenstein", ("Europe/Zurich",)),
    ]
    liechtenstein = countries[3]
    assert view_hash(liechtenstein) == "#8/47.16/9.55/LIE"
    assert country_json(liechtenstein)["alpha2"] == "LI"
    assert country_json(countries[2])["numeric"] == ""
    row = table_rows([liechtenstein])
    assert '<a href="index.html#8/47.16/9.55/LIE">Liechtenstein</a>' in row
    assert '<td class="num" data-value="1">1</td>' in row
