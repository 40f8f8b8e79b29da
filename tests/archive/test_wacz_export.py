"""Exporting a snapshot as a WACZ: the layout, reproducible bytes, the pure builders, and atomic writing.

That pywb really reads these files is shown in tests/integration/test_export_pywb.py; here the files are
checked against the WACZ 1.1.1 spec and against the snapshot they came from.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import shutil
import zipfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, BinaryIO

import pytest

from capreplay.archive.index.cdxj import IndexEntry, load_index
from capreplay.archive.index.method_query import MAX_QUERY_LENGTH, method_query
from capreplay.archive.index.pywb_urlkey import pywb_urlkey
from capreplay.archive.snapshot.manifest import checked_manifest, collect_files, load_manifest, write_manifest
from capreplay.archive.wacz import build as wacz, export as wacz_export
from capreplay.archive.wacz.export import export_wacz
from capreplay.errors import OutputError, SnapshotError, UsageError
from capreplay.models.manifest import Manifest, PageEntry, snapshot_id

WARC = "archive/data-00000.warc.gz"
MEMBERS = ["archive/data-00000.warc.gz", "indexes/index.cdx.gz", "indexes/index.idx", "pages/pages.jsonl",
           "datapackage.json", "datapackage-digest.json"]


@pytest.fixture(scope="module")
def exported(committed_snapshot: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wacz") / "fixtures.wacz"
    export_wacz(committed_snapshot, out)
    return out


def _cdxj(archive: zipfile.ZipFile) -> list[str]:
    return gzip.decompress(archive.read(wacz.CDX_NAME)).decode("utf-8").splitlines()


def _copy_snapshot(source: Path, dest: Path) -> Path:
    shutil.copytree(source, dest)
    return dest


def _reseal(root: Path) -> None:
    """Rewrite the manifest of an edited snapshot so that it verifies again."""
    manifest = load_manifest(root)
    files = collect_files(root)
    resealed = {"files": files, "snapshot_id": snapshot_id(files, manifest.pages)}
    write_manifest(root, manifest.model_copy(update=resealed))


# -- the file as a whole -----------------------------------------------------------------------------------------


def test_layout_follows_wacz_1_1_1(exported: Path, committed_snapshot: Path) -> None:
    manifest = load_manifest(committed_snapshot)
    with zipfile.ZipFile(exported) as archive:
        infos = archive.infolist()
        assert [i.filename for i in infos] == MEMBERS
        # the spec requires STORE for WARCs and .cdx.gz; everything is stored, so zlib versions never matter
        assert {i.compress_type for i in infos} == {zipfile.ZIP_STORED}
        created = manifest.created.astimezone(UTC)
        # a ZIP date counts seconds in twos
        assert {i.date_time for i in infos} == {(*created.timetuple()[:5], created.second - created.second % 2)}
        assert archive.read(WARC) == (committed_snapshot / WARC).read_bytes()
        assert archive.testzip() is None


def test_same_snapshot_exports_to_identical_bytes(exported: Path, committed_snapshot: Path, tmp_path: Path) -> None:
    again = tmp_path / "elsewhere" / "other-name.wacz"
    again.parent.mkdir()
    export_wacz(committed_snapshot, again)
    assert again.read_bytes() == exported.read_bytes()


def test_datapackage_lists_every_other_file_with_its_sha256(exported: Path, committed_snapshot: Path) -> None:
    manifest = load_manifest(committed_snapshot)
    with zipfile.ZipFile(exported) as archive:
        package = json.loads(archive.read("datapackage.json"))
        assert package["profile"] == "data-package"
        assert package["wacz_version"] == "1.1.1"
        assert package["created"] == manifest.created.strftime("%Y-%m-%dT%H:%M:%SZ")
        assert package["software"].startswith("capreplay ")
        assert package["mainPageUrl"] == manifest.pages[0].url
        assert [r["path"] for r in package["resources"]] == MEMBERS[:-2]
        for resource in package["resources"]:
            data = archive.read(resource["path"])
            assert resource["name"] == resource["path"].rsplit("/", 1)[-1]
            assert resource["bytes"] == len(data)
            assert resource["hash"] == "sha256:" + hashlib.sha256(data).hexdigest()
        digest = json.loads(archive.read("datapackage-digest.json"))
        assert digest == {"path": "datapackage.json",
                          "hash": "sha256:" + hashlib.sha256(archive.read("datapackage.json")).hexdigest()}


def test_pages_list_every_page_of_the_manifest(exported: Path, committed_snapshot: Path) -> None:
    manifest = load_manifest(committed_snapshot)
    with zipfile.ZipFile(exported) as archive:
        lines = [json.loads(line) for line in archive.read("pages/pages.jsonl").decode("utf-8").splitlines()]
    assert lines[0] == {"format": "json-pages-1.0", "id": "pages", "title": "All Pages"}
    assert [(p["url"], p["title"]) for p in lines[1:]] == [(p.url, p.title) for p in manifest.pages]
    assert [p["ts"] for p in lines[1:]] == [p.captured_at.strftime("%Y-%m-%dT%H:%M:%SZ") for p in manifest.pages]
    assert len({p["id"] for p in lines[1:]}) == len(manifest.pages)


def test_cdxj_has_one_line_per_indexed_record(exported: Path, committed_snapshot: Path) -> None:
    entries = load_index(committed_snapshot / "index.cdxj")
    with zipfile.ZipFile(exported) as archive:
        lines = _cdxj(archive)
    assert lines == sorted(lines)
    parsed = [(key, ts, json.loads(fields)) for key, ts, fields in (line.split(" ", 2) for line in lines)]
    by_place = {(f["offset"], f["length"]): (key, ts, f) for key, ts, f in parsed}
    assert len(by_place) == len(entries) == len(lines)
    for e in entries:
        key, ts, fields = by_place[(str(e.offset), str(e.length))]
        assert (ts, fields["url"], fields["filename"]) == (e.timestamp, e.url, "data-00000.warc.gz")
        assert fields["status"] == str(e.status)
        if e.method == "GET":
            assert key == pywb_urlkey(e.url) and "method" not in fields
        else:
            assert key.startswith(pywb_urlkey(e.url) + "?__wb_method=" + e.method.lower())
            assert fields["method"] == e.method
    keys = [key for key, _, _ in parsed]
    assert "test,shop)/form/submit?__wb_method=post&name=ada%20lovelace&qty=3&size=m" in keys
    assert "test,data,api)/v1/stock.json?__wb_method=options" in keys


def test_snapshot_without_an_index_exports_the_same_records(committed_snapshot: Path, tmp_path: Path,
                                                           exported: Path) -> None:
    # an interrupted capture has no index.cdxj yet: the export builds it from the WARCs
    root = _copy_snapshot(committed_snapshot, tmp_path / "snap")
    (root / "index.cdxj").unlink()
    _reseal(root)
    out = tmp_path / "no-index.wacz"
    export_wacz(root, out)
    with zipfile.ZipFile(out) as a, zipfile.ZipFile(exported) as b:
        assert _cdxj(a) == _cdxj(b)


# -- writing: refusals, atomicity ----------------------------------------------------------------------------------


def test_an_existing_file_is_replaced_only_with_force(committed_snapshot: Path, exported: Path,
                                                      tmp_path: Path) -> None:
    out = tmp_path / "x.wacz"
    out.write_bytes(b"keep me")
    with pytest.raises(UsageError, match="already exists; pass --force"):
        export_wacz(committed_snapshot, out)
    assert out.read_bytes() == b"keep me"
    export_wacz(committed_snapshot, out, force=True)
    assert out.read_bytes() == exported.read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.wacz"]


@pytest.mark.parametrize(("problem", "raised"), [(OSError(28, "No space left on device"), OutputError),
                                                (KeyboardInterrupt(), KeyboardInterrupt)])
def test_a_failed_export_leaves_no_file(committed_snapshot: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                        problem: BaseException, raised: type[BaseException]) -> None:
    real = wacz.copy_member

    def copy_then_fail(archive: zipfile.ZipFile, info: zipfile.ZipInfo, source: BinaryIO, size: int) -> Any:
        real(archive, info, source, size)  # half of the WACZ is on disk when it fails
        raise problem

    monkeypatch.setattr(wacz, "copy_member", copy_then_fail)
    with pytest.raises(raised):
        export_wacz(committed_snapshot, tmp_path / "x.wacz")
    assert list(tmp_path.iterdir()) == []


def test_a_warc_changed_after_verification_is_caught_while_copying(committed_snapshot: Path, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    root = _copy_snapshot(committed_snapshot, tmp_path / "snap")

    def verify_then_flip(path: Path) -> Manifest:
        manifest = checked_manifest(path)
        data = bytearray((path / WARC).read_bytes())
        data[len(data) // 2] ^= 0x01
        (path / WARC).write_bytes(bytes(data))
        return manifest

    monkeypatch.setattr(wacz_export, "checked_manifest", verify_then_flip)
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    with pytest.raises(SnapshotError, match="changed while it was being exported"):
        export_wacz(root, out_dir / "x.wacz")
    assert list(out_dir.iterdir()) == []


def test_output_inside_the_snapshot_is_refused(committed_snapshot: Path, tmp_path: Path) -> None:
    root = _copy_snapshot(committed_snapshot, tmp_path / "snap")
    with pytest.raises(UsageError, match="inside the snapshot"):
        export_wacz(root, root / "captures" / "x.wacz")
    checked_manifest(root)


# -- pure builders ---------------------------------------------------------------------------------------------------


def test_zipnum_blocks_are_gzip_members_named_by_the_idx() -> None:
    lines = [f"com,example)/{c} 20240501120000 {{\"n\": \"{c}\"}}" for c in "edcba"]
    cdx, idx = wacz.zipnum(lines, block_lines=2)
    idx_lines = idx.decode("utf-8").splitlines()
    assert idx_lines[0] == '!meta 0 {"format": "cdxj-gzip-1.0", "filename": "index.cdx.gz"}'
    blocks = []
    for line in idx_lines[1:]:
        key, ts, where_json = line.split(" ", 2)
        where = json.loads(where_json)
        member = cdx[where["offset"] : where["offset"] + where["length"]]
        assert where["digest"] == "sha256:" + hashlib.sha256(member).hexdigest()
        block = gzip.decompress(member).decode("utf-8").splitlines()
        assert block[0].split(" ")[:2] == [key, ts]
        blocks.append(block)
    assert [len(b) for b in blocks] == [2, 2, 1]
    assert [line for b in blocks for line in b] == sorted(lines)
    assert sum(json.loads(line.split(" ", 2)[2])["length"] for line in idx_lines[1:]) == len(cdx)


def test_zipnum_of_nothing_is_an_empty_index() -> None:
    assert wacz.zipnum([]) == (b"", b'!meta 0 {"format": "cdxj-gzip-1.0", "filename": "index.cdx.gz"}\n')


def _entry(**changes: Any) -> IndexEntry:
    fields: dict[str, Any] = {
        "urlkey": "com,example)/a", "timestamp": "20240501120000", "url": "https://example.com/a", "method": "GET",
        "status": 200, "mime": "text/html", "digest": "sha1:ABC", "filename": "archive/x.warc.gz", "offset": 10,
        "length": 20, "req_offset": 0, "req_length": 10, "post_body": None, "seq": 0,
    }
    return IndexEntry(**{**fields, **changes})


def test_cdxj_line_of_a_get_is_pywbs() -> None:
    line = wacz.cdxj_line(_entry(), "x.warc.gz")
    assert line == ('com,example)/a 20240501120000 {"url": "https://example.com/a", "mime": "text/html", '
                    '"status": "200", "digest": "ABC", "length": "20", "offset": "10", "filename": "x.warc.gz"}')


def test_cdxj_line_of_a_revisit_has_no_status() -> None:
    line = wacz.cdxj_line(_entry(status=200, mime="text/html", revisit_of="https://example.com/a"), "x.warc.gz")
    fields = json.loads(line.split(" ", 2)[2])
    assert fields["mime"] == "warc/revisit" and "status" not in fields


def test_cdxj_line_folds_a_post_body_into_the_key() -> None:
    body = b"q=cafe+au+lait%21&a=1"
    line = wacz.cdxj_line(_entry(method="POST", post_body=base64.b64encode(body).decode()), "x.warc.gz",
                          wacz.RequestBody("application/x-www-form-urlencoded; charset=UTF-8", body))
    key, _, fields_json = line.split(" ", 2)
    fields = json.loads(fields_json)
    assert key == "com,example)/a?__wb_method=post&a=1&q=cafe%20au%20lait!"
    assert (fields["method"], fields["requestBody"]) == ("POST", "q=cafe au lait!&a=1")


def test_pages_and_datapackage_are_pure_and_stable() -> None:
    when = datetime(2024, 5, 1, 12, 0, 0, 999, tzinfo=UTC)
    pages = [PageEntry(url="https://example.com/", final_url="https://example.com/", title="Ex", status=200,
                       captured_at=when)]
    assert wacz.pages_jsonl(pages) == wacz.pages_jsonl(list(pages))
    meta = wacz.Metadata(title="t", description="d", created=when, software="capreplay test")
    package = json.loads(wacz.datapackage([wacz.resource_for("pages/pages.jsonl", b"x")], meta, pages))
    assert package["created"] == "2024-05-01T12:00:00Z"
    assert package["resources"] == [{"name": "pages.jsonl", "path": "pages/pages.jsonl",
                                     "hash": "sha256:" + hashlib.sha256(b"x").hexdigest(), "bytes": 1}]


# -- the method and body of a request as pywb keys them (cross-checked with pywb itself in integration) ----------


@pytest.mark.parametrize(
    ("method", "content_type", "body", "expected"),
    [
        ("GET", None, b"", None),
        ("get", "text/plain", b"ignored", None),
        ("OPTIONS", None, b"", ("__wb_method=OPTIONS", "")),
        ("HEAD", None, b"", ("__wb_method=HEAD", "")),
        ("DELETE", "application/json", b'{"a": 1}', ("__wb_method=DELETE", "")),
        ("POST", None, b"", ("__wb_method=POST", "")),
        ("POST", "application/x-www-form-urlencoded", b"a=1&b=x+y%21",
         ("__wb_method=POST&a=1&b=x y!", "a=1&b=x y!")),
        ("PUT", "application/x-www-form-urlencoded", b"a=1", ("__wb_method=PUT&a=1", "a=1")),
        ("POST", "application/x-www-form-urlencoded", b"a=\xff",
         ("__wb_method=POST&__wb_post_data=YT3/", "__wb_post_data=YT3/")),
        ("POST", "application/json", b'{"a": 1, "b": [true, null, 2.0, 2.5], "c": {"a": "x y"}}',
         ("__wb_method=POST&a=1&b=true&b.2_=null&b.3_=2&b.4_=2.5&a.2_=x+y",
          "a=1&b=true&b.2_=null&b.3_=2&b.4_=2.5&a.2_=x+y")),
        ("POST", "application/json", b"not json", ("__wb_method=POST", "")),
        ("POST", "text/plain;charset=UTF-8", b'{"k": "v"}', ("__wb_method=POST&k=v", "k=v")),
        ("POST", "text/plain", b"hello", ("__wb_method=POST&__wb_post_data=aGVsbG8=", "__wb_post_data=aGVsbG8=")),
        ("POST", "application/octet-stream", b"\x00\x01",
         ("__wb_method=POST&__wb_post_data=AAE=", "__wb_post_data=AAE=")),
        ("POST", "multipart/form-data; boundary=XyZ",
         b'--XyZ\r\nContent-Disposition: form-data; name="a"\r\n\r\n1 2\r\n'
         b'--XyZ\r\nContent-Disposition: form-data; name="b"\r\n\r\nz\r\n--XyZ--\r\n',
         ("__wb_method=POST&a=1+2&b=z", "a=1+2&b=z")),
        ("POST", "multipart/form-data", b"no boundary",
         ("__wb_method=POST&__wb_post_data=bm8gYm91bmRhcnk=", "__wb_post_data=bm8gYm91bmRhcnk=")),
    ],
)
def test_method_query(method: str, content_type: str | None, body: bytes, expected: tuple[str, str] | None) -> None:
    assert method_query(method, content_type, body) == expected


def test_method_query_keeps_4096_characters_of_a_body() -> None:
    folded = method_query("POST", "application/x-www-form-urlencoded", b"a=" + b"x" * 10_000)
    assert folded is not None
    assert len(folded[1]) == MAX_QUERY_LENGTH
