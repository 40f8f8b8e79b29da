"""Playwright's selectors, as gold paths write them, looked up in an observation's DOM instead of a live page.

A gold step's selector is for Playwright: CSS with Playwright's text pseudo-classes (``:text-is("X")``,
``:has-text("X")``, ``:text-matches("re")``) and its chaining (``A >> nth=0 >> B``, ``>> visible=true``).
BeautifulSoup's soupsieve reads the CSS (with ``NOSTRICT``: Playwright takes combinators inside ``:has()``, as
browsers do). Each text pseudo-class, wherever it stands (inside ``:has(...)`` too), becomes an attribute selector:
the elements whose text, as :func:`inner_text` reads it with whitespace folded, is the text (``:text-is``), holds
it in any letter case (``:has-text``) or matches the expression (``:text-matches``, with its flags) are first
marked with an attribute of their own in the observation's soup, as Playwright decides them. ``visible=true``
keeps every element, since a DOM observation has no layout.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable

import soupsieve as sv
from bs4 import BeautifulSoup, Tag
from bs4.element import NavigableString

_TEXT_PSEUDO = re.compile(
    r""":(?P<kind>text-is|has-text|text-matches)\((?P<q>["'])(?P<text>.*?)(?P=q)"""
    r"""(?:\s*,\s*(?P<fq>["'])(?P<flags>\w*)(?P=fq))?\)"""
)
_NTH = re.compile(r"^nth=(-?\d+)$")
_BLOCKS = frozenset({
    "address", "article", "aside", "blockquote", "br", "dd", "details", "dialog", "div", "dl", "dt", "fieldset",
    "figcaption", "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hr", "li", "main",
    "nav", "ol", "p", "pre", "section", "summary", "table", "tbody", "td", "tfoot", "th", "thead", "tr", "ul",
})  # fmt: skip
"""Tags whose text the browser's ``innerText`` sets apart from its neighbours (a line or a cell of its own)."""
_UNSHOWN = frozenset({"script", "style", "noscript", "template"})
_MARK = "data-capreplay-text-"
"""The attribute that marks the elements one text pseudo-class picks (named by a digest of the pseudo-class)."""


def inner_text(element: Tag) -> str:
    """The element's text as a browser's ``innerText`` gives it, whitespace folded: inline elements run on
    (``x_for=1``, not ``x_for = 1``), block elements and table cells are set apart by a space."""
    parts: list[str] = []
    for node in element.descendants:
        if isinstance(node, NavigableString):
            # Not a comment, doctype or CDATA, nor a script's or style's source, which innerText leaves out.
            if type(node) is NavigableString and node.parent is not None and node.parent.name not in _UNSHOWN:
                parts.append(str(node))
        elif isinstance(node, Tag) and node.name in _BLOCKS:
            parts.append(" ")
    return " ".join("".join(parts).split())


def _unescaped(text: str) -> str:
    """A CSS string's value: ``\\(`` is ``(``, ``\\\\`` one backslash (gold paths escape a regex's backslashes)."""
    return re.sub(r"\\(.)", r"\1", text)


def _test(found: re.Match[str]) -> Callable[[str], bool]:
    """Whether an element's folded text passes the pseudo-class ``found``, as Playwright decides it."""
    text = _unescaped(found["text"])
    if found["kind"] == "text-is":
        wanted = " ".join(text.split())
        return lambda shown: shown == wanted
    if found["kind"] == "has-text":
        part = " ".join(text.split()).casefold()
        return lambda shown: part in shown.casefold()
    pattern = re.compile(text, re.IGNORECASE if "i" in (found["flags"] or "") else 0)
    return lambda shown: pattern.search(shown) is not None


def _marked(soup: BeautifulSoup, css: str) -> str:
    """``css`` with each text pseudo-class made an attribute selector, the elements it picks marked in ``soup``
    (once per soup: the mark is named after the pseudo-class, and the soup remembers it has it)."""
    done: set[str] = soup.__dict__.setdefault("_capreplay_marks", set())

    def mark(found: re.Match[str]) -> str:
        name = _MARK + hashlib.sha1(found[0].encode()).hexdigest()[:12]
        if name not in done:
            done.add(name)
            passes = _test(found)
            for element in soup.find_all(True):
                if passes(inner_text(element)):
                    element[name] = ""
        return f"[{name}]"

    return _TEXT_PSEUDO.sub(mark, css)


def select_all(soup: BeautifulSoup, selector: str) -> list[Tag]:
    """Every element ``selector`` picks in ``soup``, in document order (Playwright's order)."""
    current: list[BeautifulSoup | Tag] = [soup]
    for part in (p.strip() for p in selector.split(">>")):
        if nth := _NTH.match(part):
            k = int(nth[1])
            current = [current[k]] if -len(current) <= k < len(current) else []
        elif part.startswith("visible="):
            continue
        else:
            compiled = sv.compile(_marked(soup, part), flags=sv.NOSTRICT)
            picked: list[Tag] = []
            seen: set[int] = set()  # by identity: bs4 compares tags by their markup
            for scope in current:
                for e in compiled.select(scope):
                    if id(e) not in seen:
                        seen.add(id(e))
                        picked.append(e)
            current = list(picked)
    return [e for e in current if isinstance(e, Tag) and not isinstance(e, BeautifulSoup)]
