"""``capreplay export`` refuses bad input: exit status 2, one line on stderr naming the file and the problem,
and nothing written (no WACZ, no temporary file, the snapshot untouched).

The cases call the command line's ``main()`` in this process, since each new process spends two seconds
importing capreplay; one case and the ``--force`` case also run ``python -m capreplay`` as a subprocess.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from capreplay.cli import main

REPO = Path(__file__).resolve().parents[2]
FIXTURE_SNAPSHOT = REPO / "snapshots" / "fixtures"
WARC = "archive/data-00000.warc.gz"
TIMEOUT = 60.0
"""Seconds a subprocess run may take."""


@dataclass
class Case:
    """A prepared export: its arguments, the folders that must not change, what stderr must say."""

    args: list[str]
    watched: list[Path]
    says: list[str]
    """Phrases the one stderr line must contain (file names and the problem)."""
    status: int = 2


def _state(folders: list[Path]) -> dict[str, str]:
    """Every file under ``folders`` with its sha256: what "nothing written" is checked against."""
    found: dict[str, str] = {}
    for folder in folders:
        if folder.is_file():
            found[str(folder)] = hashlib.sha256(folder.read_bytes()).hexdigest()
            continue
        for path in sorted(folder.rglob("*")) if folder.is_dir() else []:
            found[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "folder"
    return found


def _snapshot_copy(base: Path, edit: Callable[[Path], None] | None = None) -> Path:
    root = base / "snap"
    shutil.copytree(FIXTURE_SNAPSHOT, root)
    if edit is not None:
        edit(root / WARC)
    return root


def _truncate(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[:-100])


def _flip(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x40
    path.write_bytes(bytes(data))


def _cases(base: Path) -> dict[str, Case]:
    def folder(name: str) -> Path:
        path = base / name
        path.mkdir(parents=True)
        return path

    cases: dict[str, Case] = {}

    out = folder("empty-out")
    empty = folder("empty-snapshot")
    cases["empty folder"] = Case([str(empty), "-o", str(out / "x.wacz")], [empty, out],
                                 [str(empty), "not a snapshot: no manifest.json"])
    out = folder("missing-out")
    cases["missing folder"] = Case([str(base / "nowhere"), "-o", str(out / "x.wacz")], [out],
                                   [str(base / "nowhere"), "no such folder"])
    out = folder("file-out")
    a_file = out / "notes.txt"
    a_file.write_text("not a snapshot\n")
    cases["a file"] = Case([str(a_file), "-o", str(out / "x.wacz")], [out], [str(a_file), "not a folder"])

    work = folder("truncated")
    snap = _snapshot_copy(work, _truncate)
    cases["truncated WARC"] = Case([str(snap), "-o", str(work / "x.wacz")], [work],
                                   [str(snap / WARC), "truncated or changed"])
    work = folder("flipped")
    snap = _snapshot_copy(work, _flip)
    cases["flipped byte"] = Case([str(snap), "-o", str(work / "x.wacz")], [work],
                                 [str(snap / WARC), "sha256 does not match manifest.json"])

    work = folder("no-out-folder")
    cases["output folder missing"] = Case([str(FIXTURE_SNAPSHOT), "-o", str(work / "nope" / "x.wacz")], [work],
                                          [str(work / "nope" / "x.wacz"), f"its folder {work / 'nope'} does not exist"])
    work = folder("exists")
    (work / "x.wacz").write_bytes(b"an older export\n")
    cases["output exists"] = Case([str(FIXTURE_SNAPSHOT), "-o", str(work / "x.wacz")], [work],
                                  [str(work / "x.wacz"), "already exists; pass --force to replace it"])
    work = folder("not-wacz")
    cases["output not .wacz"] = Case([str(FIXTURE_SNAPSHOT), "-o", str(work / "x.zip")], [work],
                                     [str(work / "x.zip"), "must end in .wacz"])
    work = folder("is-dir")
    (work / "x.wacz").mkdir()
    cases["output is a folder"] = Case([str(FIXTURE_SNAPSHOT), "-o", str(work / "x.wacz")], [work],
                                       [str(work / "x.wacz"), "is a folder"])
    work = folder("inside")
    snap = _snapshot_copy(work)
    cases["output inside the snapshot"] = Case([str(snap), "-o", str(snap / "x.wacz")], [work],
                                               [str(snap / "x.wacz"), "inside the snapshot folder"])
    cases["no output given"] = Case([str(FIXTURE_SNAPSHOT)], [], ["-o/--out/--output", "required"])
    return cases


def _main(args: list[str]) -> int:
    """The command line in this process (as the console script runs it): its exit status."""
    try:
        return main(["export", *args])
    except SystemExit as e:  # argparse's own usage errors end this way
        return int(e.code or 0)


CASES = ["empty folder", "missing folder", "a file", "truncated WARC", "flipped byte", "output folder missing",
         "output exists", "output not .wacz", "output is a folder", "output inside the snapshot", "no output given"]


@pytest.mark.parametrize("name", CASES)
def test_bad_input_is_refused_in_one_line_and_nothing_is_written(tmp_path: Path, name: str,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    case = _cases(tmp_path)[name]
    before = _state(case.watched)
    status = _main(case.args)
    out, err = capsys.readouterr()
    described = f"exit {status}\nstdout: {out!r}\nstderr: {err!r}"
    assert status == 2, described
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("capreplay export: "), described
    for phrase in case.says:
        assert phrase in lines[0], described
    assert out == "", described
    assert _state(case.watched) == before, "something was written or changed"


def test_the_real_command_refuses_a_tampered_snapshot(tmp_path: Path) -> None:
    # once through the console entry point in its own process, as a user runs it
    case = _cases(tmp_path)["flipped byte"]
    before = _state(case.watched)
    done = subprocess.run([sys.executable, "-m", "capreplay", "export", *case.args], capture_output=True, text=True,
                          timeout=TIMEOUT, check=False, stdin=subprocess.DEVNULL)
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and all(p in done.stderr for p in case.says), done.stderr
    assert _state(case.watched) == before


def test_force_replaces_an_existing_export(tmp_path: Path) -> None:
    out = tmp_path / "x.wacz"
    out.write_bytes(b"an older export\n")
    done = subprocess.run([sys.executable, "-m", "capreplay", "export", str(FIXTURE_SNAPSHOT), "-o", str(out),
                           "--force"], capture_output=True, text=True, timeout=TIMEOUT, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"wrote {out}: ") and done.stdout.count("\n") == 1
    assert out.read_bytes()[:2] == b"PK"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.wacz"]
