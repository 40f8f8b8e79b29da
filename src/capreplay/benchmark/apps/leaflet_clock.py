"""The UTC offsets the map's sliders work with: each zone's offset on one fixed day, from the tz database. Pure.

The map's time slider runs through one day in UTC and shows each zone's local time on it; its offset slider
keeps the zones whose offset lies in a range. Both use the offset each zone has on :data:`CLOCK_DAY`, a day
written here rather than "today", so a rebuild a year later gives the same offsets and the same local times.
On that day (15 January 2026) the southern summer is on: Sydney is at +11:00, Adelaide at +10:30. The offset must
hold the whole day, so that the local time at every instant of the slider is true; :func:`day_offsets` refuses a
zone whose clocks change that day.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, date, datetime, time, timedelta, tzinfo

from capreplay.errors import CapreplayError

CLOCK_DAY = date(2026, 1, 15)
"""The day the time slider covers (00:00 to 24:00 UTC) and whose offsets the offset slider filters by."""


def offset_minutes(zone: tzinfo, instant: datetime) -> int:
    """``zone``'s offset from UTC at ``instant`` (an aware datetime), in whole minutes east of Greenwich."""
    offset = instant.astimezone(zone).utcoffset()
    if offset is None:
        raise CapreplayError(f"the time zone {zone} gives no UTC offset at {instant.isoformat()}")
    return round(offset.total_seconds() / 60)


def day_offsets(zones: Mapping[str, tzinfo], day: date = CLOCK_DAY) -> dict[str, int]:
    """Each zone's offset in minutes on ``day``: the same at its first and its last instant (UTC), or an error."""
    start = datetime.combine(day, time(0), tzinfo=UTC)
    end = start + timedelta(days=1)
    offsets = {}
    for name, zone in zones.items():
        first, last = offset_minutes(zone, start), offset_minutes(zone, end - timedelta(seconds=1))
        if first != last:
            raise CapreplayError(f"{name} changes its UTC offset on {day.isoformat()} ({first} to {last} minutes): "
                                 "pick a day on which no zone does")  # fmt: skip
        offsets[name] = first
    return offsets
