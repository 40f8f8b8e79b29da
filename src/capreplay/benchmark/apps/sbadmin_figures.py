"""The dashboard's figures from the Pallets projects' release history. Pure: releases in, figures out.

A release here is a version section of a project's ``CHANGES.rst`` that gives a date (the few sections with
none, "Unreleased" or "release date to be decided", are left out). Its changes are the section's top-level
bullets; its references are the distinct issue and pull-request numbers those bullets name; a fix is a change
whose text starts with "Fix" (Fix, Fixed, Fixes).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date

from capreplay.benchmark.changelog import Release

DISPLAY_NAMES = {
    "flask": "Flask",
    "click": "Click",
    "jinja2": "Jinja2",
    "werkzeug": "Werkzeug",
    "markupsafe": "MarkupSafe",
    "itsdangerous": "ItsDangerous",
}
"""PyPI name -> the project's name as its documentation spells it."""


@dataclass(frozen=True)
class Row:
    """One dated release of one project, as the dashboard counts it."""

    project: str
    """Display name (``Flask``)."""
    version: str
    released: date
    codename: str | None
    changes: int
    fixes: int
    references: int
    """Distinct issue and pull-request numbers its changes name."""
    first_change: str
    """The text of its first change (empty if it lists none)."""

    @property
    def title(self) -> str:
        """``Flask 2.0.0``."""
        return f"{self.project} {self.version}"


def rows_of(project: str, releases: Iterable[Release]) -> list[Row]:
    """The dated releases of ``project`` (its PyPI name), in the changelog's order (newest first)."""
    rows = []
    for release in releases:
        if release.released is None:
            continue
        numbers = {("i", n) for c in release.changes for n in c.issues} | {
            ("p", n) for c in release.changes for n in c.pulls
        }
        rows.append(Row(
            project=DISPLAY_NAMES.get(project, project),
            version=release.version,
            released=release.released,
            codename=release.codename,
            changes=len(release.changes),
            fixes=sum(1 for c in release.changes if c.text.startswith("Fix")),
            references=len(numbers),
            first_change=release.changes[0].text if release.changes else "",
        ))  # fmt: skip
    return rows


def newest_first(rows: Iterable[Row]) -> list[Row]:
    """Rows by date, newest first; a day shared by several releases lists them by project, then version."""
    by_name = sorted(rows, key=lambda r: (r.project, version_key(r.version)))
    return sorted(by_name, key=lambda r: r.released, reverse=True)


def version_key(version: str) -> str:
    """A string that sorts versions as numbers: ``2.0.0rc1`` before ``2.0.0`` before ``2.0.1`` before ``10.0``."""
    found = re.match(r"(?P<numbers>\d+(?:\.\d+)*)(?P<pre>[a-z]+)?(?P<n>\d+)?", version)
    if found is None:
        return version
    numbers = [int(n) for n in found["numbers"].split(".")] + [0] * 4
    suffix = f"{found['pre']}{int(found['n'] or 0):04d}" if found["pre"] else "z"
    return ".".join(f"{n:04d}" for n in numbers[:4]) + suffix


def releases_per_year(rows: Iterable[Row]) -> tuple[list[str], list[int]]:
    """Every year from the first release to the last (years without one count 0) and its number of releases."""
    years = Counter(r.released.year for r in rows)
    if not years:
        return [], []
    span = range(min(years), max(years) + 1)
    return [str(y) for y in span], [years[y] for y in span]


def changes_by_project(rows: Iterable[Row], projects: Iterable[str]) -> list[tuple[str, int]]:
    """Each project (display names, in the order given) with the number of changes of all its releases."""
    counts = Counter[str]()
    for r in rows:
        counts[r.project] += r.changes
    return [(p, counts[p]) for p in projects]


def changes_per_release(rows: Iterable[Row], project: str, major: str) -> list[tuple[str, int]]:
    """The releases of ``project`` whose version starts with ``major`` + ".", oldest first, with their changes."""
    picked = [r for r in rows if r.project == project and r.version.startswith(major + ".")]
    return [(r.version, r.changes) for r in sorted(picked, key=lambda r: version_key(r.version))]


def year_fraction(day: date) -> float:
    """``day`` as a year with its fraction (2019-07-02 -> 2019.4986): the start of its day, rounded to 4 places."""
    start = date(day.year, 1, 1)
    length = (date(day.year + 1, 1, 1) - start).days
    return round(day.year + (day - start).days / length, 4)


@dataclass(frozen=True)
class Point:
    """One release on the timeline: where it is (its date as a year with its fraction) and how high (its changes)."""

    x: float
    changes: int
    version: str
    released: date


def release_timeline(rows: Iterable[Row], projects: Iterable[str]) -> list[tuple[str, list[Point]]]:
    """Each project (display names, in the order given) with every one of its releases, oldest first; a day with
    several releases of one project lists them by version."""
    listed = list(rows)
    return [(p, [Point(year_fraction(r.released), r.changes, r.version, r.released)
                 for r in sorted((r for r in listed if r.project == p),
                                 key=lambda r: (r.released, version_key(r.version)))])
            for p in projects]  # fmt: skip


def percent(part: int, whole: int) -> int:
    """``part`` of ``whole`` in whole percent, rounded half up (0 for an empty whole)."""
    return (200 * part + whole) // (2 * whole) if whole else 0


def fix_share(rows: Iterable[Row], projects: Iterable[str]) -> list[tuple[str, int]]:
    """Each project with the share of its changes that are fixes, in percent."""
    listed = list(rows)
    return [(p, percent(sum(r.fixes for r in listed if r.project == p), sum(r.changes for r in listed
                                                                               if r.project == p)))
            for p in projects]  # fmt: skip


@dataclass(frozen=True)
class Summary:
    """The dashboard's cards."""

    projects: int
    releases: int
    changes: int
    references: int
    codenamed: int
    fixes: int
    latest: Row
    first: Row


def summary(rows: Iterable[Row]) -> Summary:
    """Totals over every release of every project (at least one release)."""
    listed = newest_first(rows)
    return Summary(
        projects=len({r.project for r in listed}),
        releases=len(listed),
        changes=sum(r.changes for r in listed),
        references=sum(r.references for r in listed),
        codenamed=sum(1 for r in listed if r.codename),
        fixes=sum(r.fixes for r in listed),
        latest=listed[0],
        first=listed[-1],
    )
