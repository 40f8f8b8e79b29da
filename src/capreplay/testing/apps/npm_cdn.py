"""A local stand-in for a CDN that serves files of npm packages (``https://unpkg.com/NAME@VERSION/PATH``).

Pages such as GraphiQL load their scripts from unpkg.com. That CDN serves each file as it is in the package's
npm tarball, so the same bytes can be had from the npm registry with ``npm pack`` and served here over TLS
under the CDN's own name: a capture mapped to it archives what the real CDN would have sent, under the real
URL. The page's Subresource Integrity hashes are checked against the files before anything is served, so a
file that differs from the CDN's fails here, not as a blank page.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import mimetypes
import re
import shutil
import subprocess
import tarfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from capreplay.certs.hosts import key_pem, leaf_certificate, new_key, server_context, spki_pin
from capreplay.errors import CapreplayError
from capreplay.util.files import locked

_ASSET = re.compile(r'(?:src|href)="https://(?P<host>unpkg\.com)/(?P<spec>(?:@[^/"]+/)?[^/@"]+@[^/"]+)/(?P<path>[^"]+)"'
                    r'\s+integrity="(?P<sri>[^"]+)"')  # fmt: skip


@dataclass(frozen=True)
class Asset:
    """One file a page loads from the CDN, with the integrity hash the page demands of it."""

    host: str
    spec: str
    """``name@version`` as npm and the CDN's URL spell it."""
    path: str
    integrity: str

    @property
    def url_path(self) -> str:
        """The path part of its CDN URL."""
        return f"/{self.spec}/{self.path}"


def assets_of(html: str) -> list[Asset]:
    """Every unpkg.com script and stylesheet a page's HTML loads with an integrity hash."""
    return [Asset(m["host"], m["spec"], m["path"], m["sri"]) for m in _ASSET.finditer(html)]


def fetch_assets(assets: list[Asset], store: Path) -> dict[str, Path]:
    """The files of ``assets`` by URL path, unpacked from npm tarballs under ``store`` (fetched once, then reused)."""
    store.mkdir(parents=True, exist_ok=True)
    files: dict[str, Path] = {}
    with locked(store / ".lock"):
        for spec in sorted({a.spec for a in assets}):
            unpack_npm(spec, store)
    for asset in assets:
        file = store / asset.spec / "package" / asset.path
        if not file.is_file():
            raise CapreplayError(f"npm package {asset.spec} holds no {asset.path}", where=store / asset.spec)
        _check_integrity(file, asset)
        files[asset.url_path] = file
    return files


def unpack_npm(spec: str, store: Path) -> Path:
    """The unpacked npm package ``spec`` (``name@version``): ``store/spec/package``, fetched with ``npm pack`` once.

    Callers that may run at once hold ``store``'s lock (:func:`fetch_assets` does).
    """
    folder = store / spec
    if (folder / "package" / "package.json").is_file():
        return folder / "package"
    npm = shutil.which("npm")
    if npm is None:
        raise CapreplayError(f"npm is needed to fetch {spec} from the npm registry and was not found")
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    try:
        done = subprocess.run([npm, "pack", spec, "--json", "--pack-destination", str(folder)], capture_output=True,
                              text=True, timeout=300, check=False)  # fmt: skip
    except subprocess.TimeoutExpired as e:
        raise CapreplayError(f"npm pack {spec} did not finish within 300 s") from e
    if done.returncode != 0:
        raise CapreplayError(f"npm pack {spec} failed: {(done.stderr or done.stdout).strip()[-1000:]}")
    packed: list[dict[str, Any]] = json.loads(done.stdout)
    tarball = folder / packed[0]["filename"]
    with tarfile.open(tarball) as tar:
        tar.extractall(folder, filter="data")
    tarball.unlink()
    return folder / "package"


def _check_integrity(file: Path, asset: Asset) -> None:
    algorithm, _, expected = asset.integrity.partition("-")
    actual = base64.b64encode(hashlib.new(algorithm, file.read_bytes()).digest()).decode()
    if actual != expected:
        raise CapreplayError(f"{asset.spec}/{asset.path} does not match the page's integrity hash", where=file)


@dataclass(frozen=True)
class Cdn:
    """A running stand-in CDN: its port on 127.0.0.1, the host it answers for, its certificate's SPKI pin."""

    host: str
    port: int
    spki_pin: str

    @property
    def map_arg(self) -> str:
        """The capture's ``--map`` value for it."""
        return f"{self.host}=127.0.0.1:{self.port}"


@contextlib.contextmanager
def serving_cdn(host: str, files: dict[str, Path]) -> Iterator[Cdn]:
    """Serve ``files`` (URL path -> file) over HTTPS as ``host`` on a free port of 127.0.0.1 until the block ends.

    A thread of this process serves them, so nothing outlives the block.
    """
    key = new_key()
    context = server_context(leaf_certificate(key, [host]), key_pem(key))
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(files))
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, name=f"cdn {host}", daemon=True)
    thread.start()
    try:
        yield Cdn(host=host, port=server.server_address[1], spki_pin=spki_pin(key.public_key()))
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def _handler(files: dict[str, Path]) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        """Answers as the CDN does for a package file: the bytes, their type, long caching, open CORS."""

        def do_GET(self) -> None:
            file = files.get(self.path.split("?", 1)[0])
            if file is None:
                self.send_error(404)
                return
            body = file.read_bytes()
            self.send_response(200)
            self.send_header("Content-Type", mimetypes.guess_type(file.name)[0] or "application/octet-stream")
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "public, max-age=31536000")
            # the page loads these with crossorigin and integrity: without CORS, Chromium refuses them
            self.send_header("Access-Control-Allow-Origin", "*")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass  # the capture's own records say what was fetched

    return Handler
