"""The flag shop's offers, made from its categories: a month of 10% off each region's flags, with a voucher. Pure.

The shop's regions (its categories: the tz areas of :mod:`capreplay.benchmark.apps.flag_catalogue`) take turns in
alphabetical order, one calendar month each from January :data:`YEAR` (Africa in January, America in February,
...); the uninhabited islands without a time zone (:data:`~capreplay.benchmark.apps.flag_catalogue.NO_ZONE`) have
no month. Each month is one of Oscar's voucher offers: a range holding the region's category, the condition "at
least one flag of the range", the benefit :data:`PERCENTAGE` % off the range's flags, and a multi-use voucher whose
code is the region's name in capitals and the year (``AFRICA2027``), valid from the first day of the month at
midnight UTC to the first day of the next. Voucher offers apply only with their code, so the public shop's pages
show none of them; Django's admin (``/admin/``) shows and edits them.
"""

from __future__ import annotations

import datetime
from dataclasses import asdict, dataclass

from capreplay.benchmark.apps.flag_catalogue import NO_ZONE

YEAR = 2027
"""The year of the region months (after every capture so far, so that no voucher is valid when a page is frozen)."""
PERCENTAGE = 10
"""The discount of each region's month, in per cent of its flags' prices."""


@dataclass(frozen=True)
class RegionMonth:
    """One region's month of the shop's offers."""

    region: str
    """The shop's category (the tz area): ``Africa``."""
    range_name: str
    offer_name: str
    voucher_code: str
    start: str
    """ISO 8601, UTC: the first day of the month at midnight."""
    end: str
    """ISO 8601, UTC: the first day of the next month at midnight."""
    percentage: int


def region_months(regions: list[str], year: int = YEAR) -> list[RegionMonth]:
    """A month each for the regions (twelve at most, alphabetically, without :data:`NO_ZONE`), from January."""
    named = sorted(set(regions) - {NO_ZONE})
    if len(named) > 12:
        raise ValueError(f"{len(named)} regions do not fit in the months of one year")
    months = []
    for index, region in enumerate(named):
        start = datetime.datetime(year, index + 1, 1, tzinfo=datetime.UTC)
        end = datetime.datetime(year + (index == 11), (index + 1) % 12 + 1, 1, tzinfo=datetime.UTC)
        months.append(RegionMonth(region=region, range_name=f"{region} flags", offer_name=f"{region} flags month",
                                  voucher_code=f"{region.upper()}{year}", start=start.isoformat(),
                                  end=end.isoformat(), percentage=PERCENTAGE))  # fmt: skip
    return months


def months_records(months: list[RegionMonth]) -> list[dict[str, object]]:
    """The months as the shop's ``region_offers`` command reads them (JSON objects)."""
    return [asdict(month) for month in months]
