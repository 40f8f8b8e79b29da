"""The map's clock: each zone's UTC offset on the fixed day, refused where a zone's clocks change that day."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import pytest

from capreplay.benchmark.apps.leaflet_clock import CLOCK_DAY, day_offsets, offset_minutes
from capreplay.errors import CapreplayError


class _Switch(tzinfo):
    """A zone that moves from +01:00 to +02:00 at 12:00 UTC on 15 January 2026 (no real zone does)."""

    def utcoffset(self, dt: datetime | None) -> timedelta:
        after = dt is not None and dt.replace(tzinfo=None) >= datetime(2026, 1, 15, 14)
        return timedelta(hours=2 if after else 1)

    def dst(self, dt: datetime | None) -> timedelta:
        return timedelta(0)

    def tzname(self, dt: datetime | None) -> str:
        return "Switch"


def test_offsets_in_minutes_east_of_greenwich() -> None:
    zones = {
        "Kathmandu": timezone(timedelta(hours=5, minutes=45)),
        "St_Johns": timezone(-timedelta(hours=3, minutes=30)),
    }
    assert day_offsets(zones) == {"Kathmandu": 345, "St_Johns": -210}
    assert offset_minutes(zones["Kathmandu"], datetime(2026, 1, 15, 12, tzinfo=UTC)) == 345


def test_a_zone_whose_clocks_change_that_day_is_refused() -> None:
    with pytest.raises(CapreplayError, match="changes its UTC offset on 2026-01-15"):
        day_offsets({"Switch": _Switch()})


def test_the_southern_summer_of_the_fixed_day_from_the_tz_database() -> None:
    # tzdata 2026.6 (IANA 2026f) on 15 January 2026: Adelaide on summer time (+10:30, +9:30 in winter), Darwin without
    # (+9:30), the Chatham Islands at +13:45 and Kathmandu at +5:45.
    try:
        zones = {name: ZoneInfo(name) for name in
                 ("Australia/Adelaide", "Australia/Darwin", "Pacific/Chatham", "Asia/Kathmandu")}  # fmt: skip
    except ZoneInfoNotFoundError:
        pytest.skip("no tz database on this machine")
    assert date(2026, 1, 15) == CLOCK_DAY
    assert day_offsets(zones) == {"Australia/Adelaide": 630, "Australia/Darwin": 570, "Pacific/Chatham": 825,
                                  "Asia/Kathmandu": 345}  # fmt: skip
