"""The index at scale: a generated snapshot of 100,000 responses, indexed once for the whole session.

Bodies are shrunk to a hundredth of their realistic size: the index holds headers and places, so the
record count is what matters here, and small bodies keep the session's set-up under a minute. Timings are
measured by ``scripts/bench_replay.py``, not here; these tests check that the large index is right.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from capreplay.archive.index.lookup import SortedIndex, check_index
from capreplay.archive.snapshot.manifest import load_manifest
from capreplay.archive.warc.read import read_record
from capreplay.replay.store import INDEX_FILE, SnapshotStore
from capreplay.testing.synth import generate_snapshot, url_list

RECORDS = 100_000
SEED = 5


@pytest.fixture(scope="session")
def large(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The snapshot, written and indexed (``build_index``, several processes) once per session."""
    root = tmp_path_factory.mktemp("index-scale") / "snap"
    generate_snapshot(root, RECORDS, SEED, workers=os.cpu_count() or 1, body_scale=0.01)
    return root


@pytest.fixture(scope="session")
def store(large: Path) -> Iterator[SnapshotStore]:
    opened = SnapshotStore(large)
    yield opened
    opened.close()


@pytest.mark.slow
def test_the_index_holds_every_response_sorted_and_inside_its_files(large: Path) -> None:
    index = SortedIndex.open(large / INDEX_FILE)
    try:
        lines = [line for _, line in index]
        sizes = {f.path: f.size for f in load_manifest(large).files}
        origins = check_index(index, large, sizes)
    finally:
        index.close()
    assert len(lines) == RECORDS
    keys = [line.split(b" ", 2)[:2] for line in lines]
    assert keys == sorted(keys)
    assert len(origins) == 50  # the generator's default number of hosts


@pytest.mark.slow
def test_sampled_urls_find_their_own_records_by_offset(store: SnapshotStore, large: Path) -> None:
    urls = url_list(large)
    assert len(urls) == RECORDS
    rng = random.Random(SEED)
    sample = rng.sample(urls, 2_000)
    files: dict[str, object] = {}
    try:
        for url in sample:
            match = store.matcher.match("GET", url, None)
            assert match is not None and match.rule is None, url
            entry = store.index.entry(match.candidate.ref)
            assert entry.url == url
            stream = files.setdefault(entry.filename, open(large / entry.filename, "rb"))  # noqa: SIM115
            archived = read_record(stream, entry.offset)  # type: ignore[arg-type]
            assert store.response(match.candidate.ref).body == archived.payload
    finally:
        for stream in files.values():
            stream.close()  # type: ignore[attr-defined]


@pytest.mark.slow
def test_fuzzy_variants_and_misses_are_answered_in_a_large_index(store: SnapshotStore) -> None:
    urls = [e.url for _, e in zip(range(400), (store.index.entry(o) for o, _ in store.index), strict=False)]
    for url in urls[::20]:
        busted = url + ("&" if "?" in url else "?") + "_=1700000000123"
        found = store.matcher.match("GET", busted, None)
        assert found is not None and found.candidate.url == url and found.rule == "cache-busting"
    missing = urls[0].rsplit("/", 1)[0] + "/never-archived.css"
    assert store.matcher.match("GET", missing, None) is None
    assert store.matcher.nearest("GET", missing) is not None


# VmHWM, not getrusage: ru_maxrss survives exec, so a child of a large pytest process would report the parent's.
_OPEN_AND_MEASURE = """
import sys
from pathlib import Path
from capreplay.replay.store import SnapshotStore
store = SnapshotStore(Path(sys.argv[1]))
assert store.matcher.match("GET", sys.argv[2], None) is not None
print(next(line.split()[1] for line in open("/proc/self/status") if line.startswith("VmHWM")))
"""


@pytest.mark.slow
def test_serving_the_large_snapshot_keeps_no_object_per_record(large: Path, store: SnapshotStore) -> None:
    # A fresh process opens the snapshot (the verification record is warm: ``store`` opened it first) and
    # answers one request. Holding an object per record, as a loaded index would, costs hundreds of MB.
    url = url_list(large)[RECORDS // 2]
    run = subprocess.run([sys.executable, "-c", _OPEN_AND_MEASURE, str(large), url], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    peak_mb = int(run.stdout) / 1024
    assert peak_mb < 120, f"peak RSS {peak_mb:.0f} MB"
