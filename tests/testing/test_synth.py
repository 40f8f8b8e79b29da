"""The synthetic snapshot generator: valid snapshots, the same bytes from the same seed, a realistic mix."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from capreplay.archive.index.cdxj import load_index
from capreplay.archive.snapshot.manifest import checked_manifest
from capreplay.errors import InputError
from capreplay.testing.synth import generate_snapshot, plan, url_list


def _bytes_of(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_a_generated_snapshot_verifies_and_lists_its_pages(tmp_path: Path) -> None:
    manifest = generate_snapshot(tmp_path / "s", 600, seed=3, per_file=250)
    assert checked_manifest(tmp_path / "s").snapshot_id == manifest.snapshot_id
    assert manifest.complete
    archives = [f.path for f in manifest.files if f.path.startswith("archive/")]
    assert archives == [f"archive/data-0000{i}.warc.gz" for i in range(3)]  # rotated every 250 responses
    entries = load_index(tmp_path / "s" / "index.cdxj")
    assert len(entries) == 600
    html = {e.url for e in entries if e.mime == "text/html" and e.status == 200}
    assert {p.url for p in manifest.pages} == html
    assert set(manifest.hosts) == {e.url.split("/")[2] for e in entries}
    assert url_list(tmp_path / "s") == [e.url for e in sorted(entries, key=lambda e: e.seq)]


def test_the_same_seed_gives_the_same_bytes_however_many_workers(tmp_path: Path) -> None:
    generate_snapshot(tmp_path / "a", 300, seed=5, per_file=100, workers=1)
    generate_snapshot(tmp_path / "b", 300, seed=5, per_file=100, workers=2)
    generate_snapshot(tmp_path / "c", 300, seed=6, per_file=100, workers=1)
    first = _bytes_of(tmp_path / "a")
    assert first == _bytes_of(tmp_path / "b")
    assert first["archive/data-00000.warc.gz"] != _bytes_of(tmp_path / "c")["archive/data-00000.warc.gz"]


def test_the_mix_is_realistic() -> None:
    items = plan(20_000, seed=0)
    kinds = Counter(i.kind.name for i in items)
    assert set(kinds) == {"html", "redirect", "css", "js", "png", "jpeg", "json"}
    assert 0.12 < kinds["html"] / len(items) < 0.16
    assert len({i.host for i in items}) == 50
    assert len({i.url for i in items}) == len(items)
    assert 0.1 < sum("?" in i.url for i in items) / len(items) < 0.4
    # Stored sizes: mean near 6.2 KB (6.7 KB per response once headers and framing are added), long tail.
    sizes = sorted(i.size for i in items)
    assert 5_500 < sum(sizes) / len(sizes) < 7_000
    assert sizes[len(sizes) // 2] < 4_000 < sizes[int(len(sizes) * 0.95)]


def test_large_videos_come_last_and_bad_sizes_are_refused(tmp_path: Path) -> None:
    items = plan(10, seed=0, large=2)
    assert [i.kind.name for i in items[10:]] == ["video", "video"]
    assert all(i.size == 8 << 20 for i in items[10:])
    with pytest.raises(InputError):
        plan(0, seed=0)
    (tmp_path / "used").mkdir()
    (tmp_path / "used" / "x").write_text("x")
    with pytest.raises(InputError):
        generate_snapshot(tmp_path / "used", 10)
