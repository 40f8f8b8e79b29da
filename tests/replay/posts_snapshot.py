"""A snapshot of a page whose scripts POST: RPCs with a request counter, GraphQL, a multipart form, a beacon.

Written as a WARC record by record (fixed ids and dates) and imported with ``capreplay import``'s library
call, so the tests replay a real WARC through the real index.
"""

from __future__ import annotations

import json
from pathlib import Path

from capreplay.archive.importer.snapshot import ImportOptions, import_archives
from capreplay.capture.session import DEFAULT_SEED
from tests.support.foreign_warc import gz, page, request

SITE = "https://www.posts.test"
GEN_204 = f"{SITE}/gen_204?s=webhp&atyp=csi&rt=wsrt.966,aft.291"
"""Recorded as an image GET, as 2018 pages sent it; today's Chromium sends it with ``sendBeacon``."""
RPC = f"{SITE}/api/rpc"
GRAPHQL = f"{SITE}/graphql"
FORM = f"{SITE}/upload"

PAGE = b"<!doctype html><title>Posts</title><p>posts</p>"
_JSON = [("Content-Type", "application/json")]


def graphql(name: str, variables: dict[str, str]) -> bytes:
    """A GraphQL request body as a client sends it."""
    query = f"query {name}($id: ID) {{ item(id: $id) {{ name }} }}"
    return json.dumps({"operationName": name, "variables": variables, "query": query}).encode()


# (method, URL, request body, response body): the captured exchanges, in capture order
EXCHANGES: list[tuple[str, str, bytes, bytes]] = [
    ("GET", f"{SITE}/", b"", PAGE),
    ("GET", GEN_204, b"", b"GIF89a"),
    ("POST", f"{RPC}?_reqid=1001&rt=c", b'{"q": "tents", "sent": 1520301385}', b'{"answer": "tents"}'),
    ("POST", f"{RPC}?_reqid=2001&rt=c", b'{"q": "stoves", "sent": 1520301390}', b'{"answer": "stoves"}'),
    ("POST", GRAPHQL, graphql("Product", {"id": "2"}), b'{"data": {"product": "Tarn 2"}}'),
    ("POST", GRAPHQL, graphql("Reviews", {"id": "1"}), b'{"data": {"reviews": "for 1"}}'),
    ("POST", FORM, b'--AaB03x\r\nContent-Disposition: form-data; name="note"\r\n\r\nhello\r\n--AaB03x--\r\n',
     b'{"stored": "hello"}'),
]  # fmt: skip


def make_posts_snapshot(folder: Path) -> Path:
    """Write the WARC of :data:`EXCHANGES` into ``folder`` and import it; returns the snapshot folder."""
    records = []
    for i, (method, url, body, answer) in enumerate(EXCHANGES):
        headers = None if url == f"{SITE}/" else (_JSON if answer.startswith(b"{") else [("Content-Type", "image/gif")])
        records += [page(2 * i + 1, url, answer, headers=headers), request(2 * i + 2, url, 2 * i + 1, method, body)]
    warc = folder / "posts.warc.gz"
    warc.write_bytes(gz(*records))
    out = folder / "snapshot"
    import_archives(ImportOptions(inputs=[warc], out=out, random_seed=DEFAULT_SEED, pages=[f"{SITE}/"]))
    return out
