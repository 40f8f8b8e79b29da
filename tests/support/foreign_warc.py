"""WARC and WACZ files as other tools write them, built byte by byte with fixed ids and dates, for tests.

Records are written by hand rather than with warcio's writer so that a test controls every byte: chunked
bodies, HTTP/2 status lines, revisits with or without HTTP headers, digests in base32 or hex. The tests of
``capreplay import`` use them; they ship in the package so that users can test their own tools with them.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import zipfile
from pathlib import Path

DATE = "2020-01-02T03:04:05Z"


def rid(n: int) -> str:
    """A fixed record id."""
    return f"<urn:uuid:00000000-0000-4000-8000-{n:012d}>"


def sha1_b32(data: bytes) -> str:
    """``data``'s digest as pywb and wget write it."""
    return "sha1:" + base64.b32encode(hashlib.sha1(data).digest()).decode()


def http(start: str, headers: list[tuple[str, str]], body: bytes = b"") -> bytes:
    """An HTTP message: start line, headers, blank line, body (sent as is)."""
    head = "".join(f"{n}: {v}\r\n" for n, v in headers)
    return f"{start}\r\n{head}\r\n".encode("latin-1") + body


def record(
    rec_type: str,
    url: str | None,
    block: bytes,
    *,
    n: int,
    date: str = DATE,
    headers: list[tuple[str, str]] | None = None,
    content_type: str | None = None,
    payload_digest: str | None = None,
) -> bytes:
    """One uncompressed WARC/1.0 record. Responses get the sha1 payload digest of what follows the head."""
    types = {"response": "application/http; msgtype=response", "request": "application/http; msgtype=request",
             "revisit": "application/http; msgtype=response", "warcinfo": "application/warc-fields"}
    lines = [("WARC-Type", rec_type), ("WARC-Record-ID", rid(n)), ("WARC-Date", date)]
    if url is not None:
        lines.append(("WARC-Target-URI", url))
    if rec_type == "response" and payload_digest is None:
        payload_digest = sha1_b32(block.split(b"\r\n\r\n", 1)[1] if b"\r\n\r\n" in block else b"")
    if payload_digest:
        lines.append(("WARC-Payload-Digest", payload_digest))
    lines += headers or []
    lines.append(("Content-Type", content_type or types.get(rec_type, "application/octet-stream")))
    lines.append(("Content-Length", str(len(block))))
    head = "WARC/1.0\r\n" + "".join(f"{k}: {v}\r\n" for k, v in lines) + "\r\n"
    return head.encode("utf-8") + block + b"\r\n\r\n"


def gz(*records: bytes) -> bytes:
    """Records as a ``.warc.gz``: one gzip member each, zero mtime so the bytes never change."""
    return b"".join(gzip.compress(r, mtime=0) for r in records)


def page(n: int, url: str, body: bytes, *, headers: list[tuple[str, str]] | None = None,
         status: str = "200 OK", date: str = DATE, warc: list[tuple[str, str]] | None = None) -> bytes:
    """A response record for ``url``: HTML unless ``headers`` say otherwise."""
    hdrs = headers if headers is not None else [("Content-Type", "text/html; charset=utf-8")]
    return record("response", url, http(f"HTTP/1.1 {status}", hdrs, body), n=n, date=date, headers=warc)


def request(n: int, url: str, of: int, method: str = "GET", body: bytes = b"") -> bytes:
    """A request record linked to response ``of``."""
    path = "/" + url.split("://", 1)[1].split("/", 1)[1] if url.count("/") > 2 else "/"
    host = url.split("://", 1)[1].split("/", 1)[0]
    return record("request", url, http(f"{method} {path} HTTP/1.1", [("Host", host)], body), n=n,
                  headers=[("WARC-Concurrent-To", rid(of))])


def warcinfo(n: int, fields: str) -> bytes:
    """A warcinfo record with ``application/warc-fields`` text."""
    return record("warcinfo", None, fields.encode(), n=n)


def wacz(path: Path, warcs: dict[str, bytes], pages: list[dict[str, str]] | None = None, *,
         tamper: str | None = None, legacy: bool = False) -> Path:
    """A WACZ holding ``warcs`` under archive/, a pages list, and a data package listing every file.

    ``tamper`` names a member whose listed digest is made wrong; ``legacy`` writes WACZ 1.0's
    ``stats``/``hashing`` form instead of ``"hash": "sha256:..."``.
    """
    files = {f"archive/{name}": data for name, data in warcs.items()}
    lines = [{"format": "json-pages-1.0", "id": "pages", "title": "All Pages"}, *(pages or [])]
    files["pages/pages.jsonl"] = "".join(json.dumps(p) + "\n" for p in lines).encode()
    resources: list[dict[str, object]] = []
    for name, data in files.items():
        digest = hashlib.sha256(data + (b"x" if name == tamper else b"")).hexdigest()
        if legacy:
            resources.append({"path": name, "stats": {"hash": digest, "bytes": len(data)}, "hashing": "sha256"})
        else:
            resources.append({"name": name.rsplit("/", 1)[1], "path": name, "hash": f"sha256:{digest}",
                              "bytes": len(data)})
    package = {"profile": "data-package", "resources": resources, "wacz_version": "1.0.0" if legacy else "1.1.1"}
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in files.items():
            zf.writestr(zipfile.ZipInfo(name, (2020, 1, 2, 3, 4, 6)), data, compress_type=zipfile.ZIP_STORED)
        zf.writestr(zipfile.ZipInfo("datapackage.json", (2020, 1, 2, 3, 4, 6)), json.dumps(package, indent=2))
    return path
