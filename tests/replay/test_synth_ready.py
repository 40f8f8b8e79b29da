"""A generated snapshot comes with its ready responses, and its index is still ``build_index``'s, byte for byte.

The generator indexes in the one pass that also makes the ready responses (as a capture does); its index
must be what :func:`build_index` and :func:`format_index` give for its WARCs, and its ready folder the one a
server opens at once (not built again), holding what :func:`build_ready` builds from that index.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from capreplay.archive.index import cdxj
from capreplay.archive.index.cdxj import build_index, format_index
from capreplay.replay.ready.builder import build_ready, open_ready
from capreplay.replay.ready.responses import ReadyResponses, check_folder, ready_folder
from capreplay.testing.synth import generate_snapshot


@pytest.mark.parametrize("parallel", [False, True], ids=["one-process", "workers"])
def test_a_generated_snapshot_has_build_indexs_index_and_its_ready_responses(
    tmp_path: Path, parallel: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    if parallel:
        monkeypatch.setattr(cdxj, "PARALLEL_BYTES", 0)
    root = tmp_path / "s"
    manifest = generate_snapshot(root, 400, 5, per_file=150, scheme="http", body_scale=0.05)
    files = sorted(p.relative_to(root).as_posix() for p in (root / "archive").glob("*.warc*"))
    assert len(files) == 3
    index = (root / "index.cdxj").read_bytes()
    assert index == format_index(build_index(root, files, workers=1))
    index_sha256 = hashlib.sha256(index).hexdigest()
    assert next(f.sha256 for f in manifest.files if f.path == "index.cdxj") == index_sha256
    folder = ready_folder(manifest.snapshot_id, index_sha256)
    placed = check_folder(folder, manifest.snapshot_id, index_sha256)
    assert placed is not None and placed.responses > 300
    opened = open_ready(root, manifest.snapshot_id, index_sha256)
    assert opened is not None
    try:
        assert opened.stamps == placed  # opened as generated
    finally:
        opened.close()
    build_ready(root, root / "index.cdxj", tmp_path / "rebuilt", manifest.snapshot_id, index_sha256)
    urls = [json.loads(line.split(" ", 2)[2])["url"] for line in index.decode().splitlines()]
    made = _responses(folder, manifest.snapshot_id, index_sha256, urls)
    assert made == _responses(tmp_path / "rebuilt", manifest.snapshot_id, index_sha256, urls)
    assert len(made) == placed.responses


def _responses(folder: Path, snapshot_id: str, index_sha256: str, urls: list[str]) -> dict[str, tuple[object, ...]]:
    """Each URL's ready response in ``folder``: its bytes, head length, Date offset and status."""
    stamps = check_folder(folder, snapshot_id, index_sha256)
    assert stamps is not None
    ready = ReadyResponses(folder, stamps)
    found: dict[str, tuple[object, ...]] = {}
    try:
        for url in urls:
            at = ready.find(url)
            if at is not None:
                data = os.pread(ready.parts[at.part].fileno(), at.length, at.offset)
                found[url] = (data, at.head_length, at.date_at, at.status)
    finally:
        ready.close()
    return found
