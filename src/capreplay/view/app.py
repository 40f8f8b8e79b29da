"""The viewer as an aiohttp application on 127.0.0.1: GET answers from the site, nothing else is served.

The site is built again for every front-page request, so a run that grows while the viewer is open shows
its new episodes on a reload; any other page comes from the site as last built. The one write the viewer
makes is a review sheet's decision (``POST sheets/<name>/decide``), through :mod:`capreplay.view.sheets`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from aiohttp import web

from capreplay.errors import CapreplayError, os_reason
from capreplay.view.index_page import INDEX
from capreplay.view.site import Site


@dataclass
class Viewer:
    """The state the app serves: how to build the site, and the site last built."""

    build: Callable[[], Site]
    site: Site


VIEWER = web.AppKey("viewer", Viewer)
"""The viewer the app serves."""


async def _get(request: web.Request) -> web.StreamResponse:
    viewer = request.app[VIEWER]
    path = request.match_info["path"] or INDEX
    if path.endswith("/"):
        path += INDEX
    if path == INDEX:
        viewer.site = viewer.build()
    entry = viewer.site.get(path)
    if entry is None and f"{path}/{INDEX}" in viewer.site:
        raise web.HTTPFound(f"/{path}/{INDEX}")
    if entry is None:
        raise web.HTTPNotFound(text=f"capreplay view has no page {path!r}\n")
    try:
        body = entry.body()
    except CapreplayError as e:
        return web.Response(status=500, text=f"cannot show {path}: {e.line()}\n")
    except OSError as e:
        return web.Response(status=500, text=f"cannot show {path}: {os_reason(e)}\n")
    # Pages are made from files that change (a run grows, a sheet is decided): never cached.
    return web.Response(body=body, headers={"Content-Type": entry.content_type, "Cache-Control": "no-store"})


def make_app(build: Callable[[], Site], post_routes: list[web.RouteDef] | None = None) -> web.Application:
    """The viewer's app: GET for every path of the site ``build`` makes, plus the given POST routes."""
    app = web.Application(client_max_size=1024 * 1024)
    app[VIEWER] = Viewer(build, build())
    app.add_routes(post_routes or [])
    app.router.add_get("/{path:.*}", _get)
    return app
