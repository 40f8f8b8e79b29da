"""Every WARC and WACZ that other tools wrote (``../shared/interop/``) imports, and its pages replay offline.

Each file is imported with ``capreplay import`` and verified with ``capreplay verify DIR --json`` in a real
Chromium. A page may ask for a URL the crawl never fetched (a favicon, say): that miss is the file's
limit, not the import's. A miss for any URL the file holds a response or revisit record for fails the
test, as does a page that does not load. The files are test data of other projects and are never
copied into this repository; without the folder the tests skip, naming what is missing.
"""

from __future__ import annotations

import json
import zipfile
from io import BytesIO
from pathlib import Path
from typing import Any

import pytest
from warcio.archiveiterator import ArchiveIterator

from capreplay.archive.importer.snapshot import ImportOptions, import_archives
from capreplay.archive.snapshot.manifest import checked_manifest
from capreplay.capture.session import DEFAULT_SEED
from capreplay.cli import main
from capreplay.judge.archived import ArchivedLookup
from capreplay.replay.rules import normalize_url
from capreplay.replay.store import SnapshotStore
from tests.support.cli import cli

REPO = Path(__file__).resolve().parents[2]
INTEROP = REPO.parent / "shared" / "interop"
FILES = {
    # file: the pages the import finds in it
    "webrecorder+pywb/sample_archive/warcs/iana.warc.gz": 16,
    "webrecorder+pywb/sample_archive/warcs/example.warc.gz": 1,
    "webrecorder+pywb/sample_archive/warcs/dupes.warc.gz": 1,
    "webrecorder+pywb/sample_archive/warcs/example-wget-1-14.warc.gz": 1,
    "webrecorder+pywb/sample_archive/warcs/example-wpull.warc.gz": 1,
    "webrecorder+pywb/sample_archive/warcs/post-test.warc.gz": 0,  # POST responses (JSON) only
    "webrecorder+pywb/sample_archive/waczs/valid_example_1.wacz": 1,
    "webrecorder+py-wacz/tests/fixtures/example-iana.warc": 6,
    "webrecorder+py-wacz/tests/fixtures/example-collection-with-lists.warc": 6,
    "webrecorder+py-wacz/tests/fixtures/valid_signed_example_1.wacz": 1,
    "oduwsdl+ipwb/samples/warcs/froggie.warc.gz": 1,  # wget 1.18: request URIs in angle brackets
    "webrecorder+replayweb.page/mkdocs/site/docs/examples/example.wacz": 1,
    "webrecorder+replayweb.page/mkdocs/site/docs/examples/iframetest.wacz": 1,  # its pages.jsonl: not the iframe
    # Facebook's xd_arbiter frame (another host, the page as its Referer, no Sec-Fetch headers) is no page
    "servo+servo-warc-tests/collections/Instagram/archive/rec-20180907170953004391-Aravk-Pavilion.warc.gz": 1,
    "servo+servo-warc-tests/collections/Baidu/archive/rec-20180221105728786818-PUCHE.warc.gz": 1,
    "servo+servo-warc-tests/collections/GoogleJapan/archive/rec-20181019014945590275-goller.warc.gz": 1,
    "servo+servo-warc-tests/collections/GoogleUK/archive/rec-20181019023222666572-goller.warc.gz": 1,
    "servo+servo-warc-tests/collections/GoogleBR/archive/rec-20181019023634718377-goller.warc.gz": 1,
    "servo+servo-warc-tests/collections/Twitter/archive/rec-20180328223922567597-userland.warc.gz": 1,
    "servo+servo-warc-tests/collections/VK/archive/rec-20180405000401368619-userland.warc.gz": 1,
    "servo+servo-warc-tests/collections/Facebook/archive/rec-20180223071721835292-cook-190.warc.gz": 1,  # no frame
    "servo+servo-warc-tests/collections/GoogleDE/archive/rec-20181019020927541485-goller.warc.gz": 1,
    "servo+servo-warc-tests/collections/Google/archive/rec-20180206050524049307-Li-Haos-MBP-2.warc.gz": 1,
    "openzim+warc2zim/tests/data-special/qsl.net-encoding-alias.warc.gz": 1,
    "openzim+warc2zim/tests/data/bad-redirections.warc.gz": 1,
    "openzim+warc2zim/tests/data/content-resource-types.warc.gz": 1,
    "openzim+warc2zim/tests/data/http-return-codes.warc.gz": 3,  # one status line is "HTTP/1.1 0 No Content"
    "openzim+warc2zim/tests/data/kiwix-with-redirects.warc.gz": 3,
    # payload digests of its file:/// provenance records are over the body after their HTTP head
    "harvard-lil+scoop/assets/fixtures/example.com.wacz": 1,
}
LEFT_OUT = {"webrecorder+pywb/sample_archive/warcs/dupes.warc.gz": 8}
"""Revisits whose original the file lacks (dupes.warc.gz repeats iana.warc.gz's records); none elsewhere."""
ANSWERED_BY_TWIN = {"webrecorder+pywb/sample_archive/warcs/dupes.warc.gz": 1}
"""Left-out revisits answered all the same: dupes.warc.gz's revisit of ``http://www.iana.org/`` by its
capture of ``http://iana.org`` (rule ``ignore-www``; pywb's keys take the two as one as well)."""
NOTED = {
    "openzim+warc2zim/tests/data/http-return-codes.warc.gz": 1,
    "harvard-lil+scoop/assets/fixtures/example.com.wacz": 2,
}
"""Warnings besides left-out revisits: a status code HTTP cannot carry, served as 204; listed pages that are
file:/// records (Scoop's screenshot and PDF), which no browser can be sent to."""
WARNING = "capreplay import: warning: "


def interop_file(name: str) -> Path:
    if not INTEROP.is_dir():
        pytest.skip(f"{INTEROP} is absent (it would hold {name})")
    path = INTEROP / name
    assert path.is_file(), f"{path} is missing from {INTEROP}"
    return path


def warcs_of(path: Path) -> list[bytes]:
    if path.suffix != ".wacz":
        return [path.read_bytes()]
    with zipfile.ZipFile(path) as zf:
        return [zf.read(n) for n in zf.namelist() if n.startswith("archive/")]


def is_web(url: str | None) -> bool:
    """Replay serves http(s) URLs only (Scoop's WACZ also holds file:/// records)."""
    return bool(url) and str(url).startswith(("http:", "https:"))


def held_urls(path: Path) -> set[str]:
    """Every URL the file holds a response or revisit record for, normalised as replay compares them."""
    held = set()
    for data in warcs_of(path):
        for record in ArchiveIterator(BytesIO(data)):
            url = record.rec_headers.get_header("WARC-Target-URI")
            if record.rec_type in ("response", "revisit") and is_web(url):
                held.add(normalize_url(url))
    return held


def archived_requests(path: Path) -> list[tuple[str, str, str, bytes | None, str]]:
    """(WARC-Type, method, URL, body, record id) of every response and revisit: the method and body are its linked
    request's, else a GET's."""
    requests: dict[str, tuple[str, bytes]] = {}  # request record id -> (method, body)
    pointing_at: dict[str, str] = {}  # response record id -> the request that names it
    answers: list[tuple[str, str, str, list[str]]] = []  # (type, URL, record id, WARC-Concurrent-To)
    for data in warcs_of(path):
        for record in ArchiveIterator(BytesIO(data)):
            headers = record.rec_headers
            record_id = headers.get_header("WARC-Record-ID")
            linked = [v for n, v in headers.headers if n.lower() == "warc-concurrent-to"]
            if record.rec_type == "request" and record.http_headers:
                # warcio keeps a request line's method where a status line keeps its protocol
                requests[record_id] = (record.http_headers.protocol, record.content_stream().read())
                pointing_at.update(dict.fromkeys(linked, record_id))
            elif record.rec_type in ("response", "revisit") and is_web(headers.get_header("WARC-Target-URI")):
                answers.append((record.rec_type, headers.get_header("WARC-Target-URI"), record_id, linked))
    found = []
    for rec_type, url, record_id, linked in answers:
        request = next((requests[i] for i in linked if i in requests), None) or requests.get(
            pointing_at.get(record_id, ""), ("GET", b""))
        found.append((rec_type, request[0], url, request[1] or None, record_id))
    return found


def test_every_interop_file_is_listed_here() -> None:
    if not INTEROP.is_dir():
        pytest.skip(f"{INTEROP} is absent")
    found = {p.relative_to(INTEROP).as_posix() for p in INTEROP.rglob("*")
             if p.name.endswith((".warc", ".warc.gz", ".wacz"))}  # fmt: skip
    assert found == set(FILES)


@pytest.mark.parametrize("name", list(FILES))
def test_every_response_an_interop_file_holds_is_answered(name: str, tmp_path: Path) -> None:
    path = interop_file(name)
    result = import_archives(ImportOptions(inputs=[path], out=tmp_path / "snap", random_seed=DEFAULT_SEED))
    assert len(result.warnings) == LEFT_OUT.get(name, 0) + NOTED.get(name, 0), result.warnings
    assert len(result.manifest.pages) == FILES[name], [p.url for p in result.manifest.pages]
    # Strict: nearest-query may answer a left-out revisit with another capture of its path, which would
    # hide whether every response the file holds is served as itself.
    store = SnapshotStore(tmp_path / "snap", strict=True)
    try:
        missed = [(rec_type, method, url) for rec_type, method, url, body, _ in archived_requests(path)
                  if store.matcher.match(method, url, body) is None]  # fmt: skip
    finally:
        store.close()
    assert all(rec_type == "revisit" for rec_type, _, _ in missed), missed
    assert len(missed) == LEFT_OUT.get(name, 0) - ANSWERED_BY_TWIN.get(name, 0), missed


RECORDED_TWICE = {
    "webrecorder+pywb/sample_archive/warcs/iana.warc.gz": 1,
    "webrecorder+py-wacz/tests/fixtures/example-iana.warc": 1,
    "servo+servo-warc-tests/collections/Instagram/archive/rec-20180907170953004391-Aravk-Pavilion.warc.gz": 1,
    "servo+servo-warc-tests/collections/Twitter/archive/rec-20180328223922567597-userland.warc.gz": 1,
    "servo+servo-warc-tests/collections/GoogleDE/archive/rec-20181019020927541485-goller.warc.gz": 3,
    "openzim+warc2zim/tests/data/bad-redirections.warc.gz": 3,
}
"""URLs a file holds two or more GET responses for (a script loaded by several pages, a page visited
again, the pages of a redirect loop); Twitter's file also holds a URL whose first response answers an OPTIONS
request, its second the GET."""


@pytest.mark.parametrize("name", list(FILES))
def test_the_judge_credits_a_url_held_more_than_once_to_its_first_recording(name: str, tmp_path: Path) -> None:
    """What a judge cites as evidence for a URL is the response a new page load gets: its first recording, on
    every lookup, however many recordings of that URL the file holds."""
    path = interop_file(name)
    import_archives(ImportOptions(inputs=[path], out=tmp_path / "snap", random_seed=DEFAULT_SEED))
    gets: dict[str, list[str]] = {}  # URL -> its GET responses' record ids, in the file's order
    for rec_type, method, url, _, record_id in archived_requests(path):
        if rec_type == "response" and method == "GET":
            gets.setdefault(normalize_url(url), []).append(record_id)
    twice = {url: ids for url, ids in gets.items() if len(ids) > 1}
    store = SnapshotStore(tmp_path / "snap", strict=True)
    try:
        lookup = ArchivedLookup(store)
        for url, ids in twice.items():
            for _ in range(len(ids) + 1):
                found = lookup.archived(url)
                assert found is not None and found.record_id == ids[0], (url, ids)
    finally:
        store.close()
    assert len(twice) == RECORDED_TWICE.get(name, 0), sorted(twice)


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.parametrize("name", list(FILES))
def test_an_interop_file_imports_and_its_pages_replay_without_a_miss_it_could_answer(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = interop_file(name)
    out = tmp_path / "snap"
    imported = cli("import", str(path), "-o", str(out))
    assert imported.returncode == 0, imported.stderr
    # nothing but capreplay's own one-line warnings on stderr (warcio's notes are kept quiet)
    assert all(line.startswith(WARNING) for line in imported.stderr.splitlines()), imported.stderr
    manifest = checked_manifest(out)
    assert manifest.complete and len(manifest.pages) == FILES[name] and manifest.random_seed == DEFAULT_SEED
    assert all(p.status == 200 for p in manifest.pages)
    if not manifest.pages:
        return  # nothing for a browser to load; the test above serves every response
    assert manifest.frozen_time == min(p.captured_at for p in manifest.pages)

    capsys.readouterr()
    # A favicon or tracker that was never captured is a capture gap: verify passes; a defect fails it.
    assert main(["verify", str(out), "--json"]) == 0
    report: dict[str, Any] = json.loads(capsys.readouterr().out)
    assert report["archived_misses"] == 0, [r for p in report["pages"] for r in p["requests"] if r["archived"]
                                            and r["result"] in ("miss", "blocked")]
    held = held_urls(path)
    assert [p["url"] for p in report["pages"]] == [p.url for p in manifest.pages]
    for page in report["pages"]:
        assert page["status"] == "ok", page
        assert any(r["result"] == "hit" for r in page["requests"]), page
        wrong = [r["url"] for r in page["requests"] if r["result"] == "miss" and normalize_url(r["url"]) in held]
        assert not wrong, f"{page['url']} missed URLs that {name} holds: {wrong}"
