"""The Pallets changelogs turned into Trac's records: a component per project, a milestone per release, a ticket
per change. Pure: releases in, records out (the tracker's builder writes them into Trac's database).

Derived fields, each a documented rule over the changelog's own text:

- **summary**: the first sentence of the change, reStructuredText simplified to plain text (``x`` -> x,
  :issue:`12` -> #12, :class:`~a.B` -> B, :pep:`8` -> PEP 8), cut at a word boundary to about 100 characters.
- **description**: the whole change in Trac wiki markup (literals in backticks, links as ``[url text]``); an
  issue or pull request number is written ``!#1234 (GitHub)``, so it reads "#1234 (GitHub)" and never links
  to the Trac ticket that happens to have that number.
- **type**: ``defect`` when the change's first word is a form of "fix" or "correct" (Fix, Fixed, Fixes,
  Correctly, ...), any case; ``enhancement`` otherwise.
- **dates**: a release's date at noon UTC is its milestone's completion and its tickets' creation and change
  time. A release the changelog gives no date ("Unreleased", "release date to be decided", a date without a
  year) keeps an open milestone without a date, and its tickets take the date of the nearest newer dated
  release of the same project (the section listed above it).
- **ticket numbers**: tickets are numbered oldest first: by date, then project (in :data:`PROJECTS` order),
  then in the changelog's order within the release.

A version listed twice in one changelog (Werkzeug 0.9.7) is one milestone with the changes of both sections.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, time

from capreplay.benchmark.changelog import Change, Release
from capreplay.benchmark.sdists import PROJECTS

TITLES = {
    "flask": "Flask",
    "click": "Click",
    "jinja2": "Jinja",
    "werkzeug": "Werkzeug",
    "markupsafe": "MarkupSafe",
    "itsdangerous": "ItsDangerous",
}
"""Each project's own name, as its README spells it (also the name of its wiki page)."""
SUMMARY_LENGTH = 100
"""A summary longer than this is cut at the last word boundary before it and ends with an ellipsis."""
REPORTER = "changelog"

_REF = re.compile(r":(?P<kind>issue|pr):`(?P<numbers>[^`]+)`")
_HASH = re.compile(r"``?#(?P<number>\d+)``?")
_ROLE = re.compile(r":(?P<role>[a-z]+):`(?P<body>[^`]+)`")
_LINK = re.compile(r"`(?P<text>[^`<]+?)\s*<(?P<url>[^`>]+)>`__?")
_REF_NAME = re.compile(r"`(?P<text>[^`]+)`__?")
_LITERAL = re.compile(r"``(?P<body>.+?)``")
_INTERPRETED = re.compile(r"(?<![`\w])`(?P<body>[^`]+)`(?![`\w])")
_STRONG = re.compile(r"\*\*(?P<body>[^*]+)\*\*")
_EMPHASIS = re.compile(r"(?<![\w*])\*(?P<body>[^*\s][^*]*)\*(?![\w*])")
_SENTENCE_END = re.compile(r"(?<!\be\.g)(?<!\bi\.e)(?<!\betc)(?<!\bvs)[.!?](?=\s|$)")
_DEFECT = re.compile(r"^(fix|correct)\w*\b", re.IGNORECASE)
_PLAIN_ROLES = {"pep": "PEP {}", "rfc": "RFC {}", "cwe": "{}"}


@dataclass(frozen=True)
class Milestone:
    """One release of one project."""

    name: str
    """``<project> <version>``, e.g. ``flask 3.0.0`` (also the name of its version)."""
    project: str
    released: date | None
    description: str


@dataclass(frozen=True)
class Ticket:
    """One change of one release, closed as fixed."""

    id: int
    type: str
    summary: str
    description: str
    component: str
    milestone: str
    when: datetime
    """Creation and last change (noon UTC of the release's date)."""


@dataclass(frozen=True)
class Content:
    """Everything the tracker is filled with."""

    milestones: tuple[Milestone, ...]
    tickets: tuple[Ticket, ...]


def ticket_type(text: str) -> str:
    """``defect`` for a change that starts with a form of "fix" or "correct", else ``enhancement``."""
    return "defect" if _DEFECT.match(text.strip()) else "enhancement"


def plain_text(text: str) -> str:
    """reStructuredText markup of a changelog entry simplified to plain text."""
    text = _REF.sub(lambda m: ", ".join(f"#{n}" for n in _numbers(m["numbers"])), text)
    text = _HASH.sub(lambda m: f"#{m['number']}", text)
    text = _ROLE.sub(lambda m: _role_text(m["role"], m["body"]), text)
    text = _LINK.sub(lambda m: m["text"], text)
    text = _LITERAL.sub(lambda m: m["body"], text)
    text = _REF_NAME.sub(lambda m: m["text"], text)
    text = _INTERPRETED.sub(lambda m: m["body"], text)
    text = _STRONG.sub(lambda m: m["body"], text)
    text = _EMPHASIS.sub(lambda m: m["body"], text)
    return " ".join(text.split())


def summary(text: str) -> str:
    """The first sentence of a change, as plain text, at most about :data:`SUMMARY_LENGTH` characters."""
    plain = plain_text(text)
    end = _SENTENCE_END.search(plain)
    sentence = (plain[: end.start()] if end else plain).strip()
    if len(sentence) <= SUMMARY_LENGTH:
        return sentence
    cut = sentence[: SUMMARY_LENGTH + 1].rsplit(" ", 1)[0].rstrip(",;:(")
    return f"{cut}…"


def wiki_markup(text: str) -> str:
    """A changelog entry in Trac wiki markup: literals in backticks, links, GitHub numbers as plain text."""
    text = _REF.sub(lambda m: ", ".join(f"!#{n} (GitHub)" for n in _numbers(m["numbers"])), text)
    text = _HASH.sub(lambda m: f"!#{m['number']} (GitHub)", text)
    text = _ROLE.sub(lambda m: _role_wiki(m["role"], m["body"]), text)
    text = _LINK.sub(lambda m: f"[{m['url']} {m['text']}]", text)
    text = _LITERAL.sub(lambda m: _monospace(m["body"]), text)
    text = _INTERPRETED.sub(lambda m: _monospace(m["body"]), text)
    text = _STRONG.sub(lambda m: f"'''{m['body']}'''", text)
    text = _EMPHASIS.sub(lambda m: f"''{m['body']}''", text)
    return text


def _numbers(numbers: str) -> list[int]:
    return [int(n) for n in re.findall(r"\d+", numbers)]


def _role_target(body: str) -> str:
    """The text a Sphinx cross-reference shows: ``text <target>`` -> text, ``~a.b.C`` -> C, ``a.b`` -> a.b."""
    if found := re.fullmatch(r"(?P<text>.+?)\s*<[^>]+>", body):
        return found["text"]
    return body.removeprefix("~").rsplit(".", 1)[-1] if body.startswith("~") else body.removeprefix("!")


def _role_text(role: str, body: str) -> str:
    return _PLAIN_ROLES[role].format(body) if role in _PLAIN_ROLES else _role_target(body)


def _role_wiki(role: str, body: str) -> str:
    if role in _PLAIN_ROLES or role in ("ref", "doc"):
        return _role_text(role, body)
    return _monospace(_role_target(body))


def _monospace(body: str) -> str:
    return f"{{{{{{{body}}}}}}}" if "`" in body else f"`{body}`"


def build_content(changelogs: dict[str, list[Release]]) -> Content:
    """The milestones and tickets of every project's releases (each list newest first, as the file has it)."""
    milestones: list[Milestone] = []
    pending: list[tuple[datetime, int, int, str, str, Change]] = []  # sort key, then what the ticket needs
    for project in PROJECTS:
        for order, (release, when) in enumerate(_dated(_merged(changelogs.get(project, [])))):
            name = f"{project} {release.version}"
            milestones.append(Milestone(name, project, release.released, _milestone_text(project, release)))
            for n, change in enumerate(release.changes):
                pending.append((when, PROJECTS.index(project), -order * 10_000 + n, project, name, change))
    pending.sort(key=lambda p: (p[0], p[1], p[2]))
    tickets = tuple(
        Ticket(
            id=i,
            type=ticket_type(change.text),
            summary=summary(change.text),
            description=_ticket_text(project, milestone, change),
            component=project,
            milestone=milestone,
            when=when,
        )
        for i, (when, _, _, project, milestone, change) in enumerate(pending, start=1)
    )
    return Content(milestones=tuple(milestones), tickets=tickets)


def _merged(releases: list[Release]) -> list[Release]:
    """One release per version: a version listed twice keeps its first place and the changes of both."""
    merged: dict[str, Release] = {}
    for release in releases:
        if (earlier := merged.get(release.version)) is None:
            merged[release.version] = release
        else:
            merged[release.version] = Release(
                release.version,
                earlier.released or release.released,
                earlier.codename or release.codename,
                earlier.changes + release.changes,
            )
    return list(merged.values())


def _dated(releases: list[Release]) -> list[tuple[Release, datetime]]:
    """Each release (newest first) with its tickets' time: its date, else the nearest newer dated release's."""
    dated: list[tuple[Release, datetime]] = []
    newer: date | None = None
    fallback = next((r.released for r in releases if r.released), date(1970, 1, 1))  # no newer: the newest date
    for release in releases:
        newer = release.released or newer
        dated.append((release, noon(newer or fallback)))
    return dated


def noon(day: date) -> datetime:
    """Noon UTC of ``day``: the time every record of that day gets."""
    return datetime.combine(day, time(12), tzinfo=UTC)


def _milestone_text(project: str, release: Release) -> str:
    title = TITLES[project]
    when = f"released {release.released.isoformat()}" if release.released else "the changelog gives no release date"
    codename = f", codename ''{release.codename}''" if release.codename else ""
    return (
        f"Release {release.version} of [wiki:{title} {title}]{codename}: {when}. "
        f"{len(release.changes)} change{'' if len(release.changes) == 1 else 's'} in the changelog."
    )


def _ticket_text(project: str, milestone: str, change: Change) -> str:
    return f'{wiki_markup(change.text)}\n\nFrom the changelog of {TITLES[project]}, [milestone:"{milestone}"].\n'
