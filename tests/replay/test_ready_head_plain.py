"""A ready response's head handed to aiohttp's serializer as plain pairs is the head its CIMultiDict gives.

Hand-written headers at the edges of the plain way: names in any case, names that merely contain a header's
name, repeated names, the headers replay drops, control characters aiohttp refuses, a tab it accepts,
non-ASCII text, a name holding a line break (which the plain way must leave to the CIMultiDict). Each must
give what the CIMultiDict way gives, and a few the literal bytes written here.
"""

from __future__ import annotations

import pytest
from aiohttp.http import SERVER_SOFTWARE

from capreplay.replay.ready.builder import ready_head, response_head
from capreplay.replay.ready.responses import DATE_PLACEHOLDER
from capreplay.replay.response import Outgoing

STATUS = "HTTP/1.1 200 OK"
SERVER = f"Server: {SERVER_SOFTWARE}\r\n".encode()
DATE = f"Date: {DATE_PLACEHOLDER}\r\n".encode()

CASES = [
    [],
    [("Content-Type", "text/html")],
    [("content-type", "text/html"), ("DATE", "Mon, 01 Jan 2024 00:00:00 GMT")],
    [("X-Content-Type", "a"), ("Datex", "b"), ("Dat", "c"), ("X-Server", "d")],
    [("Server", "nginx"), ("server", "again")],
    [("Set-Cookie", "a=1"), ("Set-Cookie", "b=2"), ("Date", "")],
    [("X-Tab", "a\tb"), ("X-Latin", "caf\xe9 \xff")],
    [("\xc4rger", "yes"), ("\u212a", "kelvin")],
    [("Content-Lengthy", "1"), ("Connections", "2"), ("X-Transfer-Encoding", "3")],
    [("Content-Length", "3")],
    [("CONNECTION", "close")],
    [("transfer-encoding", "chunked")],
    [("X-Bad", "a\nb")],
    [("X-Bad", "a\rb")],
    [("X-Bad", "a\x00b")],
    [("X\x7f", "a")],
    [("Da\nte", "a")],
    [("X\nConnection", "a"), ("Date", "b")],
    [("X-Surrogate", "\ud800")],
    [("", "empty name")],
]


@pytest.mark.parametrize("headers", CASES, ids=repr)
@pytest.mark.parametrize("body", [b"", b"xyz"], ids=["empty", "body"])
def test_the_plain_way_gives_the_cimultidicts_head(headers: list[tuple[str, str]], body: bytes) -> None:
    assert response_head(STATUS, headers, body, plain=True) == response_head(STATUS, headers, body)


def test_literal_heads() -> None:
    assert ready_head(Outgoing(200, "OK", [], b"")) == (
        b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n" + DATE + SERVER + b"\r\n",
        len(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nDate: "),
    )
    headers = [("content-type", "text/html"), ("DATE", "Mon"), ("X-Latin", "caf\xe9")]
    assert ready_head(Outgoing(404, "", headers, b"abc")) == (
        b"HTTP/1.1 404 Not Found\r\ncontent-type: text/html\r\nDATE: Mon\r\nX-Latin: caf\xc3\xa9\r\n"
        b"Content-Length: 3\r\n" + SERVER + b"\r\n",
        -1,
    )
    assert ready_head(Outgoing(200, "OK", [("Connection", "close")], b"x")) is None
    assert ready_head(Outgoing(200, "OK", [("X-Bad", "a\x00b")], b"x")) is None
    # aiohttp's writer leaves a lone surrogate out
    assert response_head(STATUS, [("X-Surrogate", "\ud800")], b"x", plain=True) == (
        b"HTTP/1.1 200 OK\r\nX-Surrogate: \r\nContent-Length: 1\r\nContent-Type: application/octet-stream\r\n"
        + DATE
        + SERVER
        + b"\r\n",
        True,
    )
