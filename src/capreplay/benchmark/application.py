"""One application of the benchmark as its builder describes it: what it is, where it comes from, how it starts."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path

from capreplay.testing.apps.process import Server

HOST_SUFFIX = ".bench.test"
"""Every application is captured under a made-up host of this reserved domain (RFC 2606), never a real one."""


@dataclass(frozen=True)
class Application:
    """A real web application, pinned, filled with packaged data, and started on 127.0.0.1.

    ``start(cache, work)`` installs what is missing under ``cache`` (reused across builds), writes the
    application's files and data under ``work`` (fresh for each build) and serves it until the block ends,
    with every call to the internet switched off. The server answers under :attr:`host` (the capture maps that
    host to it, and the application is configured to call itself by that name).
    """

    name: str
    """Short id, also the first label of the host: ``wiki`` serves ``wiki.bench.test``."""
    title: str
    """The application's own name, as its project spells it (``MediaWiki``)."""
    kind: str
    """What sort of application it is: wiki, tracker, code, data, docs, dashboard, map, shop."""
    version: str
    """The pinned version of the application (and of its platform where that matters)."""
    source: str
    """Where it is installed from: ``Debian 12 mediawiki 1:1.39.17-1+deb12u2``, ``PyPI datasette==0.65.1``."""
    licence: str
    """The application's licence (SPDX identifier where one exists)."""
    data: str
    """The data it is filled with and the packages (with versions) that data ships in."""
    start: Callable[[Path, Path], AbstractContextManager[Server]]
    static: bool = False
    """Whether it answers every query of a page with the same file whose scripts read the query (a client-side
    search, a list sorted in the page): replayed with the nearest-query rule, which then gives such a page for a
    query the capture never sent. Every other application is replayed strictly, so that a filter or sort the
    capture never saw is a miss and not another state's page."""

    @property
    def host(self) -> str:
        """The made-up host the application is captured under."""
        return f"{self.name}{HOST_SUFFIX}"

    @property
    def origin(self) -> str:
        """``http://`` + :attr:`host`: the applications are served over plain HTTP, as on an intranet."""
        return f"http://{self.host}"

    def map_args(self, server: Server) -> list[str]:
        """The capture's ``--map`` values: the host to the server, and any other local origin it loads from."""
        return [f"{self.host}=127.0.0.1:{server.port}", *server.extra_maps]
