"""Reading pycountry's iso-codes JSON and tzdata's tables into rows, on excerpts of the real files."""

from __future__ import annotations

import pytest

from capreplay.benchmark.apps import world_data

ISO3166_1 = """{"3166-1": [
  {"alpha_2": "FR", "alpha_3": "FRA", "flag": "\\ud83c\\uddeb\\ud83c\\uddf7", "name": "France", "numeric": "250",
   "official_name": "French Republic"},
  {"alpha_2": "AW", "alpha_3": "ABW", "flag": "\\ud83c\\udde6\\ud83c\\uddfc", "name": "Aruba", "numeric": "533"}
]}"""
ISO3166_2 = """{"3166-2": [
  {"code": "FR-75C", "name": "Paris", "parent": "FR-IDF", "type": "Metropolitan collectivity with special status"},
  {"code": "AD-02", "name": "Canillo", "type": "Parish"}
]}"""
ISO639_3 = """{"639-3": [
  {"alpha_2": "cs", "alpha_3": "ces", "bibliographic": "cze", "name": "Czech", "scope": "I", "type": "L"},
  {"alpha_3": "aaa", "name": "Ghotuo", "scope": "I", "type": "L"}
]}"""
ISO3166_TAB = "# tzdb country names\n#country-\n#code\tname of country\nGB\tBritain (UK)\nFR\tFrance\n"
ZONE_TAB = (
    "# tzdb timezone descriptions (deprecated version)\n#country-\n#code\tcoordinates\tTZ\tcomments\n"
    "AE\t+2518+05518\tAsia/Dubai\n"
    "OM\t+2336+05835\tAsia/Muscat\n"
    "US\t+404251-0740023\tAmerica/New_York\tEastern (most areas)\n"
)
ZONE1970_TAB = (
    "#codes\tcoordinates\tTZ\tcomments\n"
    "AE,OM,RE,SC,TF\t+2518+05518\tAsia/Dubai\tCrozet\n"
    "US\t+404251-0740023\tAmerica/New_York\tEastern (most areas)\n"
)


def test_countries_are_sorted_by_code_with_their_tz_name() -> None:
    rows = world_data.countries(ISO3166_1, world_data.tz_country_names(ISO3166_TAB))
    assert [r["alpha_2"] for r in rows] == ["AW", "FR"]
    assert rows[0]["official_name"] is None and rows[0]["tz_name"] is None
    assert rows[1] == {"alpha_2": "FR", "alpha_3": "FRA", "numeric": "250", "name": "France",
                       "official_name": "French Republic", "common_name": None, "flag": "\U0001f1eb\U0001f1f7",
                       "tz_name": "France"}  # fmt: skip


def test_subdivisions_take_their_country_from_the_code() -> None:
    assert world_data.subdivisions(ISO3166_2) == [
        {"code": "AD-02", "name": "Canillo", "type": "Parish", "country_code": "AD", "parent_code": None},
        {"code": "FR-75C", "name": "Paris", "type": "Metropolitan collectivity with special status",
         "country_code": "FR", "parent_code": "FR-IDF"},
    ]  # fmt: skip


def test_languages_keep_missing_codes_as_none() -> None:
    rows = world_data.languages(ISO639_3)
    assert [r["alpha_3"] for r in rows] == ["aaa", "ces"]
    assert rows[0]["alpha_2"] is None and rows[1]["bibliographic"] == "cze"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("+4852+00220", (48.8667, 2.3333)),
        ("+404251-0740023", (40.7142, -74.0064)),
        ("-3352+15113", (-33.8667, 151.2167)),
    ],
)
def test_iso6709_to_decimal_degrees(text: str, expected: tuple[float, float]) -> None:
    assert world_data.iso6709(text) == expected


def test_iso6709_refuses_other_text() -> None:
    with pytest.raises(ValueError, match="ISO 6709"):
        world_data.iso6709("48.85,2.35")


def test_zones_have_one_country_and_the_zone1970_list() -> None:
    rows = world_data.zones(ZONE_TAB, ZONE1970_TAB)
    assert [r["name"] for r in rows] == ["America/New_York", "Asia/Dubai", "Asia/Muscat"]
    assert rows[1] == {"name": "Asia/Dubai", "country_code": "AE", "latitude": 25.3, "longitude": 55.3,
                       "comments": None, "zone1970_countries": "AE,OM,RE,SC,TF"}  # fmt: skip
    assert rows[0]["comments"] == "Eastern (most areas)" and rows[2]["zone1970_countries"] is None


def test_zone_countries_say_which_table_lists_each_pair() -> None:
    pairs = {(r["zone"], r["country_code"]): r["listed_in"] for r in world_data.zone_countries(ZONE_TAB, ZONE1970_TAB)}
    assert pairs[("Asia/Dubai", "AE")] == "zone.tab, zone1970.tab"
    assert pairs[("Asia/Dubai", "OM")] == "zone1970.tab"
    assert pairs[("Asia/Muscat", "OM")] == "zone.tab"
    assert len(pairs) == 7  # Dubai with its five countries, Muscat, New York
