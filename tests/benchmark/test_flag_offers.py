"""The flag shop's region months: one voucher offer per region, a calendar month each, from the shop's categories."""

from __future__ import annotations

import itertools

import pytest

from capreplay.benchmark.apps.flag_catalogue import NO_ZONE
from capreplay.benchmark.apps.flag_offers import PERCENTAGE, YEAR, months_records, region_months
from capreplay.benchmark.roster import BUILDERS, PARTS, part_application, part_names
from capreplay.errors import UsageError

REGIONS = ["Pacific", "Africa", NO_ZONE, "Europe", "America", "Indian", "Asia", "Antarctica", "Arctic", "Atlantic",
           "Australia"]  # fmt: skip


def test_each_region_has_a_month_in_alphabetical_order_and_the_islands_without_a_zone_none() -> None:
    months = region_months(REGIONS)
    assert [m.region for m in months] == sorted(set(REGIONS) - {NO_ZONE})
    assert months[0].start == f"{YEAR}-01-01T00:00:00+00:00" and months[0].end == f"{YEAR}-02-01T00:00:00+00:00"
    assert months[-1].region == "Pacific"
    assert (months[-1].start, months[-1].end) == ("2027-10-01T00:00:00+00:00", "2027-11-01T00:00:00+00:00")
    assert all(m.end == n.start for m, n in itertools.pairwise(months))


def test_a_month_names_its_range_offer_and_voucher_after_the_region() -> None:
    indian = next(m for m in region_months(REGIONS) if m.region == "Indian")
    assert (indian.range_name, indian.offer_name, indian.voucher_code) == ("Indian flags", "Indian flags month",
                                                                           "INDIAN2027")  # fmt: skip
    assert indian.percentage == PERCENTAGE


def test_december_ends_on_the_first_of_january_of_the_next_year() -> None:
    months = region_months([f"R{i:02d}" for i in range(12)], year=2030)
    assert months[-1].start == "2030-12-01T00:00:00+00:00" and months[-1].end == "2031-01-01T00:00:00+00:00"


def test_more_regions_than_months_are_refused() -> None:
    with pytest.raises(ValueError, match="13 regions"):
        region_months([f"R{i:02d}" for i in range(13)])


def test_the_records_are_what_the_import_command_reads() -> None:
    record = months_records(region_months(["Asia"]))[0]
    assert set(record) == {"region", "range_name", "offer_name", "voucher_code", "start", "end", "percentage"}


def test_the_admin_part_is_captured_from_the_shop_after_every_application() -> None:
    assert part_names() == [*BUILDERS, *PARTS]
    assert part_names().index("shopadmin") == len(BUILDERS)
    assert part_application("shopadmin").host == "shop.bench.test"
    assert part_application("shop").host == "shop.bench.test"
    with pytest.raises(UsageError, match="shopadmin"):
        part_application("nosuch")
