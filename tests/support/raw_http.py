"""One HTTP/1.1 request over a raw socket (plain or TLS), and the response's bytes exactly as they arrived."""

from __future__ import annotations

import asyncio
import re
import ssl
from urllib.parse import urlsplit

_LENGTH = re.compile(rb"\r\ncontent-length: *(\d+)\r\n", re.IGNORECASE)


def _insecure() -> ssl.SSLContext:
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE  # the replay's own certificate; what is compared is the bytes
    return context


def host_and_target(url: str) -> tuple[str, str]:
    """The ``Host`` header and the request target that ask a replay server for ``url``."""
    parts = urlsplit(url)
    return parts.netloc, (parts.path or "/") + (f"?{parts.query}" if parts.query else "")


async def raw_get(port: int, url: str, *, tls: bool, extra: str = "", method: str = "GET") -> bytes:
    """The whole response (status line, headers, body by its Content-Length) to one request for ``url``."""
    host, path = host_and_target(url)
    reader, writer = await asyncio.open_connection(
        "127.0.0.1", port, ssl=_insecure() if tls else None, server_hostname=host.split(":")[0] if tls else None
    )
    try:
        writer.write(f"{method} {path} HTTP/1.1\r\nHost: {host}\r\nAccept-Encoding: gzip\r\n{extra}\r\n".encode())
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 30)
        found = _LENGTH.search(head)
        size = int(found.group(1)) if found and method != "HEAD" else 0
        body = await asyncio.wait_for(reader.readexactly(size), 30)
        return head + body
    finally:
        writer.close()


_DATE = re.compile(rb"\r\nDate: ([A-Z][a-z]{2}, \d\d [A-Z][a-z]{2} \d{4} \d\d:\d\d:\d\d GMT)\r\n")


def clock_dates_masked(response: bytes) -> bytes:
    """``response`` with a ``Date`` value within a minute of now (one the server's clock wrote, not the
    archive) replaced by ``-``: the one header two servers may rightly disagree on, a second apart."""
    from email.utils import parsedate_to_datetime
    from time import time

    found = _DATE.search(response)
    if found is None or abs(parsedate_to_datetime(found.group(1).decode()).timestamp() - time()) > 60:
        return response
    return response[: found.start(1)] + b"-" + response[found.end(1) :]
