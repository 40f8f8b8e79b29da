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


PARTS: dict[str, str] = {"shopadmin": "shop", "wikiedit": "wiki"}
"""Part name -> the application it is captured from, for a part of the snapshot that is not an application of its
own: a plan (``benchmark/plans/NAME.json``) captured on a fresh build of that application, under its host. The
shop's Django admin (``shopadmin``, every URL under ``/admin/``) saves, copies and deletes the shop's records, so it
is captured on a build of its own and the shop's part keeps the pages of the untouched shop; the wiki's editing
(``wikiedit``: WikiEditor's toolbar, previews, uploads) likewise, on the wiki's editing build (:data:`BUILDS`)."""

BUILDS: dict[str, str] = {"wikiedit": "EDIT_APP"}
"""Part name -> the attribute of its application's builder module that it is captured from, where that is not the
application's own ``APP``: a build of the same application under the same host, set up for the part."""


def names() -> list[str]:
    """Every application's name, in the order the benchmark lists them."""
    return list(BUILDERS)


def part_names() -> list[str]:
    """Every part of the benchmark's snapshot, as ``freeze`` captures them: the applications, then :data:`PARTS`."""
    return [*BUILDERS, *PARTS]


def part_application(name: str) -> Application:
    """The application the part ``name`` is captured from (itself for an application); UsageError naming the known
    parts if there is none."""
    if name not in BUILDERS and name not in PARTS:
        raise UsageError(f"no benchmark application or part {name!r}; known: {', '.join(part_names())}")
    build = BUILDS.get(name)
    if build is None:
        return application(PARTS.get(name, name))
    app: Application = getattr(importlib.import_module(f"capreplay.benchmark.apps.{BUILDERS[PARTS[name]]}"), build)
    return app


def application(name: str) -> Application:
    """The application ``name``; UsageError naming the known ones if there is none."""
    module = BUILDERS.get(name)
    if module is None:
        raise UsageError(f"no benchmark application {name!r}; known: {', '.join(BUILDERS)}")
    app: Application = importlib.import_module(f"capreplay.benchmark.apps.{module}").APP
    return app
