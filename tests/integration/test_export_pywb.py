"""The exported WACZ read by real clients: pywb 2.10 replays every archived response, py-wacz validates the
file, warcio checks the WARCs.

pywb and py-wacz are installed into ``.cache/pywb-2.10`` and ``.cache/py-wacz-0.6`` (environments of their
own; see :mod:`capreplay.testing.pywb`) by the first run and reused afterwards; if they cannot be
installed, these tests fail with the installer's own output.
The expected bytes come from the snapshot's WARC read with warcio alone, never from capreplay's reader or
from the WACZ being tested, and each request goes to pywb as the browser sent it (method, body, type).

What pywb 2.10 returns in ``id_`` mode, as these tests pin down:
- a gzip response: the stored gzip bytes with ``Content-Encoding: gzip`` when the client accepts gzip;
  otherwise pywb decodes it and renames the header to ``X-Archive-Orig-Content-Encoding``;
- a response that came chunked (stored de-chunked with a Content-Length): the stored bytes;
- a 206: status 206, the stored ``Content-Range`` and the stored bytes (the client's Range is not needed);
- a 301/302: the stored status and ``Location`` (relative ones stay relative), not followed;
- a POST or OPTIONS: found only when asked with the same method (and body), as the keys fold them in.
"""

from __future__ import annotations

import gzip
import hashlib
import http.client
import json
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import pytest
from warcio.archiveiterator import ArchiveIterator
from warcio.timeutils import iso_date_to_timestamp

from capreplay.archive.index.method_query import method_query, url_with_method
from capreplay.archive.index.pywb_urlkey import pywb_urlkey
from capreplay.archive.wacz.export import export_wacz
from capreplay.errors import CapreplayError
from capreplay.testing.pywb import ToolInstall, Wayback, add_collection, running_wayback
from tests.support.paths import ROOT
from tests.support.pywb import INTEROP, TRICKY_URLS

pytestmark = pytest.mark.slow

SNAPSHOT = ROOT / "snapshots" / "fixtures"
WARC = "archive/data-00000.warc.gz"
COLLECTION = "coll"
HTTP_TIMEOUT = 30.0


@dataclass(frozen=True)
class Archived:
    """One response of the snapshot, read with warcio, and the request that asked for it."""

    url: str
    timestamp: str
    offset: int
    length: int
    method: str
    request_type: str | None
    request_body: bytes
    status: int
    headers: dict[str, str]
    """HTTP headers, names lowercased."""
    payload: bytes
    """The body as stored (Content-Encoding kept)."""


def _read_archived() -> list[Archived]:
    requests: dict[str, tuple[str, str | None, bytes]] = {}
    responses = []
    with open(SNAPSHOT / WARC, "rb") as stream:
        records = ArchiveIterator(stream)
        for record in records:
            warc = record.rec_headers
            if record.rec_type == "request":
                requests[warc.get_header("WARC-Record-ID")] = (
                    record.http_headers.protocol, record.http_headers.get_header("Content-Type"),
                    record.raw_stream.read())
            elif record.rec_type == "response":
                payload = record.raw_stream.read()
                records.read_to_end(record)
                responses.append((warc.get_header("WARC-Concurrent-To"), record, payload, records.get_record_offset(),
                                  records.get_record_length()))
    found = []
    for concurrent_to, record, payload, offset, length in responses:
        method, request_type, body = requests.get(concurrent_to, ("GET", None, b""))
        found.append(Archived(
            url=record.rec_headers.get_header("WARC-Target-URI"),
            timestamp=iso_date_to_timestamp(record.rec_headers.get_header("WARC-Date")),
            offset=offset, length=length, method=method, request_type=request_type, request_body=body,
            status=int(record.http_headers.get_statuscode()),
            headers={n.lower(): v for n, v in record.http_headers.headers}, payload=payload))
    return found


ARCHIVED = _read_archived()


@pytest.fixture(scope="module")
def wacz_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("export") / "fixtures.wacz"
    export_wacz(SNAPSHOT, out)
    return out


@pytest.fixture(scope="module")
def wayback(pywb: ToolInstall, wacz_file: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Wayback]:
    """pywb serving a collection made from the WACZ alone; stopped when the module's tests are done."""
    root = tmp_path_factory.mktemp("pywb")
    try:
        add_collection(pywb, root, COLLECTION, wacz_file)
    except CapreplayError as e:
        pytest.fail(str(e), pytrace=False)
    with running_wayback(pywb, root) as server:
        yield server


def _fetch(server: Wayback, method: str, path: str, body: bytes = b"",
           headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
    """One request, redirects not followed; status, headers (lowercased names) and body."""
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=HTTP_TIMEOUT)
    try:
        connection.request(method, path, body=body or None, headers=headers or {})
        response = connection.getresponse()
        data = response.read()
        return response.status, {n.lower(): v for n, v in response.getheaders()}, data
    finally:
        connection.close()


def _replay(server: Wayback, a: Archived, accept_encoding: str) -> tuple[int, dict[str, str], bytes]:
    headers = {"Accept-Encoding": accept_encoding}
    if a.request_type:
        headers["Content-Type"] = a.request_type
    return _fetch(server, a.method, f"/{COLLECTION}/{a.timestamp}id_/{a.url}", a.request_body, headers)


def _cdx(server: Wayback, url: str, match: str) -> list[dict[str, str]]:
    status, _, body = _fetch(server, "GET", f"/{COLLECTION}/cdx?url={quote(url, safe='')}&matchType={match}"
                                            "&output=json")
    assert status == 200, body[:300]
    return [json.loads(line) for line in body.decode("utf-8").splitlines() if line.strip()]


@pytest.mark.parametrize("archived", ARCHIVED, ids=[f"{a.method} {a.status} {a.url}" for a in ARCHIVED])
def test_pywb_replays_every_response_byte_for_byte(wayback: Wayback, archived: Archived) -> None:
    status, headers, body = _replay(wayback, archived, "gzip")
    assert status == archived.status
    assert body == archived.payload
    for name in ("content-encoding", "content-range", "location"):
        assert headers.get(name) == archived.headers.get(name), name


@pytest.mark.parametrize("archived", [a for a in ARCHIVED if a.headers.get("content-encoding") == "gzip"],
                         ids=lambda a: a.url)
def test_pywb_decodes_gzip_for_a_client_that_does_not_accept_it(wayback: Wayback, archived: Archived) -> None:
    status, headers, body = _replay(wayback, archived, "identity")
    assert status == archived.status
    assert body == gzip.decompress(archived.payload)
    assert "content-encoding" not in headers
    assert headers.get("x-archive-orig-content-encoding") == "gzip"


def test_the_fixture_has_every_kind_of_response() -> None:
    # the cases the docstring reports on must stay in the fixture snapshot
    kinds = {a.status for a in ARCHIVED} | {a.method for a in ARCHIVED}
    assert {200, 204, 206, 301, 302, "POST", "OPTIONS"} <= kinds
    assert any(a.headers.get("content-encoding") == "gzip" for a in ARCHIVED)


def test_pywb_cdx_api_lists_every_record(wayback: Wayback, wacz_file: Path) -> None:
    for a in ARCHIVED:
        listed = _cdx(wayback, a.url, "prefix")
        places = {(c["timestamp"], c["offset"], c["length"], c["url"]) for c in listed}
        assert (a.timestamp, str(a.offset), str(a.length), a.url) in places, (a.url, listed)
        assert all(c["filename"].startswith(wacz_file.stem) for c in listed)


def test_every_page_of_pages_jsonl_opens_in_pywb(wayback: Wayback, wacz_file: Path) -> None:
    with zipfile.ZipFile(wacz_file) as archive:
        pages = [json.loads(line) for line in archive.read("pages/pages.jsonl").splitlines()[1:]]
    assert len(pages) == 9
    for page in pages:
        assert [c["url"] for c in _cdx(wayback, page["url"], "exact")] == [page["url"]]
        timestamp = "".join(ch for ch in page["ts"] if ch.isdigit())
        status, _, _ = _fetch(wayback, "GET", f"/{COLLECTION}/{timestamp}id_/{page['url']}")
        assert status in (200, 301, 302), page


def test_index_equals_pywbs_own_indexer(pywb: ToolInstall, wacz_file: Path, tmp_path: Path) -> None:
    with zipfile.ZipFile(wacz_file) as archive:
        ours = gzip.decompress(archive.read("indexes/index.cdx.gz")).decode("utf-8").splitlines()
        (tmp_path / "data-00000.warc.gz").write_bytes(archive.read(WARC))
    done = subprocess.run([pywb.tool("cdx-indexer"), "--cdxj", "--sort", "--postappend", "data-00000.warc.gz"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120, check=True)
    assert ours == done.stdout.splitlines()




def _interop_urls() -> list[str]:
    """Every target URL of the WARCs other tools wrote (test data outside the repository, where present)."""
    urls = []
    for path in sorted(INTEROP.rglob("*.warc*")) if INTEROP.is_dir() else []:
        with open(path, "rb") as stream:
            urls += [r.rec_headers.get_header("WARC-Target-URI") for r in ArchiveIterator(stream)]
    return [u for u in urls if u]


def test_urlkeys_equal_pywbs_canonicalize(pywb: ToolInstall) -> None:
    urls = sorted({*TRICKY_URLS, *(a.url for a in ARCHIVED), *_interop_urls()})
    script = ("import json, sys\n"
              "from pywb.utils.canonicalize import canonicalize\n"
              "print(json.dumps([canonicalize(u) for u in json.load(sys.stdin)]))\n")
    done = subprocess.run([pywb.tool("python"), "-c", script], input=json.dumps(urls), capture_output=True, text=True,
                          timeout=120, check=True)
    theirs = dict(zip(urls, json.loads(done.stdout), strict=True))
    assert {u: pywb_urlkey(u) for u in urls} == theirs


def test_method_query_equals_pywbs(pywb: ToolInstall) -> None:
    cases = [
        ("POST", "application/x-www-form-urlencoded", b"a=1&b=x+y%21&c=%E2%82%AC"),
        ("PUT", "application/x-www-form-urlencoded; charset=UTF-8", b"a=1"),
        ("POST", "application/json", b'{"a": 1, "b": [true, false, null, 2.0, 2.5], "c": {"a": "x y"}}'),
        ("POST", "application/json", b"{broken"),
        ("POST", "text/plain;charset=UTF-8", b'{"k": "v"}'),
        ("POST", "text/plain", b"hello"),
        ("POST", "application/octet-stream", bytes(range(256))),
        ("POST", "multipart/form-data; boundary=XyZ",
         b'--XyZ\r\nContent-Disposition: form-data; name="a"\r\n\r\n1 2\r\n'
         b'--XyZ\r\nContent-Disposition: form-data; name="b"\r\n\r\nz\r\n--XyZ--\r\n'),
        ("POST", "application/x-www-form-urlencoded", b"a=" + b"x" * 5000),
        ("OPTIONS", None, b""),
        ("DELETE", None, b""),
        ("GET", None, b""),
    ]
    script = (
        "import json, sys, io\n"
        "from pywb.warcserver.inputrequest import MethodQueryCanonicalizer as M\n"
        "for method, mime, body in json.load(sys.stdin):\n"
        "    data = body.encode('latin-1')\n"
        "    q = M(method, mime, len(data), io.BytesIO(data))\n"
        "    print(json.dumps(q.append_query('https://example.com/p')))\n"
    )
    payload = json.dumps([(m, t, b.decode("latin-1")) for m, t, b in cases])
    done = subprocess.run([pywb.tool("python"), "-c", script], input=payload, capture_output=True, text=True,
                          timeout=120, check=True)
    theirs = [json.loads(line) for line in done.stdout.splitlines()]
    ours = []
    for method, content_type, body in cases:
        folded = method_query(method, content_type, body)
        ours.append("https://example.com/p" if folded is None else url_with_method("https://example.com/p", folded[0]))
    assert ours == theirs


def test_py_wacz_validates_the_file(py_wacz: ToolInstall, wacz_file: Path) -> None:
    # checks the required files, the data package against the Frictionless schema, and every hash
    done = subprocess.run([py_wacz.tool("wacz"), "validate", "-f", str(wacz_file)], capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Version detected as 1.1.1" in done.stdout and "is valid" in done.stdout, done.stdout


def test_exported_warcs_pass_warcio_check(wacz_file: Path, tmp_path: Path) -> None:
    with zipfile.ZipFile(wacz_file) as archive:
        names = [n for n in archive.namelist() if n.startswith("archive/")]
        archive.extractall(tmp_path, members=names)
    warcio = Path(sys.executable).parent / "warcio"
    done = subprocess.run([str(warcio), "check", "-v", *names], cwd=tmp_path, capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "digest pass" in done.stdout


def test_datapackage_digests_hold_for_a_fresh_reader(wacz_file: Path) -> None:
    with zipfile.ZipFile(wacz_file) as archive:
        members = {info.filename: info for info in archive.infolist()}
        package_bytes = archive.read("datapackage.json")
        digest = json.loads(archive.read("datapackage-digest.json"))
        assert digest["path"] == "datapackage.json"
        assert digest["hash"] == "sha256:" + hashlib.sha256(package_bytes).hexdigest()
        package = json.loads(package_bytes)
        listed = {r["path"]: r for r in package["resources"]}
        assert set(listed) | {"datapackage.json", "datapackage-digest.json"} == set(members)
        for path, resource in listed.items():
            data = archive.read(path)
            assert resource["hash"] == "sha256:" + hashlib.sha256(data).hexdigest(), path
            assert resource["bytes"] == len(data) == members[path].file_size, path
        assert all(members[p].compress_type == zipfile.ZIP_STORED for p in listed if p.startswith("archive/"))
        assert archive.read(WARC) == (SNAPSHOT / WARC).read_bytes()
