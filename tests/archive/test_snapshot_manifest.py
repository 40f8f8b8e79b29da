"""manifest.json: the models, the snapshot id, writing, loading, and verifying a snapshot folder."""

from __future__ import annotations

import hashlib
import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from capreplay.archive.index.cdxj import build_index, write_index
from capreplay.archive.snapshot.manifest import (
    checked_manifest,
    collect_files,
    hash_file,
    load_manifest,
    write_manifest,
)
from capreplay.errors import SnapshotError
from capreplay.models.manifest import FileEntry, Manifest, PageEntry, snapshot_id
from tests.support import archive_samples as samples

ARCHIVE = "archive/data-00000.warc.gz"


def make_manifest(files: list[FileEntry], **changes: Any) -> Manifest:
    fields: dict[str, Any] = {
        "created": datetime(2024, 5, 1, 12, 5, tzinfo=UTC),
        "complete": True,
        "tools": {"capreplay": "0.1.0", "warcio": "1.8.1"},
        "browser": {"name": "chromium", "version": "131", "user_agent": "UA", "viewport": [1280, 800]},
        "frozen_time": samples.T0,
        "random_seed": 42,
        "plan": None,
        "pages": [
            PageEntry(
                url="https://example.com/",
                final_url="https://example.com/",
                title="Example",
                status=200,
                captured_at=samples.T0,
                screenshot="captures/0000.png",
                text="captures/0000.txt",
                actions=[{"click": "a"}],
            )
        ],
        "hosts": ["example.com", "cdn.example.com"],
        "files": files,
    }
    fields.update(changes)
    fields.setdefault("snapshot_id", snapshot_id(files, fields["pages"]))
    return Manifest(**fields)


@pytest.fixture
def snap(tmp_path: Path) -> Path:
    root = tmp_path / "snap"
    samples.write_snapshot_warc(root / ARCHIVE)
    write_index(root / "index.cdxj", build_index(root, [ARCHIVE]))
    (root / "captures").mkdir()
    (root / "captures" / "0000.png").write_bytes(b"\x89PNG fake")
    (root / "captures" / "0000.txt").write_text("Example\ncafé\n")
    (root / "graph.json").write_text("{}")
    write_manifest(root, make_manifest(collect_files(root)))
    return root


def expect(root: Path, where: Path, match: str) -> SnapshotError:
    with pytest.raises(SnapshotError, match=match) as info:
        checked_manifest(root)
    assert info.value.where == str(where)
    assert "\n" not in info.value.line()
    return info.value


def test_good_snapshot_verifies(snap: Path) -> None:
    manifest = checked_manifest(snap)
    assert [f.path for f in manifest.files] == [
        ARCHIVE,
        "captures/0000.png",
        "captures/0000.txt",
        "graph.json",
        "index.cdxj",
    ]
    assert manifest == load_manifest(snap)
    assert manifest.snapshot_id == snapshot_id(manifest.files, manifest.pages)
    assert not list(snap.glob("*.tmp"))


def test_manifest_json_round_trips(snap: Path) -> None:
    manifest = load_manifest(snap)
    write_manifest(snap, manifest)
    assert load_manifest(snap) == manifest
    assert json.loads((snap / "manifest.json").read_text())["schema_version"] == 1


def test_snapshot_id_is_order_independent_and_changes_with_any_byte(snap: Path) -> None:
    files, pages = collect_files(snap), load_manifest(snap).pages
    assert snapshot_id(files, pages) == snapshot_id(list(reversed(files)), pages)
    before = snapshot_id(files, pages)
    path = snap / "captures" / "0000.png"
    data = bytearray(path.read_bytes())
    data[-1] ^= 1
    path.write_bytes(bytes(data))
    assert snapshot_id(collect_files(snap), pages) != before


def test_snapshot_id_is_the_sha256_of_the_canonical_json_of_files_and_pages() -> None:
    files = [FileEntry(path="b.txt", size=1, sha256="b" * 64), FileEntry(path="a.txt", size=2, sha256="a" * 64)]
    page = PageEntry(url="http://x.example/", final_url="http://x.example/", title="Caf\u00e9", status=200,
                     captured_at=datetime(2024, 5, 1, 12, 0, 0, 5, tzinfo=UTC))  # fmt: skip
    text = (
        '{"files":[{"path":"a.txt","sha256":"' + "a" * 64 + '","size":2},{"path":"b.txt","sha256":"' + "b" * 64
        + '","size":1}],"pages":[{"actions":[],"captured_at":"2024-05-01T12:00:00.000005Z","depth":0,'
        '"final_url":"http://x.example/","parent":null,"screenshot":null,"status":200,"text":null,'
        '"title":"Caf\\u00e9","url":"http://x.example/"}]}'
    )
    assert snapshot_id(files, [page]) == hashlib.sha256(text.encode("ascii")).hexdigest()
    other = page.model_copy(update={"url": "http://y.example/"})
    assert snapshot_id(files, [page, other]) != snapshot_id(files, [other, page]) != snapshot_id(files, [page])
    assert snapshot_id(files, []) != snapshot_id(files, [page])


def test_hash_file_streams_size_and_sha256(tmp_path: Path) -> None:
    (tmp_path / "big.bin").write_bytes(b"\0" * (3 * 1024 * 1024 + 5))
    entry = hash_file(tmp_path, "big.bin")
    assert entry == FileEntry(
        path="big.bin", size=3 * 1024 * 1024 + 5, sha256=hashlib.sha256(b"\0" * (3 * 1024 * 1024 + 5)).hexdigest()
    )


def test_collect_files_skips_manifest_and_temp_files(snap: Path) -> None:
    (snap / "index.cdxj.tmp").write_text("half written")
    (snap / "archive" / "data-00001.warc.gz.tmp").write_text("half written")
    assert [f.path for f in collect_files(snap)] == [f.path for f in load_manifest(snap).files]
    checked_manifest(snap)  # leftover temp files are not part of the snapshot


def test_missing_file(snap: Path) -> None:
    (snap / "graph.json").unlink()
    expect(snap, snap / "graph.json", "listed in manifest.json but missing")


def test_changed_byte_same_size(snap: Path) -> None:
    path = snap / ARCHIVE
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x01
    path.write_bytes(bytes(data))
    expect(snap, path, "sha256 does not match manifest.json: file changed")


def test_truncated_file(snap: Path) -> None:
    path = snap / ARCHIVE
    size = path.stat().st_size
    path.write_bytes(path.read_bytes()[:-10])
    expect(snap, path, f"size {size - 10}, manifest says {size}: truncated or changed")


def test_extra_file(snap: Path) -> None:
    (snap / "captures" / "0001.png").write_bytes(b"extra")
    expect(snap, snap / "captures" / "0001.png", "not listed in manifest.json")


def test_extra_symlink(snap: Path) -> None:
    os.symlink("/etc", snap / "escape")
    expect(snap, snap / "escape", "not listed in manifest.json")
    with pytest.raises(SnapshotError, match="not a regular file"):
        collect_files(snap)


def test_edited_manifest(snap: Path) -> None:
    manifest = load_manifest(snap)
    files = [f if f.path != "graph.json" else f.model_copy(update={"size": 3}) for f in manifest.files]
    write_manifest(snap, manifest.model_copy(update={"files": files}))
    expect(snap, snap / "manifest.json", "snapshot_id does not match")


@pytest.mark.parametrize("edit", ["drop", "add", "retitle", "reorder"])
def test_an_edited_page_list_is_tampering(snap: Path, edit: str) -> None:
    manifest = load_manifest(snap)
    page = manifest.pages[0]
    other = page.model_copy(update={"url": "https://example.com/other", "final_url": "https://example.com/other"})
    pages = {"drop": [], "add": [page, other], "retitle": [page.model_copy(update={"title": "Edited"})],
             "reorder": [other, page]}[edit]  # fmt: skip
    if edit == "reorder":  # a manifest with both pages, sealed, then its order changed
        write_manifest(snap, manifest.model_copy(update={"pages": [page, other],
                                                         "snapshot_id": snapshot_id(manifest.files, [page, other])}))
        assert checked_manifest(snap).pages == [page, other]
    write_manifest(snap, load_manifest(snap).model_copy(update={"pages": pages}))
    expect(snap, snap / "manifest.json", "snapshot_id does not match the files and pages")


def test_folder_without_manifest(snap: Path) -> None:
    (snap / "manifest.json").unlink()
    expect(snap, snap, "not a snapshot: no manifest.json")


def test_not_a_folder(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    expect(tmp_path / "file", tmp_path / "file", "not a folder")
    expect(tmp_path / "nothing", tmp_path / "nothing", "no such folder")


def test_manifest_with_invalid_json(snap: Path) -> None:
    (snap / "manifest.json").write_text('{"schema_version": 1,')
    expect(snap, snap / "manifest.json", "invalid JSON: .* at line 1 column")


def test_manifest_with_invalid_fields(snap: Path) -> None:
    data = json.loads((snap / "manifest.json").read_text())
    data["files"][0]["sha256"] = "nope"
    data["complete"] = "perhaps"
    (snap / "manifest.json").write_text(json.dumps(data))
    error = expect(snap, snap / "manifest.json", "invalid manifest: ")
    assert "and 1 more" in error.message


def test_manifest_path_outside_the_snapshot_is_refused(snap: Path) -> None:
    data = json.loads((snap / "manifest.json").read_text())
    data["files"][0]["path"] = "../outside"
    (snap / "manifest.json").write_text(json.dumps(data))
    expect(snap, snap / "manifest.json", "files.0.path")


@pytest.mark.parametrize("path", ["", "/etc/passwd", "../x", "a/../b", "a//b", "./a", "a\\b"])
def test_file_entry_paths_stay_inside(path: str) -> None:
    with pytest.raises(ValidationError):
        FileEntry(path=path, size=0, sha256="0" * 64)


def test_manifest_model_rules() -> None:
    files = [FileEntry(path="a", size=1, sha256="a" * 64)]
    make_manifest(files)
    with pytest.raises(ValidationError, match="extra"):
        Manifest.model_validate({**make_manifest(files).model_dump(), "surprise": 1})
    with pytest.raises(ValidationError, match="schema_version"):
        make_manifest(files, schema_version=2)
    with pytest.raises(ValidationError, match="timezone"):
        make_manifest(files, created=datetime(2024, 1, 1))
    with pytest.raises(ValidationError, match="listed twice"):
        make_manifest(files * 2)
    with pytest.raises(ValidationError):
        make_manifest(files, snapshot_id="x")


def test_page_entry_defaults() -> None:
    page = PageEntry(url="u", final_url="u", title="", status=None, captured_at=samples.T0)
    assert (page.screenshot, page.text, page.actions, page.depth, page.parent) == (None, None, [], 0, None)
    with pytest.raises(ValidationError):
        PageEntry(url="u", final_url="u", title="", status=None, captured_at=samples.T0, screenshot="/abs.png")


def test_every_model_field_is_documented() -> None:
    for model in (FileEntry, PageEntry, Manifest):
        for name, info in model.model_fields.items():
            assert info.description, f"{model.__name__}.{name}"
