"""Reading WACZ files: the data package's digests, the pages list, and what is refused."""

from __future__ import annotations

import hashlib
import json
import zipfile
from pathlib import Path
from typing import Any

import pytest

from capreplay.archive.importer.page_choice import ListedPage
from capreplay.archive.wacz.read import parse_datapackage, parse_pages, read_wacz
from capreplay.errors import ArchiveError
from tests.support import foreign_warc as fs

WARC = fs.gz(fs.page(1, "https://z.example/", b"<title>Z</title>"))


def test_a_checked_wacz_lists_its_warcs_and_pages(tmp_path: Path) -> None:
    path = fs.wacz(tmp_path / "a.wacz", {"b.warc.gz": WARC, "a.warc": b"WARC/1.0\r\n"}, [{"url": "https://z.example/"}])
    wacz = read_wacz(path)
    assert [(w.member, w.size) for w in wacz.warcs] == [("archive/a.warc", 10), ("archive/b.warc.gz", len(WARC))]
    assert wacz.warcs[1].sha256 == hashlib.sha256(WARC).hexdigest()
    assert wacz.pages == [ListedPage("https://z.example/")]
    assert wacz.where("archive/a.warc") == f"{path}!archive/a.warc"
    with wacz.open("archive/b.warc.gz") as stream:
        assert stream.read() == WARC


def rezip(path: Path, drop: str | None = None, add: dict[str, bytes] | None = None) -> Path:
    """A copy of the WACZ at ``path`` without member ``drop`` and with ``add``."""
    out = path.with_name("re-" + path.name)
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            if info.filename != drop:
                dst.writestr(info, src.read(info))
        for name, data in (add or {}).items():
            dst.writestr(name, data)
    return out


@pytest.mark.parametrize(
    ("change", "match"),
    [
        ({"drop": "datapackage.json"}, "not a WACZ: the zip has no datapackage.json"),
        ({"drop": "archive/a.warc.gz"}, "lists archive/a.warc.gz, which the zip does not hold"),
        ({"add": {"archive/extra.warc.gz": WARC}}, "archive/extra.warc.gz is not listed in datapackage.json"),
        ({"add": {"datapackage-digest.json": b'{"hash": "sha256:00"}'}}, "does not match its digest"),
    ],
)
def test_what_the_data_package_does_not_vouch_for_is_refused(
    tmp_path: Path, change: dict[str, Any], match: str
) -> None:
    path = rezip(fs.wacz(tmp_path / "a.wacz", {"a.warc.gz": WARC}), **change)
    with pytest.raises(ArchiveError, match=match) as info:
        read_wacz(path)
    assert str(path) in info.value.line()


def test_a_matching_datapackage_digest_is_accepted(tmp_path: Path) -> None:
    plain = fs.wacz(tmp_path / "a.wacz", {"a.warc.gz": WARC})
    with zipfile.ZipFile(plain) as zf:
        digest = hashlib.sha256(zf.read("datapackage.json")).hexdigest()
    path = rezip(plain, add={"datapackage-digest.json": json.dumps({"hash": f"sha256:{digest}"}).encode()})
    assert len(read_wacz(path).warcs) == 1


def test_files_that_are_not_wacz_are_refused(tmp_path: Path) -> None:
    text = tmp_path / "text.wacz"
    text.write_text("hello")
    with pytest.raises(ArchiveError, match="not a WACZ: not a readable zip file"):
        read_wacz(text)
    with pytest.raises(ArchiveError, match="cannot read"):
        read_wacz(tmp_path / "missing.wacz")
    empty = tmp_path / "nowarc.wacz"
    with zipfile.ZipFile(empty, "w") as zf:
        zf.writestr("datapackage.json", '{"resources": []}')
    with pytest.raises(ArchiveError, match="holds no WARC files"):
        read_wacz(empty)


@pytest.mark.parametrize(
    ("package", "match"),
    [
        (b"{", "invalid JSON"),
        (b"[]", "no 'resources' list"),
        (b'{"resources": [{"hash": "sha256:00"}]}', r"resources\[0\] has no 'path'"),
        (b'{"resources": [{"path": "a"}]}', r"resources\[0\] \(a\) has no hash"),
        (b'{"resources": [{"path": "a", "hash": "rot13:00"}]}', "unknown hash 'rot13'"),
    ],
)
def test_a_malformed_data_package_is_named(package: bytes, match: str) -> None:
    with pytest.raises(ArchiveError, match=match):
        parse_datapackage(package, "x.wacz!datapackage.json")


def test_pages_lines_skip_the_header_and_name_a_bad_line() -> None:
    text = b'{"format": "json-pages-1.0"}\n\n{"url": "https://a/", "title": "A"}\n{"url": "https://b/", "title": 3}\n'
    assert parse_pages(text, "p") == [ListedPage("https://a/", "A"), ListedPage("https://b/")]
    with pytest.raises(ArchiveError, match="invalid JSON") as info:
        parse_pages(b'{"format": 1}\n{oops\n', "x.wacz!pages/pages.jsonl")
    assert info.value.where == "x.wacz!pages/pages.jsonl:2"
    with pytest.raises(ArchiveError, match="a page has no 'url'"):
        parse_pages(b'{"format": 1}\n{"title": "t"}\n', "p")
