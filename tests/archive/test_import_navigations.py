"""Import finds real pages: top-level navigations, not the documents pages embed as frames; and the snapshot
id covers the page list, so another page list is another snapshot and an edited one is tampering.

Every WARC is written with warcio: request and response records, the request's headers as a browser of
the time sent them (Sec-Fetch headers since 2019, only a Referer before).
"""

from __future__ import annotations

import json
import re
from io import BytesIO
from pathlib import Path

import pytest
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from capreplay.archive.importer.snapshot import ImportOptions, import_archives
from capreplay.cli import main
from tests.support import foreign_warc as fs

SITE = "https://news.example/"
AD = "https://ads.example/slot?id=7"
WIDGET = "https://widgets.example/frame.html"
ARTICLE = "https://news.example/article"
NAV = [("Sec-Fetch-Dest", "document"), ("Sec-Fetch-Mode", "navigate")]
FRAME = [("Sec-Fetch-Dest", "iframe"), ("Sec-Fetch-Mode", "navigate")]


def html(title: str, extra: str = "") -> bytes:
    return f"<!doctype html><title>{title}</title><p>{title}</p>{extra}".encode()


class Warc:
    """Request/response pairs written by warcio, in the order a browser made them."""

    def __init__(self, first: int = 0) -> None:
        self.out = BytesIO()
        self.writer = WARCWriter(self.out, gzip=True, warc_version="1.1")
        self.n = first  # record ids and dates count on from here: two WARCs of one import never share an id

    def exchange(self, url: str, body: bytes, request: list[tuple[str, str]], *, status: str = "200 OK",
                 headers: list[tuple[str, str]] | None = None) -> Warc:  # fmt: skip
        self.n += 1
        when = f"2024-05-01T12:{self.n // 60:02d}:{self.n % 60:02d}Z"
        head = headers if headers is not None else [("Content-Type", "text/html; charset=utf-8")]
        response = self.writer.create_warc_record(
            url, "response", payload=BytesIO(body), length=len(body),
            http_headers=StatusAndHeaders(status, head, protocol="HTTP/1.1"),
            warc_headers_dict={"WARC-Record-ID": fs.rid(2 * self.n), "WARC-Date": when},
        )  # fmt: skip
        path = "/" + url.split("/", 3)[3] if url.count("/") > 2 else "/"
        host = [("Host", url.split("/")[2])]
        req = self.writer.create_warc_record(
            url, "request", http_headers=StatusAndHeaders(f"GET {path} HTTP/1.1", host + request, is_http_request=True),
            warc_headers_dict={"WARC-Record-ID": fs.rid(2 * self.n + 1), "WARC-Date": when},
        )  # fmt: skip
        self.writer.write_request_response_pair(req, response)
        return self

    def save(self, path: Path) -> Path:
        path.write_bytes(self.out.getvalue())
        return path


def page_urls(tmp_path: Path, src: Path, *pages: str, out: str = "snap") -> list[str]:
    opts = ImportOptions(inputs=[src], out=tmp_path / out, pages=list(pages), random_seed=7)
    return [p.url for p in import_archives(opts).manifest.pages]


def test_an_ad_iframe_with_sec_fetch_dest_iframe_is_no_page(tmp_path: Path) -> None:
    src = (Warc()
           .exchange(SITE, html("Front", f'<iframe src="{AD}"></iframe>'), NAV)
           .exchange("https://news.example/style.css", b"p{}", [("Sec-Fetch-Dest", "style"), ("Referer", SITE)],
                     headers=[("Content-Type", "text/css")])
           .exchange(AD, html("Buy now"), [*FRAME, ("Referer", SITE)])
           .exchange(ARTICLE, html("Article"), [*NAV, ("Referer", SITE)])  # a link followed: a page
           .save(tmp_path / "in.warc.gz"))  # fmt: skip
    assert page_urls(tmp_path, src) == [SITE, ARTICLE]


def test_a_redirected_navigation_counts_for_the_page_it_ends_on(tmp_path: Path) -> None:
    # recorders store the request after a redirect without the Sec-Fetch headers the browser sent
    src = (Warc()
           .exchange("http://news.example/", b"", NAV, status="301 Moved Permanently", headers=[("Location", SITE)])
           .exchange(SITE, html("Front"), [])
           .exchange(WIDGET, html("Widget"), FRAME)
           .save(tmp_path / "in.warc.gz"))  # fmt: skip
    assert page_urls(tmp_path, src) == [SITE]


def test_without_sec_fetch_headers_a_framed_document_is_found_by_its_iframe_or_its_referer(tmp_path: Path) -> None:
    src = (Warc()
           .exchange(SITE, html("Front", f"<IFRAME width=1 SRC='{AD}#x'></IFRAME>"), [])
           .exchange(AD, html("Buy now"), [("Referer", SITE)])
           # inserted by a script, so in no HTML: another host, requested with the page as its Referer
           .exchange(WIDGET, html("Widget"), [("Referer", SITE)])
           .exchange(ARTICLE, html("Article"), [("Referer", SITE)])  # the same host: a link followed
           .save(tmp_path / "in.warc.gz"))  # fmt: skip
    assert page_urls(tmp_path, src) == [SITE, ARTICLE]


def test_a_page_list_and_page_arguments_still_decide(tmp_path: Path) -> None:
    warc = (Warc()
            .exchange(SITE, html("Front", f'<iframe src="{AD}"></iframe>'), NAV)
            .exchange(AD, html("Buy now"), FRAME)
            .out.getvalue())  # fmt: skip
    listed = fs.wacz(tmp_path / "in.wacz", {"a.warc.gz": warc}, [{"url": AD}, {"url": SITE}])
    assert page_urls(tmp_path, listed) == [AD, SITE]  # the WACZ's pages.jsonl, as listed
    src = tmp_path / "in.warc.gz"
    src.write_bytes(warc)
    assert page_urls(tmp_path, src, AD, out="other") == [AD]


def test_with_no_sign_of_navigations_every_html_200_is_a_page(tmp_path: Path) -> None:
    src = (Warc()
           .exchange(SITE, html("Front"), [])
           .exchange(ARTICLE, html("Article"), [])
           .exchange("https://other.example/", html("Other"), [])
           .save(tmp_path / "in.warc.gz"))  # fmt: skip
    assert page_urls(tmp_path, src) == [SITE, ARTICLE, "https://other.example/"]


def test_a_warc_without_sec_fetch_headers_keeps_its_pages_beside_one_with_them(tmp_path: Path) -> None:
    new = (Warc()
           .exchange(SITE, html("Front", f'<iframe src="{AD}"></iframe>'), NAV)
           .exchange(AD, html("Buy now"), FRAME)
           .save(tmp_path / "new.warc.gz"))  # fmt: skip
    old = (Warc(first=10)
           .exchange("https://old.example/", html("Old"), [])
           .exchange("https://old.example/more", html("More"), [("Referer", "https://old.example/")])
           .save(tmp_path / "old.warc.gz"))  # fmt: skip
    opts = ImportOptions(inputs=[new, old], out=tmp_path / "snap", random_seed=7)
    assert [p.url for p in import_archives(opts).manifest.pages] == [SITE, "https://old.example/",
                                                                     "https://old.example/more"]  # fmt: skip


def imported_id(tmp_path: Path, capsys: pytest.CaptureFixture[str], src: Path, out: str, *pages: str) -> str:
    capsys.readouterr()
    args = ["import", str(src), "-o", str(tmp_path / out)]
    for url in pages:
        args += ["--page", url]
    assert main(args) == 0
    found = re.search(r"\(snapshot ([0-9a-f]{16})\)", capsys.readouterr().out)
    assert found, "the import prints its snapshot id"
    return found.group(1)


def two_page_warc(tmp_path: Path) -> Path:
    warc = Warc().exchange(SITE, html("Front"), NAV).exchange(ARTICLE, html("Article"), NAV)
    return warc.save(tmp_path / "in.warc.gz")


def test_two_imports_of_one_warc_with_other_pages_have_other_ids(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = two_page_warc(tmp_path)
    lists = {"a": [SITE], "b": [ARTICLE], "c": [SITE, ARTICLE], "d": [ARTICLE, SITE]}
    ids = [imported_id(tmp_path, capsys, src, out, *pages) for out, pages in lists.items()]
    assert len(set(ids)) == 4, ids
    # the same files in every snapshot: only the pages tell them apart
    files = {json.dumps(json.loads((tmp_path / o / "manifest.json").read_text())["files"]) for o in "abcd"}
    assert len(files) == 1
    assert imported_id(tmp_path, capsys, src, "e", SITE) == ids[0]  # and the same pages, the same id


def test_an_edited_page_list_in_manifest_json_is_refused_as_tampering(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = two_page_warc(tmp_path)
    imported_id(tmp_path, capsys, src, "snap")
    path = tmp_path / "snap" / "manifest.json"
    data = json.loads(path.read_text())
    assert [p["url"] for p in data["pages"]] == [SITE, ARTICLE]
    data["pages"] = data["pages"][:1]  # every file still as listed, one page fewer
    path.write_text(json.dumps(data, indent=2))
    capsys.readouterr()
    assert main(["export", str(tmp_path / "snap"), "-o", str(tmp_path / "x.wacz")]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and str(path) in err[0] and "snapshot_id does not match the files and pages" in err[0], err
    assert not (tmp_path / "x.wacz").exists()


@pytest.mark.browser
def test_a_page_with_an_ad_iframe_is_one_page_whose_frame_replays_in_chromium(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ad = "https://ads.example/slot.html"
    src = (Warc()
           .exchange(SITE, html("Front", f'<iframe src="{ad}" width=300 height=250></iframe>'), NAV)
           .exchange(ad, html("Buy now", '<img src="/banner.png">'), [*FRAME, ("Referer", SITE)])
           .exchange("https://ads.example/banner.png", b"\x89PNG\r\n\x1a\n", [("Sec-Fetch-Dest", "image"),
                     ("Referer", ad)], headers=[("Content-Type", "image/png")])
           .save(tmp_path / "in.warc.gz"))  # fmt: skip
    imported_id(tmp_path, capsys, src, "snap")
    assert main(["verify", str(tmp_path / "snap"), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert [p["url"] for p in report["pages"]] == [SITE]  # the ad's document is no page of its own
    (page,) = report["pages"]
    assert page["status"] == "ok", page
    results = {r["url"]: r["result"] for r in page["requests"]}
    assert results[SITE] == "hit" and results[ad] == "hit", results  # the frame loads from the archive
    assert results["https://ads.example/banner.png"] == "hit", results
