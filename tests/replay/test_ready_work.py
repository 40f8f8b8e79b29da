"""Work folders a killed build left under the cache's ``ready/`` are removed by the next build, never a live one's.

A killed build is a real process killed mid-build (SIGKILL: no clean-up runs), its folder then aged by an
hour; a live build is a folder whose lock is held, by this process through a descriptor of its own, as a
running build holds it. The next build, either kind (in the index's pass, or from the index file), removes
the first and keeps the second, and a folder that is old but recently written to is kept too.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from capreplay.replay.ready.builder import build_ready
from capreplay.replay.ready.with_index import IndexWithReady
from capreplay.replay.ready.work_folders import STALE_SECONDS, WorkFolder, remove_stale
from capreplay.replay.store import INDEX_FILE
from capreplay.util.cache_folder import cache_dir
from tests.support.paths import ROOT

FIXTURES = ROOT / "snapshots" / "fixtures"
_ARCHIVE = ["archive/data-00000.warc.gz"]


def _aged(folder: Path, seconds: float = STALE_SECONDS + 60) -> Path:
    then = time.time() - seconds
    for path in [*folder.iterdir(), folder]:
        os.utime(path, (then, then))
    return folder


def _killed_build(base: Path) -> Path:
    """The work folder of a build killed while it held its lock: a child process makes it, locks it, and is
    killed."""
    code = (
        "import sys, time; from pathlib import Path; from capreplay.replay.ready.work_folders import WorkFolder; "
        "w = WorkFolder(Path(sys.argv[1])); (w.path / 'part-000.bin').write_bytes(b'x' * 1000); "
        "print(w.path, flush=True); time.sleep(60)"
    )
    child = subprocess.Popen([sys.executable, "-c", code, str(base)], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None
        folder = Path(child.stdout.readline().strip())
        assert folder.is_dir() and _locked(folder)  # held while the build lives
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(30)
    return _aged(folder)


def _locked(folder: Path) -> bool:
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


@pytest.fixture
def base() -> Path:
    folder = cache_dir() / "ready"
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob(".building-*"):  # other tests' folders are not this test's business
        shutil.rmtree(old)
    return folder


def _live(base: Path) -> tuple[WorkFolder, Path]:
    work = WorkFolder(base)
    (work.path / "part-000.bin").write_bytes(b"y")
    return work, _aged(work.path)


@pytest.mark.parametrize("build", ["index-pass", "from-index"])
def test_a_new_build_removes_killed_builds_folders_and_keeps_live_ones(base: Path, tmp_path: Path, build: str) -> None:
    killed = _killed_build(base)
    assert not _locked(killed)  # the kernel dropped the lock with the process
    live, live_path = _live(base)
    recent = base / ".building-recent"  # unlocked, but made just now: its build may not have locked it yet
    recent.mkdir()
    try:
        snapshot = tmp_path / "fixtures"
        shutil.copytree(FIXTURES, snapshot)
        if build == "index-pass":
            with IndexWithReady(snapshot, _ARCHIVE) as built:
                placed = built.place("f" * 64, hashlib.sha256(built.index.data).hexdigest())
            assert placed is not None
        else:
            index_sha256 = hashlib.sha256((snapshot / INDEX_FILE).read_bytes()).hexdigest()
            build_ready(snapshot, snapshot / INDEX_FILE, tmp_path / "ready", "f" * 64, index_sha256)
        assert not killed.exists()
        assert live_path.is_dir() and (live_path / "part-000.bin").read_bytes() == b"y"
        assert recent.is_dir()
    finally:
        live.close()
    assert not live_path.exists()


def test_an_old_folder_written_to_lately_is_kept(base: Path) -> None:
    folder = base / ".building-slow"
    folder.mkdir()
    (folder / "part-000.bin").write_bytes(b"z")
    then = time.time() - 2 * STALE_SECONDS
    os.utime(folder, (then, then))  # the folder is old, its part file was just written
    assert remove_stale(base) == []
    assert folder.is_dir()
    _aged(folder)
    assert remove_stale(base) == [folder] and not folder.exists()


def test_a_build_holds_its_work_folder_and_leaves_nothing(base: Path) -> None:
    with IndexWithReady(FIXTURES, _ARCHIVE) as built:
        (work,) = base.glob(".building-*")
        assert _locked(work)
        assert remove_stale(base, older_than=0, now=time.time() + 10 * STALE_SECONDS) == []
        assert built.index.data == (FIXTURES / INDEX_FILE).read_bytes()
    assert list(base.glob(".building-*")) == []
