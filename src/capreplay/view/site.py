"""The viewer's site: every path it has, and what each holds (a page made on demand, or a file on disk).

Paths are relative and end in a file name (``runs/demo/index.html``), so the same map can be served and
written to a folder. A page is made when it is asked for; a file is read when it is asked for, so a site
of thousands of screenshots costs nothing until one is looked at.
"""

from __future__ import annotations

import mimetypes
import posixpath
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from capreplay.errors import InputError, os_reason

HTML = "text/html; charset=utf-8"


@dataclass(frozen=True)
class Entry:
    """What one path of the site holds."""

    content_type: str
    body: Callable[[], bytes]


def _read(path: Path) -> Callable[[], bytes]:
    def body() -> bytes:
        try:
            return path.read_bytes()
        except OSError as e:
            raise InputError(f"cannot read: {os_reason(e)}", path) from e

    return body


def _static(name: str) -> Callable[[], bytes]:
    return lambda: resources.files("capreplay.view").joinpath("static", name).read_bytes()


def content_type(path: str) -> str:
    """The content type a path's file name says (``application/octet-stream`` when it says nothing)."""
    if path.endswith(".html"):
        return HTML
    guessed, _ = mimetypes.guess_type(path)
    if guessed is None:
        return "application/octet-stream"
    return f"{guessed}; charset=utf-8" if guessed.startswith("text/") or guessed.endswith("json") else guessed


class Site:
    """A map from site paths to entries; :meth:`page`, :meth:`file` and :meth:`data` add to it."""

    def __init__(self) -> None:
        """An empty site with the shipped style and script."""
        self._entries: dict[str, Entry] = {}
        for name in ("viewer.css", "viewer.js"):
            self._entries[f"static/{name}"] = Entry(content_type(name), _static(name))

    def page(self, path: str, render: Callable[[], str]) -> None:
        """``path`` is the HTML page ``render`` makes."""
        self._add(path, Entry(HTML, lambda: render().encode("utf-8")))

    def file(self, path: str, source: Path) -> None:
        """``path`` is the file ``source``, read when asked for."""
        self._add(path, Entry(content_type(source.name), _read(source)))

    def data(self, path: str, make: Callable[[], bytes]) -> None:
        """``path`` holds the bytes ``make`` returns (a plot, an SVG drawing)."""
        self._add(path, Entry(content_type(path), make))

    def _add(self, path: str, entry: Entry) -> None:
        if path != posixpath.normpath(path) or path.startswith(("/", "..")):
            raise ValueError(f"not a clean site path: {path!r}")
        self._entries[path] = entry

    def get(self, path: str) -> Entry | None:
        """The entry at ``path``, or None."""
        return self._entries.get(path)

    def __contains__(self, path: object) -> bool:
        return path in self._entries

    def paths(self) -> Iterator[str]:
        """Every path, sorted."""
        return iter(sorted(self._entries))
