"""The flag shop's catalogue from excerpts of the real files: pycountry 26.2.16's iso-codes JSON, tzdata 2026.6."""

from __future__ import annotations

import json
from decimal import Decimal

from capreplay.benchmark.apps.flag_catalogue import (
    NO_ZONE,
    category_descriptions,
    description,
    flag_products,
    import_files,
    parse_zone_tab,
    region_of,
)

ZONE_TAB = (
    "# tzdb timezone descriptions (deprecated version)\n"
    "#\n"
    "AD\t+4230+00131\tEurope/Andorra\n"
    "ES\t+4024-00341\tEurope/Madrid\tSpain (mainland)\n"
    "ES\t+3553-00519\tAfrica/Ceuta\tCeuta, Melilla\n"
    "ES\t+2806-01524\tAtlantic/Canary\tCanary Islands\n"
    "IS\t+6409-02151\tAtlantic/Reykjavik\n"
)
ISO3166_1 = {
    "3166-1": [  # in the file's order (by alpha-3), not by alpha-2
        {"alpha_2": "AD", "alpha_3": "AND", "flag": "🇦🇩", "name": "Andorra", "numeric": "020",
         "official_name": "Principality of Andorra"},
        {"alpha_2": "BV", "alpha_3": "BVT", "flag": "🇧🇻", "name": "Bouvet Island", "numeric": "074"},
        {"alpha_2": "ES", "alpha_3": "ESP", "flag": "🇪🇸", "name": "Spain", "numeric": "724",
         "official_name": "Kingdom of Spain"},
        {"alpha_2": "IS", "alpha_3": "ISL", "flag": "🇮🇸", "name": "Iceland", "numeric": "352",
         "official_name": "Republic of Iceland"},
        {"alpha_2": "KR", "alpha_3": "KOR", "common_name": "South Korea", "flag": "🇰🇷", "name": "Korea, Republic of",
         "numeric": "410"},
    ]
}  # fmt: skip
ISO3166_2 = {
    "3166-2": [
        {"code": "AD-02", "name": "Canillo", "type": "Parish"},
        {"code": "AD-03", "name": "Encamp", "type": "Parish"},
        {"code": "AD-04", "name": "La Massana", "type": "Parish"},
        {"code": "AD-05", "name": "Ordino", "type": "Parish"},
        {"code": "AD-06", "name": "Sant Julià de Lòria", "type": "Parish"},
        {"code": "AD-07", "name": "Andorra la Vella", "type": "Parish"},
        {"code": "AD-08", "name": "Escaldes-Engordany", "type": "Parish"},
        {"code": "ES-AN", "name": "Andalucía", "type": "Autonomous community"},
        {"code": "ES-CE", "name": "Ceuta", "type": "Autonomous city in North Africa"},
        {"code": "ES-ML", "name": "Melilla", "type": "Autonomous city in North Africa"},
    ]
}


def test_zone_tab_keeps_each_country_s_zones_in_file_order() -> None:
    zones = parse_zone_tab(ZONE_TAB)
    assert zones["ES"] == ["Europe/Madrid", "Africa/Ceuta", "Atlantic/Canary"]
    assert zones["IS"] == ["Atlantic/Reykjavik"]
    assert "#" not in zones


def test_region_is_the_area_of_the_first_zone() -> None:
    assert region_of(["Europe/Madrid", "Africa/Ceuta", "Atlantic/Canary"]) == "Europe"
    assert region_of(["America/Argentina/Buenos_Aires"]) == "America"
    assert region_of([]) == NO_ZONE


def test_products_sorted_by_alpha_2_with_derived_price_and_stock() -> None:
    products = flag_products(ISO3166_1, ISO3166_2, ZONE_TAB)
    assert [p.alpha_2 for p in products] == ["AD", "BV", "ES", "IS", "KR"]
    andorra, bouvet, spain, iceland, korea = products
    assert (andorra.region, andorra.time_zone, andorra.subdivisions) == ("Europe", "Europe/Andorra", 7)
    assert andorra.price == Decimal("4.70")  # 4.00 + 7 x 0.10
    assert andorra.stock == 20  # 20 mod 25
    assert (bouvet.region, bouvet.time_zone, bouvet.price, bouvet.stock) == (NO_ZONE, None, Decimal("4.00"), 24)
    assert spain.subdivision_types == (("Autonomous city in North Africa", 2), ("Autonomous community", 1))
    assert (spain.price, spain.stock) == (Decimal("4.30"), 24)  # 724 mod 25
    assert (iceland.region, iceland.stock) == ("Atlantic", 2)  # 352 mod 25
    assert (korea.title, korea.iso_name, korea.official_name) == ("South Korea", "Korea, Republic of", None)
    assert korea.stock == 10
    assert spain.upc == "FLAG-ESP"


def test_description_states_the_data_and_the_formulas() -> None:
    andorra = flag_products(ISO3166_1, ISO3166_2, ZONE_TAB)[0]
    text = description(andorra, "7.5.0")
    assert "The flag of Principality of Andorra, drawn from the 4:3 SVG of flag-icons 7.5.0." in text
    assert "alpha-2 AD, alpha-3 AND, numeric 020" in text
    assert "the area of Europe/Andorra" in text
    assert "ISO 3166-2 lists 7 subdivisions of Andorra (Parish: 7)." in text
    assert "Price: £4.00 plus £0.10 for each of its 7 subdivisions = £4.70." in text
    assert "Stock: the numeric code 020 modulo 25 = 20 flags." in text


def test_import_files_are_json_records_and_category_descriptions() -> None:
    records, categories = import_files(json.dumps(ISO3166_1), json.dumps(ISO3166_2), ZONE_TAB, "7.5.0")
    rows = json.loads(records)
    assert rows[2]["title"] == "Spain"
    assert rows[2]["category"] == "Europe"
    assert rows[2]["price"] == "4.30"
    assert rows[2]["flag"] == "es"
    assert rows[2]["attributes"]["official_name"] == "Kingdom of Spain"
    assert rows[1]["attributes"]["time_zone"] is None
    described = json.loads(categories)
    assert sorted(described) == ["Atlantic", "Europe", NO_ZONE]
    assert described["Europe"].startswith("<p>Flags of the 2 countries whose region is Europe")
    products = flag_products(ISO3166_1, ISO3166_2, ZONE_TAB)
    assert category_descriptions(products) == described
