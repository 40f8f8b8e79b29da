"""The viewer's server: the app of :mod:`capreplay.view.app` on one 127.0.0.1 port."""

from __future__ import annotations

from collections.abc import Callable

from aiohttp import web

from capreplay.util.local_server import LocalServer
from capreplay.view.app import make_app
from capreplay.view.sheets import decide_route
from capreplay.view.site import Site


class ViewServer(LocalServer):
    """Serves the site ``build`` makes (rebuilt on each front-page request); ``port=0`` picks a free port."""

    def __init__(self, build: Callable[[], Site], port: int = 0) -> None:
        """Serve ``build``'s site on ``port``."""
        super().__init__(port)
        self.build = build

    def application(self) -> web.Application:
        """The viewer's app, with the review sheets' decision route."""
        return make_app(self.build, [decide_route()])

    @property
    def url(self) -> str:
        """The front page's address."""
        return f"http://127.0.0.1:{self.port}/"
