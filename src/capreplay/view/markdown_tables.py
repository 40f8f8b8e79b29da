"""The Markdown the study's offline results are written in, as HTML: headings, paragraphs and pipe tables.

Pure and deliberately small: it reads what :mod:`capreplay.util.tables` writes (``| a | b |`` rows under a
``|---|---|`` rule) and the headings and paragraphs around them. Everything else is shown as text, escaped:
nothing in a results file can put markup into the page.
"""

from __future__ import annotations

import re

from capreplay.view.html import esc, table

_RULE = re.compile(r"^\|(\s*:?-+:?\s*\|)+\s*$")
_HEADING = re.compile(r"^(#{1,6})\s+(.*)$")


def _cells(line: str) -> list[str]:
    """The cells of one ``| a | b |`` row, trimmed."""
    inner = line.strip()
    inner = inner[1:] if inner.startswith("|") else inner
    inner = inner[:-1] if inner.endswith("|") else inner
    return [c.strip() for c in inner.split("|")]


def _inline(text: str) -> str:
    """Escaped text with ``code`` spans kept as code."""
    parts = text.split("`")
    if len(parts) % 2 == 0:  # an unpaired backtick: plain text
        return esc(text)
    return "".join(f"<code>{esc(p)}</code>" if n % 2 else esc(p) for n, p in enumerate(parts))


def markdown_html(text: str, *, shift: int = 1) -> str:
    """``text`` as HTML; a heading of level n becomes ``<h(n + shift)>`` (the page has its own ``<h1>``)."""
    out: list[str] = []
    lines = text.splitlines()
    paragraph: list[str] = []

    def flush() -> None:
        if paragraph:
            out.append(f"<p>{_inline(' '.join(paragraph))}</p>")
            paragraph.clear()

    n = 0
    while n < len(lines):
        line = lines[n]
        heading = _HEADING.match(line)
        if heading:
            flush()
            level = min(len(heading.group(1)) + shift, 6)
            out.append(f"<h{level}>{_inline(heading.group(2))}</h{level}>")
        elif line.strip().startswith("|") and n + 1 < len(lines) and _RULE.match(lines[n + 1].strip()):
            flush()
            header = _cells(line)
            rows = []
            n += 2
            while n < len(lines) and lines[n].strip().startswith("|"):
                cells = _cells(lines[n])
                rows.append([_inline(c) for c in (cells + [""] * len(header))[: len(header)]])
                n += 1
            out.append(table(header, rows, cls="numbers"))
            continue
        elif line.strip():
            paragraph.append(line.strip())
        else:
            flush()
        n += 1
    flush()
    return "".join(out)
