"""The benchmark's applications by name, each imported only when asked for (its builder may be slow to import)."""

from __future__ import annotations

import importlib

from capreplay.benchmark.application import Application
from capreplay.errors import UsageError

BUILDERS: dict[str, str] = {
    "data": "datasette_app",
    "tracker": "trac_app",
    "wiki": "mediawiki_app",
    "code": "gitweb_app",
    "maps": "leaflet_app",
    "dashboard": "sbadmin_app",
    "docs": "sphinx_docs_app",
    "shop": "oscar_app",
}
"""Application name -> its builder module in :mod:`capreplay.benchmark.apps` (which defines ``APP``)."""


def names() -> list[str]:
    """Every application's name, in the order the benchmark lists them."""
    return list(BUILDERS)


def application(name: str) -> Application:
    """The application ``name``; UsageError naming the known ones if there is none."""
    module = BUILDERS.get(name)
    if module is None:
        raise UsageError(f"no benchmark application {name!r}; known: {', '.join(BUILDERS)}")
    app: Application = importlib.import_module(f"capreplay.benchmark.apps.{module}").APP
    return app
