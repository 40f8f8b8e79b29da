"""The load tests' shared pieces: the synthetic snapshot's shape and an independent reading of its responses,
and a client that asks the replay server as a browser would.

The archived responses are read here with ``iter_records`` (a scan of the WARCs), not through the replay
store's index and offsets, so the tests compare what the server sent with an independent reading.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import aiohttp
from yarl import URL

from capreplay.archive.warc.read import iter_records

RECORDS = 2_000
LARGE = 2
"""8 MiB videos added to the snapshot, for clients that hang up in the middle of a large response."""
SEED = 11


@dataclass(frozen=True)
class Archived:
    """One archived response: what the server must send back, byte for byte."""

    status: int
    body: bytes


@dataclass(frozen=True)
class SynthSnapshot:
    """The session's synthetic snapshot and every response in it."""

    path: Path
    urls: list[str]
    """The ordinary responses' URLs in capture order (the large videos are in :attr:`large`)."""
    large: list[str]
    responses: dict[str, Archived]


def read_responses(root: Path) -> dict[str, Archived]:
    """Every response of the snapshot at ``root`` by URL, read by scanning its WARCs."""
    out: dict[str, Archived] = {}
    for warc in sorted((root / "archive").glob("*.warc.gz")):
        with open(warc, "rb") as stream:
            for rec in iter_records(stream, str(warc)):
                if rec.rec_type == "response" and rec.url:
                    out[rec.url] = Archived(rec.status or 0, rec.payload)
    return out


def target(url: str) -> tuple[str, str]:
    """The ``Host`` header and the request target (path and query) a browser sends for ``url``."""
    parts = urlsplit(url)
    return parts.netloc, (parts.path or "/") + (f"?{parts.query}" if parts.query else "")


async def fetch(session: aiohttp.ClientSession, port: int, url: str) -> tuple[int, bytes]:
    """GET ``url`` from the local server as a browser would (its ``Host``, gzip accepted); raw body."""
    host, path = target(url)
    request_url = URL(f"http://127.0.0.1:{port}{path}", encoded=True)
    headers = {"Host": host, "Accept-Encoding": "gzip, deflate, br"}
    async with session.get(request_url, headers=headers, allow_redirects=False) as response:
        return response.status, await response.read()


def client_session(connections: int) -> aiohttp.ClientSession:
    """A client that keeps ``connections`` connections alive and never decodes bodies (they are compared raw)."""
    connector = aiohttp.TCPConnector(limit=connections, limit_per_host=connections)
    return aiohttp.ClientSession(connector=connector, auto_decompress=False, timeout=aiohttp.ClientTimeout(total=60))
