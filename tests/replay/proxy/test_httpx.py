"""httpx through the snapshot proxy: every archived response byte for byte, on both schemes; other hosts refused.

httpx2 is the httpx the core environment holds (the Anthropic SDK's); its API is httpx's.
"""

from __future__ import annotations

import base64
import ssl
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from capreplay.replay.proxy.serve import ProxyInfo, serve_proxy
from capreplay.replay.server import ReplayServer, ServeInfo


@dataclass(frozen=True)
class Proxied:
    server: ReplayServer
    direct: ServeInfo
    proxy: ProxyInfo

    def client(self) -> httpx.AsyncClient:
        """An httpx client that goes through the proxy and trusts the snapshot's CA (and nothing from the
        environment: no proxy variables, no netrc)."""
        tls = ssl.create_default_context(cafile=str(self.proxy.ca_cert))
        tls.verify_flags |= ssl.VERIFY_X509_STRICT  # as Python 3.13 and later check by default
        return httpx.AsyncClient(proxy=f"http://127.0.0.1:{self.proxy.proxy_port}", verify=tls, trust_env=False)


@pytest.fixture
async def proxied(committed_snapshot: Path) -> AsyncIterator[Proxied]:
    server = ReplayServer(committed_snapshot)
    direct = await server.start()
    try:
        async with serve_proxy(server.store, served=server.served) as proxy:
            yield Proxied(server, direct, proxy)
    finally:
        await server.stop()


async def _fetch(client: httpx.AsyncClient, method: str, url: str, **kwargs: object) -> tuple[httpx.Response, bytes]:
    """The response and its body as it crossed the wire (Content-Encoding not undone)."""
    async with client.stream(method, url, **kwargs) as response:  # type: ignore[arg-type]
        raw = b"".join([chunk async for chunk in response.aiter_raw()])
    return response, raw


@pytest.mark.parametrize("scheme", ["https", "http"])
async def test_every_archived_response_comes_through_byte_for_byte(proxied: Proxied, scheme: str) -> None:
    store = proxied.server.store
    entries = list(store.entries())
    assert len(entries) == 27  # the committed snapshot's index: GETs, a CORS preflight and a form POST
    async with proxied.client() as client:
        for ref, entry in entries:
            archived = store.record(ref)
            url = scheme + entry.url.removeprefix("https")
            body = base64.b64decode(entry.post_body) if entry.post_body else None
            response, raw = await _fetch(client, entry.method, url, content=body)
            assert response.status_code == entry.status, url
            assert raw == archived.payload, url
            sent = {(k.lower(), v) for k, v in response.headers.multi_items()}
            kept = {(k.lower(), v) for k, v in archived.http_headers}
            # Nothing is added but the length; what is archived keeps its value (hop-by-hop ones are dropped).
            length = set() if entry.status in (204, 304) else {("content-length", str(len(raw)))}
            assert sent - kept <= length and {k for k, _ in length} <= {k for k, _ in sent}, url
            assert archived.http_header("content-type") == response.headers.get("content-type"), url
    results = {(s.method, s.result, s.rule) for s in proxied.server.served}
    # Over http, every answer is the https capture's, through the rule that says so.
    how = ("hit", None) if scheme == "https" else ("fuzzy", "ignore-scheme")
    assert results == {(method, *how) for method in ("GET", "OPTIONS", "POST")}
    assert {s.port for s in proxied.server.served} == {proxied.proxy.proxy_port}


async def test_a_post_is_matched_by_its_body(proxied: Proxied) -> None:
    async with proxied.client() as client:
        form = {"name": "Ada Lovelace", "qty": "3", "size": "M"}
        hit = await client.post("https://www.shop.test/form/submit", data=form)
        other = await client.post("https://www.shop.test/form/submit", data={**form, "qty": "4"})
    assert hit.status_code == 200 and b"Ada Lovelace" in hit.content
    first, second = proxied.server.served
    assert (first.method, first.result, first.rule) == ("POST", "hit", None)
    # Another body is still this form's answer, but only through the documented rule, and the log says so.
    assert (second.result, second.rule) == ("fuzzy", "nearest-body") and other.status_code == 200


async def test_the_proxy_answers_exactly_as_the_replay_server(proxied: Proxied) -> None:
    urls = ["https://www.shop.test/", "https://www.shop.test/missing?x=1", "https://api.data.test/v1/ping.json?_=1",
            "https://static.cdn.test/css/shop.css"]  # fmt: skip
    tls = ssl.create_default_context()
    tls.check_hostname, tls.verify_mode = False, ssl.CERT_NONE
    async with proxied.client() as client, httpx.AsyncClient(verify=tls, trust_env=False) as direct:
        for url in urls:
            host = url.split("/")[2]
            path = url.split(host, 1)[1]
            by_proxy, proxy_raw = await _fetch(client, "GET", url, headers={"Range": "bytes=0-9"})
            by_server, server_raw = await _fetch(
                direct, "GET", f"https://127.0.0.1:{proxied.direct.https_port}{path}",
                headers={"Host": host, "Range": "bytes=0-9"},
            )  # fmt: skip
            assert (by_proxy.status_code, proxy_raw) == (by_server.status_code, server_raw), url
            # aiohttp adds its Server, Date and a default Content-Type; the proxy adds nothing.
            assert set(by_proxy.headers.multi_items()) <= set(by_server.headers.multi_items()), url
    by_proxy_log = [(s.method, s.url, s.result, s.rule, s.nearest, s.status, s.archived) for s in proxied.server.served]
    assert by_proxy_log[0::2] == by_proxy_log[1::2]  # the same record from either server, port aside
    assert [s.result for s in proxied.server.served[0::2]] == ["hit", "miss", "fuzzy", "hit"]
    assert proxied.server.served[0].status == 206  # the Range was served as the replay server serves it


async def test_a_host_outside_the_snapshot_is_refused_on_both_schemes(proxied: Proxied) -> None:
    async with proxied.client() as client:
        plain = await client.get("http://example.com/")
        mitm = await client.get("http://mitm.it/")  # mitmproxy's own pages are off
        with pytest.raises(httpx.ProxyError, match="403"):
            await client.get("https://example.com/")
        with pytest.raises(httpx.ProxyError, match="403"):
            await client.get("https://www.shop.test:8443/")  # an archived host, on a port it was never served on
    assert plain.status_code == 403 and b"http://example.com/ is not in the snapshot" in plain.content
    assert mitm.status_code == 403 and plain.headers["x-capreplay"] == "refused"
    # Refusals are not answers from the archive: the log has none of them.
    assert proxied.server.served == []


async def test_a_request_whose_host_header_leaves_the_snapshot_is_refused(proxied: Proxied) -> None:
    async with proxied.client() as client:
        response = await client.get("https://www.shop.test/", headers={"Host": "example.com"})
    assert response.status_code == 403 and b"example.com" in response.content
