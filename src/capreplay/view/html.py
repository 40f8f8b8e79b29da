"""Small pure helpers for the viewer's HTML: escaping, relative links, tables, the page frame."""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Sequence
from html import escape
from pathlib import Path
from typing import Any

STATIC = "static"
"""Where the shipped style and script live in the site."""


def esc(value: Any) -> str:
    """``value`` as text safe inside HTML (quotes too, so it can go into attributes)."""
    return escape("" if value is None else str(value), quote=True)


def shown_path(path: str | Path) -> str:
    """A file's path as a person reads it: relative to the working folder when it is inside it, else as given."""
    given = Path(path)
    if not given.is_absolute():
        return str(path)
    try:
        return given.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except (ValueError, OSError):
        return str(path)


def rel(here: str, target: str) -> str:
    """The link from the page at ``here`` to ``target``, both site paths (``runs/a/index.html``)."""
    start = posixpath.dirname(here) or "."
    return posixpath.relpath(target, start)


def link(here: str, target: str, text: Any, *, cls: str | None = None) -> str:
    """An ``<a>`` from ``here`` to the site path ``target``."""
    klass = f' class="{esc(cls)}"' if cls else ""
    return f'<a href="{esc(rel(here, target))}"{klass}>{esc(text)}</a>'


def badge(text: str, kind: str) -> str:
    """A small coloured label; ``kind`` is one of the style sheet's badge kinds (ok, bad, warn, info, muted)."""
    return f'<span class="badge {esc(kind)}">{esc(text)}</span>'


def table(headers: Sequence[str], rows: Iterable[Sequence[str]], *, cls: str = "") -> str:
    """A table whose cells are HTML already (escape text with :func:`esc` before)."""
    head = "".join(f"<th>{esc(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return f'<table class="{esc(cls)}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def definitions(pairs: Iterable[tuple[str, str]]) -> str:
    """A definition list of ``(term, HTML)`` pairs."""
    return "<dl>" + "".join(f"<dt>{esc(k)}</dt><dd>{v}</dd>" for k, v in pairs) + "</dl>"


def number(value: float | None, digits: int = 2) -> str:
    """A number with ``digits`` decimals, or a dash."""
    return "–" if value is None else f"{value:.{digits}f}"


def page(here: str, title: str, body: str, *, crumbs: Sequence[tuple[str, str]] = ()) -> str:
    """A whole page: the shipped style and script, a trail of ``(site path, label)`` links, the title, ``body``."""
    trail = [link(here, "index.html", "capreplay")]
    trail += [link(here, path, label) for path, label in crumbs]
    return (
        "<!doctype html>\n<html lang=en><head><meta charset=utf-8>"
        '<meta name=viewport content="width=device-width, initial-scale=1">'
        f"<title>{esc(title)} · capreplay</title>"
        # An empty icon: without it every page asks for /favicon.ico, which is not in the site.
        '<link rel=icon href="data:,">'
        f'<link rel=stylesheet href="{esc(rel(here, STATIC + "/viewer.css"))}">'
        f'<script defer src="{esc(rel(here, STATIC + "/viewer.js"))}"></script>'
        "</head><body>"
        f'<nav class=crumbs>{" / ".join(trail)}</nav>'
        f"<main><h1>{esc(title)}</h1>{body}</main></body></html>\n"
    )
