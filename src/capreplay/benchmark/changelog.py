"""A Pallets project's ``CHANGES.rst`` read into releases: version, date, codename and each change. Pure.

The file is a list of sections, newest first::

    Version 2.3.3
    -------------

    Released 2023-08-21

    -   Python 3.12 compatibility.
    -   Refactor how an app's root and instance paths are determined. :issue:`5160`

Older sections date themselves in words ("Released on December 31st 2017", "(bugfix release, released on
March 26th 2015)", sometimes with a codename, sometimes without a year); "Unreleased" and dates without a year
give no date. A change is a top-level bullet with its continuation lines and any nested bullets, joined into one
line of text; the issues and pull requests it names are kept apart.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

_HEADING = re.compile(r"^Version (?P<version>\S+)\s*$")
_UNDERLINE = re.compile(r"^[-=~^]{3,}\s*$")
_ISO = re.compile(r"(?P<y>\d{4})-(?P<m>\d{2})-(?P<d>\d{2})")
_WORDS = re.compile(r"(?P<month>[A-Z][a-z]{2,8})\.? (?P<d>\d{1,2})(?:st|nd|rd|th)?,? (?P<y>\d{4})")
_CODENAME = re.compile(r"codename (?P<name>[^.,)]+)")
_BULLET = re.compile(r"^[-*]\s+")
_ROLE = re.compile(r":(?P<kind>issue|pr):`(?P<numbers>[^`]+)`")
_HASH_REF = re.compile(r"(?:pull request |issue )?``?#(?P<number>\d+)``?")
_MONTHS = {name: n for n, name in enumerate(
    ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"), start=1)}  # fmt: skip


@dataclass(frozen=True)
class Change:
    """One entry of a release: its text (reStructuredText roles kept) and the numbers it refers to."""

    text: str
    issues: tuple[int, ...]
    pulls: tuple[int, ...]


@dataclass(frozen=True)
class Release:
    """One section of the changelog."""

    version: str
    released: date | None
    codename: str | None
    changes: tuple[Change, ...]


def parse_changelog(text: str) -> list[Release]:
    """Every release section of ``text``, in the file's order (newest first)."""
    lines = text.splitlines()
    starts = [i for i, line in enumerate(lines)
              if _HEADING.match(line) and i + 1 < len(lines) and _UNDERLINE.match(lines[i + 1])]  # fmt: skip
    releases = []
    for n, start in enumerate(starts):
        end = starts[n + 1] if n + 1 < len(starts) else len(lines)
        heading = _HEADING.match(lines[start])
        assert heading is not None
        releases.append(_release(heading["version"], lines[start + 2 : end]))
    return releases


def _release(version: str, body: list[str]) -> Release:
    first = next((line.strip() for line in body if line.strip()), "")
    dated = not _BULLET.match(first) and "released" in first.lower()
    codename = _CODENAME.search(first) if dated else None
    return Release(
        version=version,
        released=_date(first) if dated else None,
        codename=codename["name"].strip() if codename else None,
        changes=tuple(_change(lines) for lines in _bullets(body)),
    )


def _date(line: str) -> date | None:
    if found := _ISO.search(line):
        return date(int(found["y"]), int(found["m"]), int(found["d"]))
    if found := _WORDS.search(line):
        month = _MONTHS.get(found["month"][:3].lower())
        return date(int(found["y"]), month, int(found["d"])) if month else None
    return None


def _bullets(body: list[str]) -> list[list[str]]:
    """The top-level bullets of a section, each with its continuation and nested lines."""
    bullets: list[list[str]] = []
    inside = False  # prose at the margin after a list ends its last bullet
    for line in body:
        if _BULLET.match(line):
            bullets.append([line])
            inside = True
        elif inside and (line.startswith((" ", "\t")) or not line.strip()):
            bullets[-1].append(line)
        elif line.strip():
            inside = False
    return bullets


def _change(lines: list[str]) -> Change:
    text = " ".join(_BULLET.sub("", line.strip()) for line in lines if line.strip())
    issues: list[int] = []
    pulls: list[int] = []
    for role in _ROLE.finditer(text):
        numbers = [int(n) for n in re.findall(r"\d+", role["numbers"])]
        (issues if role["kind"] == "issue" else pulls).extend(numbers)
    for ref in _HASH_REF.finditer(text):
        (pulls if ref.group(0).startswith("pull request") else issues).append(int(ref["number"]))
    return Change(text=text, issues=tuple(issues), pulls=tuple(pulls))
