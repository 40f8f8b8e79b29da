"""Playwright's selectors, as gold paths write them, looked up in an observation's DOM instead of a live page.

A gold step's selector is for Playwright: CSS with Playwright's text pseudo-classes (``:text-is("X")``,
``:has-text("X")``) and its chaining (``A >> nth=0 >> B``, ``>> visible=true``). BeautifulSoup's soupsieve reads
the CSS; the text pseudo-classes become soupsieve's ``:-soup-contains-own`` and ``:-soup-contains``, and where
``:text-is`` ends a part (the element the part picks), the picked elements are then kept only when their whole
text, whitespace folded, is exactly the text asked for, as Playwright keeps them. ``:has-text`` stays a
case-sensitive contains (Playwright ignores case); inside ``:has(...)`` a ``:text-is`` is a contains of the
element's own text. ``visible=true`` keeps every element, since a DOM observation has no layout.
"""

from __future__ import annotations

import re

from bs4 import BeautifulSoup, Tag

_TEXT_IS = re.compile(r""":text-is\((?P<q>["'])(?P<text>.*?)(?P=q)\)""")
_HAS_TEXT = re.compile(r""":has-text\((?P<q>["'])(?P<text>.*?)(?P=q)\)""")
_NTH = re.compile(r"^nth=(-?\d+)$")


def _folded(element: Tag) -> str:
    return " ".join(element.get_text(" ").split())


def _exact_text(css: str) -> str | None:
    """The text of a ``:text-is`` in the last compound of ``css`` (outside parentheses), if it has one."""
    depth, last = 0, 0
    for i, ch in enumerate(css):
        depth += ch == "("
        depth -= ch == ")"
        if depth == 0 and ch in " >+~":
            last = i + 1
    found = _TEXT_IS.search(css[last:])
    return found["text"] if found else None


def _soup_css(css: str) -> str:
    css = _TEXT_IS.sub(lambda m: f":-soup-contains-own({m['q']}{m['text']}{m['q']})", css)
    return _HAS_TEXT.sub(lambda m: f":-soup-contains({m['q']}{m['text']}{m['q']})", css)


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
            exact = _exact_text(part)
            picked: list[Tag] = []
            seen: set[int] = set()  # by identity: bs4 compares tags by their markup
            for scope in current:
                for e in scope.select(_soup_css(part)):
                    if id(e) not in seen:
                        seen.add(id(e))
                        picked.append(e)
            if exact is not None:
                wanted = " ".join(exact.split())
                picked = [e for e in picked if _folded(e) == wanted]
            current = list(picked)
    return [e for e in current if isinstance(e, Tag) and not isinstance(e, BeautifulSoup)]
