"""A plain-http origin reached through ``--map`` with many subresources: every one is captured.

The browser sends plain-http requests to the proxy on a few kept-alive connections, each carrying many
requests in turn. mitmproxy reuses a server connection only for a request to the same address and holds at
most five per address and browser connection while they stay open; a mapped connection that kept its local
address was never reused, so the sixth request on a browser connection waited forever (JupyterLab's page,
served on plain http, never finished loading).
"""

from __future__ import annotations

import base64
from pathlib import Path

import pytest
from aiohttp import web

from capreplay.archive.index.cdxj import build_index
from capreplay.capture.plan_file import parse_maps, parse_plan
from capreplay.capture.session import CaptureOptions, capture
from capreplay.util.local_server import LocalServer

pytestmark = pytest.mark.browser

HOST = "plain.reuse.test"
IMAGES = 60
"""Ten or more requests a browser connection at Chromium's six connections a host: far past mitmproxy's five."""
_GIF = base64.b64decode("R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7")


class _ManyImages(LocalServer):
    """``/`` lists :data:`IMAGES` images, loaded one after another from ``/img/N.gif``."""

    def application(self) -> web.Application:
        async def index(_: web.Request) -> web.Response:
            tags = "".join(f'<img src="/img/{n}.gif" alt="{n}">' for n in range(IMAGES))
            return web.Response(text=f"<!doctype html><title>many</title><body>{tags}</body>", content_type="text/html")

        async def image(request: web.Request) -> web.Response:
            return web.Response(body=_GIF, content_type="image/gif")

        app = web.Application()
        app.router.add_get("/", index)
        app.router.add_get("/img/{n}.gif", image)
        return app


async def test_every_request_on_a_kept_alive_plain_http_connection_is_captured(tmp_path: Path) -> None:
    out = tmp_path / "snap"
    async with _ManyImages() as origin:
        plan = parse_plan({"pages": [{"url": f"http://{HOST}/", "actions": []}]}, "plan")
        result = await capture(
            CaptureOptions(out=out, plan=plan, maps=parse_maps([f"{HOST}=127.0.0.1:{origin.port}"]), progress=False)
        )
    assert result.failed == []
    assert [page.url for page in result.manifest.pages] == [f"http://{HOST}/"]
    files = [p.relative_to(out).as_posix() for p in sorted(out.glob("archive/*.warc.gz"))]
    urls = {entry.url for entry in build_index(out, files, workers=1) if entry.method == "GET"}
    assert {f"http://{HOST}/img/{n}.gif" for n in range(IMAGES)} <= urls
