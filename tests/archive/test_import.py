"""``capreplay import`` as a library: foreign WARC/WACZ in, a verified snapshot out, served as recorded."""

from __future__ import annotations

import gzip
import hashlib
import json
import logging
from pathlib import Path

import brotli
import pytest

from capreplay.archive.importer import snapshot as importer
from capreplay.archive.importer.snapshot import ImportOptions, ImportResult, import_archives
from capreplay.archive.index.cdxj import load_index
from capreplay.archive.snapshot.manifest import checked_manifest
from capreplay.errors import ArchiveError, InputError, UsageError
from capreplay.replay.response import Outgoing, header
from capreplay.replay.store import SnapshotStore
from tests.support import foreign_warc as fs

HTML = b"<!doctype html><title>Home</title><link rel=stylesheet href=/s.css><p>hello"
CSS = b"body { color: red }"


def write(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / "in" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def run(tmp_path: Path, *inputs: Path, pages: tuple[str, ...] = (), out: str = "snap") -> ImportResult:
    return import_archives(ImportOptions(inputs=list(inputs), out=tmp_path / out, pages=list(pages), random_seed=7))


def serve(root: Path, url: str, method: str = "GET", body: bytes | None = None) -> Outgoing | None:
    """What replay answers for one request, or None for a miss."""
    store = SnapshotStore(root)
    try:
        match = store.matcher.match(method, url, body)
        return None if match is None else store.response(match.candidate.ref)  # type: ignore[arg-type]
    finally:
        store.close()


def basic_warc() -> bytes:
    return fs.gz(
        fs.warcinfo(0, "software: Wget/1.14 (linux-gnu)\r\nformat: WARC File Format 1.0\r\n"),
        fs.page(1, "http://site.example/", HTML),
        fs.request(2, "http://site.example/", of=1),
        fs.page(3, "http://site.example/s.css", CSS, headers=[("Content-Type", "text/css")]),  # no request record
    )


def test_a_warc_becomes_a_verified_snapshot_holding_it_byte_for_byte(tmp_path: Path) -> None:
    src = write(tmp_path, "crawl.warc.gz", basic_warc())
    result = run(tmp_path, src)
    out = tmp_path / "snap"
    manifest = checked_manifest(out)
    assert manifest == result.manifest and manifest.complete and not result.unchanged
    assert (out / "archive" / "crawl.warc.gz").read_bytes() == src.read_bytes()
    assert sorted(f.path for f in manifest.files) == ["archive/crawl.warc.gz", "index.cdxj"]
    assert manifest.hosts == ["site.example"] and manifest.random_seed == 7 and manifest.plan is None
    (source,) = manifest.imported_from or []
    assert (source.name, source.sha256) == ("crawl.warc.gz", hashlib.sha256(src.read_bytes()).hexdigest())
    assert source.software == ["Wget/1.14 (linux-gnu)"] and source.archive_files == ["archive/crawl.warc.gz"]
    assert result.records == {"warcinfo": 1, "response": 2, "request": 1} and result.indexed == 2
    assert {e.url: e.method for e in load_index(out / "index.cdxj")} == {
        "http://site.example/": "GET", "http://site.example/s.css": "GET",  # no request: GET assumed
    }  # fmt: skip
    css = serve(out, "http://site.example/s.css")
    assert css is not None and css.body == CSS and css.status == 200
    assert not list(tmp_path.glob(".snap.import-*")), "the staging folder is renamed into place"


def test_chunked_bodies_stay_chunked_in_the_archive_and_are_served_dechunked(tmp_path: Path) -> None:
    chunked = b"5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n"
    data = fs.gz(fs.page(1, "http://c.example/", chunked, headers=[("Content-Type", "text/plain"),
                                                                   ("Transfer-Encoding", "chunked")]))  # fmt: skip
    run(tmp_path, write(tmp_path, "c.warc.gz", data))
    assert chunked in gzip.decompress((tmp_path / "snap" / "archive" / "c.warc.gz").read_bytes())
    out = serve(tmp_path / "snap", "http://c.example/")
    assert out is not None and out.body == b"hello world"
    assert header(out.headers, "transfer-encoding") is None


@pytest.mark.parametrize("compressed", [True, False])
def test_compressed_and_uncompressed_warcs_are_kept_as_they_are(tmp_path: Path, compressed: bool) -> None:
    records = [fs.page(1, "http://u.example/", HTML), fs.request(2, "http://u.example/", of=1)]
    name, data = ("u.warc.gz", fs.gz(*records)) if compressed else ("u.warc", b"".join(records))
    run(tmp_path, write(tmp_path, name, data))
    assert (tmp_path / "snap" / "archive" / name).read_bytes() == data
    out = serve(tmp_path / "snap", "http://u.example/")
    assert out is not None and out.body == HTML


def test_http2_captures_are_served(tmp_path: Path) -> None:
    data = fs.gz(
        fs.record("response", "https://h2.example/app.js",
                  fs.http("HTTP/2 200", [("content-type", "text/javascript"), ("x-h2", "1")], b"go()"), n=1),
        fs.record("response", "https://h2.example/", fs.http("HTTP/1.1 200 OK", [("content-type", "text/html")], HTML),
                  n=2, headers=[("WARC-Protocol", "h2")]),
    )  # fmt: skip
    run(tmp_path, write(tmp_path, "h2.warc.gz", data))
    js = serve(tmp_path / "snap", "https://h2.example/app.js")
    assert js is not None and (js.status, js.body, header(js.headers, "x-h2")) == (200, b"go()", "1")
    page = serve(tmp_path / "snap", "https://h2.example/")
    assert page is not None and page.body == HTML


def test_metadata_resource_dns_and_warcinfo_records_are_passed_over(tmp_path: Path) -> None:
    data = fs.gz(
        fs.warcinfo(0, "software: wpull\r\n"),
        fs.record("dns", "dns:site.example", b"20200102030405\nsite.example. 60 IN A 1.2.3.4\n", n=1,
                  content_type="text/dns"),
        fs.page(2, "http://site.example/", HTML),
        fs.record("metadata", "http://site.example/", b"outlink: http://site.example/x L a/@href\r\n", n=3,
                  content_type="application/warc-fields"),
        fs.record("resource", "urn:X-wpull:log", b"log line\n", n=4, content_type="text/plain"),
        fs.record("resource", "metadata://gnu.org/software/wget/warc/wget.log", b"wget log\n", n=5),
        fs.record("conversion", "http://site.example/", b"text", n=6, content_type="text/plain"),
    )  # fmt: skip
    result = run(tmp_path, write(tmp_path, "mixed.warc.gz", data))
    assert [e.url for e in load_index(tmp_path / "snap" / "index.cdxj")] == ["http://site.example/"]
    assert [p.url for p in result.manifest.pages] == ["http://site.example/"]


def original_and_revisit(revisit_http: bytes, *, refers: list[tuple[str, str]], url: str = "http://r.example/b",
                         digest: str | None = None) -> bytes:
    """An original at /a (text/plain ``CSS``) and a revisit of it at ``url``."""
    original = fs.page(1, "http://r.example/a", CSS, headers=[("Content-Type", "text/plain"), ("X-From", "a")])
    revisit = fs.record("revisit", url, revisit_http, n=2, date="2020-02-02T00:00:00Z",
                        payload_digest=digest or fs.sha1_b32(CSS), headers=refers)  # fmt: skip
    return fs.gz(original, revisit)


def test_a_revisit_is_served_with_its_own_headers_and_the_originals_payload(tmp_path: Path) -> None:
    head = fs.http("HTTP/1.1 404 Not Found", [("Content-Type", "text/plain"), ("X-From", "b")])
    # WARC-Refers-To wins even though the URL differs and no Refers-To-Target-URI is given
    run(tmp_path, write(tmp_path, "r.warc.gz", original_and_revisit(head, refers=[("WARC-Refers-To", fs.rid(1))])))
    out = serve(tmp_path / "snap", "http://r.example/b")
    assert out is not None and (out.status, out.body, header(out.headers, "x-from")) == (404, CSS, "b")
    entries = {e.url: e for e in load_index(tmp_path / "snap" / "index.cdxj")}
    revisit, original = entries["http://r.example/b"], entries["http://r.example/a"]
    assert (revisit.orig_filename, revisit.orig_offset) == (original.filename, original.offset)
    assert original.orig_offset is None


def test_a_revisit_finds_its_original_by_url_and_digest_in_any_spelling(tmp_path: Path) -> None:
    hex_digest = "sha1:" + hashlib.sha1(CSS).hexdigest()  # the original's digest is in base32
    data = original_and_revisit(fs.http("HTTP/1.1 200 OK", [("Content-Type", "text/plain")]),
                                refers=[("WARC-Refers-To-Target-URI", "http://r.example/a")], digest=hex_digest)
    run(tmp_path, write(tmp_path, "r.warc.gz", data))
    out = serve(tmp_path / "snap", "http://r.example/b")
    assert out is not None and out.body == CSS


@pytest.mark.parametrize("head", [b"", fs.http("HTTP/1.1 304 Not Modified", [("X-From", "b")])], ids=["bare", "304"])
def test_a_revisit_without_headers_or_of_a_304_is_served_as_its_original(tmp_path: Path, head: bytes) -> None:
    data = original_and_revisit(head, refers=[], url="http://r.example/a")  # same URL, same digest
    run(tmp_path, write(tmp_path, "r.warc.gz", data))
    entries = load_index(tmp_path / "snap" / "index.cdxj")
    assert len(entries) == 2 and all(e.orig_offset is None or e.orig_offset == entries[0].offset for e in entries)
    store = SnapshotStore(tmp_path / "snap")
    try:
        revisit = next(ref for ref, e in store.entries() if e.revisit_of)
        out = store.response(revisit)
    finally:
        store.close()
    assert (out.status, out.body, header(out.headers, "x-from")) == (200, CSS, "a")


def test_a_revisit_whose_original_is_missing_is_reported_and_left_out(tmp_path: Path) -> None:
    data = fs.gz(
        fs.page(1, "http://m.example/", HTML),
        fs.record("revisit", "http://m.example/gone.css", fs.http("HTTP/1.1 200 OK", [("Content-Type", "text/css")]),
                  n=2, payload_digest=fs.sha1_b32(b"never archived"),
                  headers=[("WARC-Refers-To-Target-URI", "http://m.example/gone.css")]),
    )  # fmt: skip
    result = run(tmp_path, write(tmp_path, "m.warc.gz", data))
    (warning,) = result.warnings
    assert "revisit of http://m.example/gone.css" in warning and "not in the input" in warning
    assert [e.url for e in load_index(tmp_path / "snap" / "index.cdxj")] == ["http://m.example/"]
    assert serve(tmp_path / "snap", "http://m.example/gone.css") is None


def test_only_unresolvable_revisits_is_bad_input(tmp_path: Path) -> None:
    data = fs.gz(fs.record("revisit", "http://m.example/", b"", n=1, payload_digest=fs.sha1_b32(b"x")))
    src = write(tmp_path, "m.warc.gz", data)
    with pytest.raises(ArchiveError, match="nothing to replay") as info:
        run(tmp_path, src)
    assert info.value.where == str(src) and not (tmp_path / "snap").exists()


def test_pages_are_every_200_html_response_once_in_capture_order(tmp_path: Path) -> None:
    data = fs.gz(
        fs.page(1, "http://p.example/b", b"<title>B</title>", date="2020-01-02T03:04:09Z"),
        fs.page(2, "http://p.example/a", b"<title>A</title>", date="2020-01-02T03:04:06Z"),
        fs.page(3, "http://p.example/b", b"<title>B again</title>"),
        fs.page(4, "http://p.example/404", b"<title>Nope</title>", status="404 Not Found"),
        fs.page(5, "http://p.example/old", b"", status="302 Found", headers=[("Location", "/a")]),
        fs.page(6, "http://p.example/s.css", CSS, headers=[("Content-Type", "text/css")]),
    )
    manifest = run(tmp_path, write(tmp_path, "p.warc.gz", data)).manifest
    assert [(p.url, p.final_url, p.title, p.status) for p in manifest.pages] == [
        ("http://p.example/b", "http://p.example/b", "B", 200),
        ("http://p.example/a", "http://p.example/a", "A", 200),
    ]
    assert [p.captured_at.isoformat() for p in manifest.pages] == ["2020-01-02T03:04:09+00:00",
                                                                   "2020-01-02T03:04:06+00:00"]  # fmt: skip
    assert manifest.frozen_time == manifest.pages[1].captured_at  # the earliest page's WARC-Date


def test_records_marked_as_documents_are_the_pages_when_any_is_marked(tmp_path: Path) -> None:
    doc, frame = [("WARC-Resource-Type", "document")], [("WARC-Resource-Type", "iframe")]
    data = fs.gz(fs.page(1, "http://d.example/", HTML, warc=doc),
                 fs.page(2, "http://d.example/frame", HTML, warc=frame))  # fmt: skip
    assert [p.url for p in run(tmp_path, write(tmp_path, "d.warc.gz", data)).manifest.pages] == ["http://d.example/"]


def test_pages_listed_in_webrecorder_warcinfo_metadata_come_first(tmp_path: Path) -> None:
    meta = json.dumps({"type": "recording", "pages": [{"url": "http://w.example/two", "title": "Two"},
                                                      {"url": "http://w.example/missing"}]})  # fmt: skip
    data = fs.gz(fs.warcinfo(0, f"software: Webrecorder Platform v4.9.0\r\njson-metadata: {meta}\r\n"),
                 fs.page(1, "http://w.example/one", HTML), fs.page(2, "http://w.example/two", HTML))  # fmt: skip
    result = run(tmp_path, write(tmp_path, "w.warc.gz", data))
    assert [p.url for p in result.manifest.pages] == ["http://w.example/two"]
    assert result.warnings == ["page http://w.example/missing is listed but not archived; left out"]


def test_page_option_overrides_and_follows_archived_redirects(tmp_path: Path) -> None:
    data = fs.gz(fs.page(1, "http://o.example/old", b"", status="301 Moved", headers=[("Location", "/new")]),
                 fs.page(2, "http://o.example/new", b"<title>New</title>"), fs.page(3, "http://o.example/x", HTML))
    src = write(tmp_path, "o.warc.gz", data)
    (page,) = run(tmp_path, src, pages=("http://o.example/old",)).manifest.pages
    assert (page.url, page.final_url, page.status, page.title) == ("http://o.example/old", "http://o.example/new",
                                                                   200, "New")  # fmt: skip
    with pytest.raises(UsageError, match=r"--page http://o.example/nope: the input holds no response"):
        run(tmp_path, src, pages=("http://o.example/nope",), out="other")
    assert not (tmp_path / "other").exists()


@pytest.mark.parametrize(
    ("encoding", "content_type", "body", "title"),
    [
        ("gzip", "text/html; charset=iso-8859-1",
         gzip.compress("<title>Caf\xe9 &amp;\n Bar</title>".encode("latin-1"), mtime=0), "Café & Bar"),
        ("br", "text/html", brotli.compress("<meta charset=utf-8><TITLE>Grüße</TITLE>".encode()), "Grüße"),
        (None, "text/html", b"<meta charset='windows-1252'><title>\x93q\x94</title>", "\u201cq\u201d"),
        ("compress", "text/html", b"<title>?</title>", ""),  # an encoding it cannot undo: no title
    ],
)  # fmt: skip
def test_titles_are_read_through_content_encoding_and_charset(
    tmp_path: Path, encoding: str | None, content_type: str, body: bytes, title: str
) -> None:
    headers = [("Content-Type", content_type)] + ([("Content-Encoding", encoding)] if encoding else [])
    data = fs.gz(fs.page(1, "http://t.example/", body, headers=headers))
    assert run(tmp_path, write(tmp_path, "t.warc.gz", data)).manifest.pages[0].title == title


def test_a_wacz_is_imported_with_its_pages_list(tmp_path: Path) -> None:
    warc = fs.gz(fs.page(1, "https://z.example/", HTML), fs.page(2, "https://z.example/other", HTML))
    path = fs.wacz(tmp_path / "z.wacz", {"data.warc.gz": warc}, [{"url": "https://z.example/other", "title": "O"}])
    manifest = run(tmp_path, path).manifest
    assert [p.url for p in manifest.pages] == ["https://z.example/other"]
    assert (tmp_path / "snap" / "archive" / "data.warc.gz").read_bytes() == warc
    (source,) = manifest.imported_from or []
    assert source.name == "z.wacz" and source.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_wacz_1_0_data_package_is_checked_too(tmp_path: Path) -> None:
    warc = fs.gz(fs.page(1, "http://z.example/", HTML))
    assert run(tmp_path, fs.wacz(tmp_path / "ok.wacz", {"a.warc.gz": warc}, legacy=True)).manifest.pages
    bad = fs.wacz(tmp_path / "bad.wacz", {"a.warc.gz": warc}, legacy=True, tamper="archive/a.warc.gz")
    with pytest.raises(ArchiveError, match=r"sha256 is .* datapackage\.json says"):
        run(tmp_path, bad, out="other")


@pytest.mark.parametrize("tamper", ["archive/a.warc.gz", "pages/pages.jsonl"])
def test_a_wacz_whose_digest_does_not_match_is_bad_input(tmp_path: Path, tamper: str) -> None:
    path = fs.wacz(tmp_path / "t.wacz", {"a.warc.gz": fs.gz(fs.page(1, "http://z.example/", HTML))}, tamper=tamper)
    with pytest.raises(ArchiveError, match=f"{tamper}: sha256 is .* the file changed") as info:
        run(tmp_path, path)
    assert info.value.where == str(path) and not (tmp_path / "snap").exists()


def test_two_inputs_with_one_name_get_distinct_archive_files(tmp_path: Path) -> None:
    first = write(tmp_path, "a/crawl.warc.gz", fs.gz(fs.page(1, "http://one.example/", HTML)))
    second = write(tmp_path, "b/crawl.warc.gz", fs.gz(fs.page(1, "http://two.example/", HTML)))
    odd = write(tmp_path, "c/data.bin", fs.gz(fs.page(1, "http://three.example/", HTML)))
    manifest = run(tmp_path, first, second, odd).manifest
    assert sorted(f.path for f in manifest.files) == [
        "archive/crawl-2.warc.gz", "archive/crawl.warc.gz", "archive/data.bin.warc.gz", "index.cdxj",
    ]  # fmt: skip
    assert len(manifest.pages) == 3


def test_importing_the_same_snapshot_again_is_a_no_op(tmp_path: Path) -> None:
    src = write(tmp_path, "x.warc.gz", basic_warc())
    first = run(tmp_path, src)
    before = {p: p.stat().st_mtime_ns for p in (tmp_path / "snap").rglob("*")}
    again = run(tmp_path, src)
    assert again.unchanged and again.manifest == first.manifest
    assert {p: p.stat().st_mtime_ns for p in (tmp_path / "snap").rglob("*")} == before


def test_a_folder_holding_anything_else_is_refused_and_left_as_it_was(tmp_path: Path) -> None:
    src = write(tmp_path, "x.warc.gz", basic_warc())
    run(tmp_path, src)
    before = {p: p.read_bytes() for p in (tmp_path / "snap").rglob("*") if p.is_file()}
    with pytest.raises(InputError, match="already holds a different snapshot"):
        run(tmp_path, src, pages=("http://site.example/s.css",))  # same files, other pages
    other = write(tmp_path, "y.warc.gz", fs.gz(fs.page(1, "http://y.example/", HTML)))
    with pytest.raises(InputError, match="already holds a different snapshot"):
        run(tmp_path, other)
    assert {p: p.read_bytes() for p in (tmp_path / "snap").rglob("*") if p.is_file()} == before
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "notes.txt").write_text("mine")
    with pytest.raises(InputError, match="not empty"):
        run(tmp_path, src, out="busy")
    (tmp_path / "empty").mkdir()
    assert run(tmp_path, src, out="empty").manifest.complete


def test_a_failure_while_building_leaves_nothing_behind(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    src = write(tmp_path, "x.warc.gz", basic_warc())

    def broken(root: Path) -> None:
        raise ArchiveError("simulated failure", where=root)

    monkeypatch.setattr(importer, "checked_manifest", broken)
    with pytest.raises(ArchiveError, match="simulated failure"):
        run(tmp_path, src, out="new/deeper/snap")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in"]


def test_warcio_note_about_spaces_in_uris_stays_quiet(tmp_path: Path, capfd: pytest.CaptureFixture[str],
                                                      caplog: pytest.LogCaptureFixture) -> None:  # fmt: skip
    data = fs.gz(fs.page(1, "http://s.example/a b.html", HTML))
    with caplog.at_level(logging.DEBUG):
        run(tmp_path, write(tmp_path, "s.warc.gz", data))
    assert not [r for r in caplog.records if r.name.startswith("warcio")]
    assert capfd.readouterr().err == ""
    out = serve(tmp_path / "snap", "http://s.example/a%20b.html")
    assert out is not None and out.body == HTML


def test_post_requests_keep_their_bodies(tmp_path: Path) -> None:
    data = fs.gz(
        fs.page(1, "http://api.example/post", b'{"ok": 1}', headers=[("Content-Type", "application/json")]),
        fs.request(2, "http://api.example/post", of=1, method="POST", body=b"a=1"),
        fs.page(3, "http://api.example/post", b'{"ok": 2}', headers=[("Content-Type", "application/json")]),
        fs.request(4, "http://api.example/post", of=3, method="POST", body=b"a=2"),
    )
    run(tmp_path, write(tmp_path, "post.warc.gz", data))
    second = serve(tmp_path / "snap", "http://api.example/post", "POST", b"a=2")
    assert second is not None and second.body == b'{"ok": 2}'
