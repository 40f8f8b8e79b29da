"""One HTTP/1.1 request over a raw socket (plain or TLS), and the response's bytes exactly as they arrived."""

from __future__ import annotations

import asyncio
import re
import socket
import ssl
import struct

from tests.support.load import target

_LENGTH = re.compile(rb"\r\ncontent-length: *(\d+)\r\n", re.IGNORECASE)


def _insecure() -> ssl.SSLContext:
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE  # the replay's own certificate; what is tested is the bytes or the hang-up
    return context


def start_reading(port: int, url: str, *, tls: bool, read: int = 4096) -> tuple[socket.socket, bytes]:
    """Ask for ``url`` with a ``read``-byte receive buffer and read its first ``read`` bytes; the socket stays
    open with the rest unread, so the server is still sending (for clients that hang up midway)."""
    host, path = target(url)
    raw = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, read)
    raw.settimeout(10)
    raw.connect(("127.0.0.1", port))
    conn = _insecure().wrap_socket(raw, server_hostname=host) if tls else raw
    try:
        conn.sendall(f"GET {path} HTTP/1.1\r\nHost: {host}\r\nAccept-Encoding: gzip\r\n\r\n".encode())
        got = b""
        while len(got) < read:
            chunk = conn.recv(read - len(got))
            if not chunk:
                break
            got += chunk
    except BaseException:
        conn.close()
        raise
    return conn, got


def hang_up(conn: socket.socket, *, reset: bool) -> None:
    """Close ``conn``; with ``reset``, abortively (an RST instead of a FIN)."""
    if reset:
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    conn.close()


async def raw_get(port: int, url: str, *, tls: bool, extra: str = "", method: str = "GET") -> bytes:
    """The whole response (status line, headers, body by its Content-Length) to one request for ``url``."""
    host, path = target(url)
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
