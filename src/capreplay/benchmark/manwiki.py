"""Linux man pages made into MediaWiki pages and one XML dump to import them. Pure.

Each man page of a section becomes the wiki page ``name(section)``, titled from its file name as ``man``
names it (``signal(7)``, ``resolv.conf(5)``, ``utf-8(7)``; the wiki keeps the first letter small). Its
revision is dated from the page's own ``.TH`` line, so a build gives the same history every time. A file
that is a symbolic link to another page (``latin1.7`` -> ``iso_8859-1.7``) becomes a redirect to it.

The roff goes through pandoc (``pandoc -f man -t mediawiki``) outside this module; before that
:func:`prepare_tables` rewrites the tbl format lines pandoc cannot read (column rules ``|``, spans ``s``,
point sizes ``p-1``) so that its tables come out as tables and not as the word TABLE. After it,
:func:`article` turns each reference ``'''name'''(N)`` to a page that exists into a wiki link, gives tables
the ``wikitable`` class, and files the page in its section's category.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime, time
from xml.sax.saxutils import escape, quoteattr

CATEGORIES = {5: "Section 5: File formats", 7: "Section 7: Overviews"}
"""The category of each section's pages."""
SECTION_TOPICS = {
    5: "File formats and configuration files: what a file such as /etc/passwd or /proc holds, line by line.",
    7: "Overviews, conventions and miscellaneous: signals, sockets, character sets, regular expressions.",
}
"""One line about each section, in the words of man-pages(7)."""
IMPORT_USER = "Man-pages import"
"""The user every imported revision is attributed to (the wiki's administrator account)."""
MAIN_PAGE = "Main Page"
INTERFACE = {
    # the sidebar without the random page (a different page each visit) and the help link to mediawiki.org
    "MediaWiki:Sidebar": "\n".join(
        [
            "* navigation",
            "** mainpage|mainpage-description",
            "** recentchanges-url|recentchanges",
            "** Special:AllPages|All pages",
            "* Sections",
            *(f"** Category:{name}|{name}" for name in ("Section 5: File formats", "Section 7: Overviews")),
            "* SEARCH",
            "* TOOLBOX",
            "* LANGUAGES",
            "",
        ]
    ),
    # the recent changes' "Show new changes starting from <the time of the visit>" says no time
    "MediaWiki:Rclistfrom": "Show new changes from now on",
}
"""Interface messages the wiki overrides, by page title."""
NAMESPACES = {"Category": 14, "MediaWiki": 8}

_TH = re.compile(r'^\.TH\s+(?:"[^"]*"|\S+)\s+(?:"[^"]*"|\S+)\s+"?(?P<date>\d{4}-\d{2}-\d{2})"?', re.MULTILINE)
_REFERENCE = re.compile(r"'''(?P<name>[A-Za-z0-9_.+-]+)'''\((?P<section>\d[a-z]*)\)")
_TABLE_START = re.compile(r"^\{\|\s*$", re.MULTILINE)
_POINT_SIZE = re.compile(r"p[-+]?\d+")
_NAME_LINE = re.compile(r"^== NAME ==\s*\n\s*\n?(?P<line>[^\n]+)", re.MULTILINE)


@dataclass(frozen=True)
class ManPage:
    """One man page file as the package ships it."""

    name: str
    """The file's name without section and .gz: ``signal``, ``resolv.conf``."""
    section: int
    roff: str
    """The page's source (troff with the man macros)."""


@dataclass(frozen=True)
class WikiPage:
    """One page to import: its title, its only revision's text and that revision's time."""

    title: str
    text: str
    timestamp: datetime
    comment: str


def title(name: str, section: int) -> str:
    """The wiki title of a man page: ``signal(7)``."""
    return f"{name}({section})"


def page_date(roff: str) -> date:
    """The date in the page's ``.TH`` line (its last revision in the man-pages project); ValueError if none."""
    found = _TH.search(roff)
    if found is None:
        raise ValueError("no dated .TH line")
    return date.fromisoformat(found["date"])


def prepare_tables(roff: str) -> str:
    """``roff`` with each tbl format line simplified so that pandoc reads the table.

    Column rules ``|`` are dropped, a span ``s`` becomes a plain column ``l`` (the spanning cell then stands
    alone in its row) and point sizes ``p-1`` go; the data lines are left as they are (a ``|`` there is text).
    """
    out = []
    in_format = False
    for line in roff.split("\n"):
        if line.startswith(".TS"):
            in_format = True
        elif in_format and line.rstrip().endswith(";"):
            pass  # the options line: tab(:), allbox
        elif in_format:
            line = _POINT_SIZE.sub("", line).replace("|", " ")
            line = re.sub(r"[sS]", "l", line)
            in_format = not line.rstrip().endswith(".")
        out.append(line)
    return "\n".join(out)


def summary(wikitext: str) -> str:
    """The page's one-line description from its NAME section (``signal - overview of signals``)."""
    found = _NAME_LINE.search(wikitext)
    return found["line"].strip() if found else ""


def link_references(wikitext: str, titles: Iterable[str]) -> str:
    """Each ``'''name'''(N)`` whose page ``name(N)`` is in ``titles`` made a link to it."""
    known = set(titles)

    def link(found: re.Match[str]) -> str:
        target = title(found["name"], int(found["section"])) if found["section"].isdigit() else ""
        return f"[[{target}|{found[0]}]]" if target in known else found[0]

    return _REFERENCE.sub(link, wikitext)


def article(page: ManPage, wikitext: str, titles: Iterable[str]) -> str:
    """The wiki text of ``page`` from pandoc's ``wikitext``: links, table style, category, display title."""
    text = link_references(wikitext, titles).strip()
    text = _TABLE_START.sub('{| class="wikitable"', text)
    lead = f"{{{{DISPLAYTITLE:{title(page.name, page.section)}}}}}\n" if "_" in page.name else ""
    return f"{lead}{text}\n\n[[Category:{CATEGORIES[page.section]}]]\n"


def redirect(target: str) -> str:
    """The text of a redirect to ``target``."""
    return f"#REDIRECT [[{target}]]\n"


def category_page(section: int, count: int) -> str:
    """The description at the top of a section's category page."""
    return (
        f"Manual pages of section {section} of the Linux man-pages project ({count} pages). "
        f"{SECTION_TOPICS[section]}\n\nSee the [[{MAIN_PAGE}]] for both sections with a line about each page.\n"
    )


def main_page(summaries: Mapping[int, Mapping[str, str]], release: str) -> str:
    """The Main Page: what the wiki is, then each section's pages (title -> summary) in title order."""
    total = sum(len(pages) for pages in summaries.values())
    parts = [
        "'''Linux man-pages''' is a wiki of the Linux manual pages of sections 5 and 7, "
        f"{total} pages from the Linux man-pages project as Debian ships it ({release}), "
        "converted from troff with pandoc. Each page is titled as <code>man</code> names it, "
        "for example [[signal(7)]] or [[proc(5)]]; the links in a page lead to the other pages of these "
        "sections, and other sections' references stay plain text.\n",
        "Each page's revision carries the date of the page in the man-pages release, from its <code>.TH</code> line.\n",
    ]
    for section, pages in sorted(summaries.items()):
        parts.append(f"== [[:Category:{CATEGORIES[section]}|{CATEGORIES[section]}]] ==\n")
        parts.append(f"{SECTION_TOPICS[section]} {len(pages)} pages.\n")
        rows = ['{| class="wikitable sortable"', "! Page !! Description"]
        for name in sorted(pages):
            description = pages[name].partition(" - ")[2] or pages[name]
            rows += ["|-", f"| [[{name}]] || {description}"]
        parts.append("\n".join([*rows, "|}"]) + "\n")
    return "\n".join(parts)


def page_time(day: date) -> datetime:
    """Midnight UTC of ``day``: the time of every revision dated that day."""
    return datetime.combine(day, time(0, 0), tzinfo=UTC)


def export_xml(pages: Iterable[WikiPage]) -> str:
    """A MediaWiki XML dump (export format 0.11) with one revision per page, for ``importDump.php``."""
    out = ['<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.11/" version="0.11" xml:lang="en">']
    for page in pages:
        prefix, colon, _ = page.title.partition(":")
        namespace = NAMESPACES.get(prefix, 0) if colon else 0
        out += [
            "  <page>",
            f"    <title>{escape(page.title)}</title>",
            f"    <ns>{namespace}</ns>",
            "    <revision>",
            f"      <timestamp>{page.timestamp.astimezone(UTC):%Y-%m-%dT%H:%M:%SZ}</timestamp>",
            f"      <contributor><username>{escape(IMPORT_USER)}</username></contributor>",
            f"      <comment>{escape(page.comment)}</comment>",
            "      <model>wikitext</model>",
            "      <format>text/x-wiki</format>",
            f"      <text xml:space={quoteattr('preserve')}>{escape(page.text)}</text>",
            "    </revision>",
            "  </page>",
        ]
    out.append("</mediawiki>")
    return "\n".join(out) + "\n"
