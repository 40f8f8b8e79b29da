"""A capture that is stopped (Ctrl-C, SIGTERM, SIGKILL) or cannot write leaves readable WARCs and an honest manifest.

docs/verbs/capture.md promises: "An interrupted capture leaves readable WARCs and a manifest with "complete": false".
Each test captures the bundled fixture sites with ``python -m capreplay capture`` as a real subprocess, stops
it once the manifest lists a first page, and reads what it left. Every capture runs with its own TMPDIR, so
the temporary folders it makes (mitmproxy's CA key, Chromium's profile) can be checked for, and every process
it started is recorded while it runs and checked (and killed) afterwards.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from capreplay.archive.snapshot.manifest import checked_manifest
from capreplay.archive.warc.read import iter_records
from capreplay.archive.warc.stored import StoredRecord
from capreplay.errors import ArchiveError
from tests.support.signals import default_sigint

pytestmark = pytest.mark.browser  # every test captures with Chromium

FIRST_PAGE_TIMEOUT = 60.0
"""Seconds to wait for the manifest to list a first page (it takes about six)."""
EXIT_TIMEOUT = 60.0
"""Seconds a capture may take to exit once signalled."""


# -- processes ------------------------------------------------------------------------------------------------


def _stat(pid: int) -> tuple[int, int] | None:
    """(parent pid, start time) of a live process, None if it is gone or a zombie."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text.rsplit(")", 1)[1].split()
    if fields[0] == "Z":
        return None
    return int(fields[1]), int(fields[19])


def process_tree(root: int) -> set[tuple[int, int]]:
    """``root`` and every process below it, as (pid, start time) so that a reused pid is never mistaken."""
    children: dict[int, list[tuple[int, int]]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (st := _stat(int(entry))) is not None:
            children.setdefault(st[0], []).append((int(entry), st[1]))
    found: set[tuple[int, int]] = set()
    root_stat = _stat(root)
    todo = [(root, root_stat[1])] if root_stat else []
    while todo:
        proc = todo.pop()
        found.add(proc)
        todo.extend(children.get(proc[0], []))
    return found


def alive(procs: set[tuple[int, int]]) -> list[str]:
    """Which of ``procs`` still run (same pid, same start time), with their command lines."""
    left = []
    for pid, started in sorted(procs):
        st = _stat(pid)
        if st is not None and st[1] == started:
            try:
                cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                cmd = "?"
            left.append(f"{pid} {cmd[:120]}")
    return left


def kill_procs(procs: set[tuple[int, int]]) -> None:
    """SIGKILL whichever of ``procs`` still run, by pid, after checking each is still the same process."""
    for pid, started in procs:
        st = _stat(pid)
        if st is not None and st[1] == started:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


# -- fixture sites and captures -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def sites(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """The bundled fixture origin sites, as ``python -m capreplay.testing.fixtures`` runs them; stopped at the end."""
    log = tmp_path_factory.mktemp("sites") / "stderr.txt"
    with log.open("w") as stderr:
        proc = subprocess.Popen([sys.executable, "-m", "capreplay.testing.fixtures"], stdout=subprocess.PIPE,
                                stderr=stderr, text=True, start_new_session=True, preexec_fn=default_sigint)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        if not line:
            pytest.fail(f"the fixture sites did not start: {log.read_text()[-2000:]}")
        yield json.loads(line)
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


@pytest.fixture(scope="module")
def plan(sites: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every fixture start page, each held 1.5 s after the network settles so that a capture can be caught."""
    pages = [{"url": url, "actions": [{"type": "wait_for_network_idle"}, {"type": "wait", "ms": 1500}]}
             for url in sites["start_urls"]]
    path = tmp_path_factory.mktemp("plan") / "plan.json"
    path.write_text(json.dumps({"pages": pages}, indent=2))
    return path


@dataclass
class Capture:
    """One running ``capreplay capture --plan PLAN -o OUT``."""

    proc: subprocess.Popen[str]
    out: Path
    tmpdir: Path
    plan_pages: int
    procs: set[tuple[int, int]] = field(default_factory=set)
    """Every process of the capture seen so far (python, Playwright's driver, Chromium and its helpers)."""

    def wait_for_pages(self, count: int = 1) -> dict[str, Any]:
        """Poll until manifest.json lists ``count`` pages; fails if the capture ends first or takes too long."""
        deadline = time.monotonic() + FIRST_PAGE_TIMEOUT
        while time.monotonic() < deadline:
            self.procs |= process_tree(self.proc.pid)
            if self.proc.poll() is not None:
                _, err = self.proc.communicate()
                pytest.fail(f"the capture ended (status {self.proc.returncode}) before its manifest listed "
                            f"{count} page(s); stderr: {err[-2000:]!r}")
            try:
                manifest: dict[str, Any] = json.loads((self.out / "manifest.json").read_text())
            except (OSError, ValueError):
                manifest = {}
            if len(manifest.get("pages", [])) >= count:
                return manifest
            time.sleep(0.1)
        pytest.fail(f"no manifest listing {count} page(s) in {self.out} after {FIRST_PAGE_TIMEOUT:.0f} s")

    def stop(self, sig: signal.Signals) -> tuple[int, str, str]:
        """Send ``sig`` and wait for the capture to exit: (status, stdout, stderr)."""
        self.procs |= process_tree(self.proc.pid)
        self.proc.send_signal(sig)
        return self.finish()

    def finish(self) -> tuple[int, str, str]:
        """Wait for the capture to exit on its own, noting its processes meanwhile: (status, stdout, stderr)."""
        deadline = time.monotonic() + EXIT_TIMEOUT
        while True:
            self.procs |= process_tree(self.proc.pid)
            try:
                out, err = self.proc.communicate(timeout=0.2)  # a retry after a timeout loses no output
            except subprocess.TimeoutExpired:
                if time.monotonic() > deadline:
                    pytest.fail(f"the capture was still running {EXIT_TIMEOUT:.0f} s later")
                continue
            return self.proc.returncode, out, err

    def leftovers(self) -> tuple[list[str], list[str]]:
        """(processes of the capture still running, temporary folders it left in its TMPDIR)."""
        deadline = time.monotonic() + 5  # Chromium's helpers go a moment after their parent
        while alive(self.procs) and time.monotonic() < deadline:
            time.sleep(0.1)
        return alive(self.procs), sorted(p.name for p in self.tmpdir.iterdir())


StartCapture = Callable[[Path], Capture]


@pytest.fixture
def start_capture(sites: dict[str, Any], plan: Path, tmp_path: Path) -> Iterator[StartCapture]:
    """Starts captures of the fixture plan into a given folder; kills every process of them at teardown."""
    started: list[Capture] = []

    def start(out: Path) -> Capture:
        # short, because Chromium puts a unix socket in its profile there (at most 107 bytes of path)
        tmpdir = Path(tempfile.mkdtemp(prefix="capreplay-test-"))
        args = [sys.executable, "-m", "capreplay", "capture", "--plan", str(plan), "-o", str(out), "--no-progress"]
        for mapping in sites["map"]:
            args += ["--map", mapping]
        proc = subprocess.Popen(args, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env={**os.environ, "TMPDIR": str(tmpdir)}, start_new_session=True,
                                preexec_fn=default_sigint)
        capture = Capture(proc, out, tmpdir, len(sites["start_urls"]))
        started.append(capture)
        return capture

    yield start
    for capture in started:
        if capture.proc.poll() is None:
            capture.procs |= process_tree(capture.proc.pid)
            capture.proc.kill()
        capture.proc.communicate()
        kill_procs(capture.procs)
        shutil.rmtree(capture.tmpdir, ignore_errors=True)


# -- reading what a capture left ------------------------------------------------------------------------------


def read_warc(path: Path) -> list[StoredRecord]:
    """Every record of a WARC, read strictly to its end (an ArchiveError fails the test)."""
    with path.open("rb") as stream:
        return list(iter_records(stream, str(path)))


def warcs(out: Path) -> list[Path]:
    """The snapshot's WARC files."""
    return sorted((out / "archive").glob("*.warc.gz"))


def one_line(stderr: str) -> str:
    """The one line on stderr (asserted: exactly one, and no traceback)."""
    assert "Traceback" not in stderr, f"a traceback on stderr: {stderr[-3000:]}"
    lines = stderr.splitlines()
    assert len(lines) == 1, f"expected one line on stderr, got {len(lines)}: {stderr[-3000:]!r}"
    return lines[0]


def check_interrupted_snapshot(capture: Capture) -> dict[str, Any]:
    """What an interrupted capture must leave: complete false, fewer pages than planned, WARCs readable to
    their end, and every file matching the manifest (checked_manifest). Returns the manifest."""
    manifest: dict[str, Any] = json.loads((capture.out / "manifest.json").read_text())
    assert manifest["complete"] is False, "an interrupted capture wrote complete: true"
    assert 1 <= len(manifest["pages"]) < capture.plan_pages, f"{len(manifest['pages'])} pages of {capture.plan_pages}"
    assert warcs(capture.out), "no WARC left"
    for warc in warcs(capture.out):
        assert read_warc(warc), f"{warc} holds no records"
    checked_manifest(capture.out)
    return manifest


def check_stopped_like_ctrl_c(capture: Capture, status: int, stderr: str) -> None:
    """A capture told to stop finishes like Ctrl-C: it exits by itself (130, or 143 for SIGTERM) with one line
    saying so, writes the index as a finished capture does, leaves no process running and no temporary
    folder behind. Every difference is listed at once."""
    problems: list[str] = []
    if status not in (130, 143):
        how = f"was killed by signal {-status}" if status < 0 else f"exited with status {status}"
        problems.append(f"the capture {how}; expected it to stop cleanly with status 130 (or 143)")
    lines = stderr.splitlines()
    if "Traceback" in stderr or len(lines) != 1 or not any(w in stderr for w in ("interrupted", "terminated")):
        problems.append(f"expected one line on stderr saying it was interrupted, got {stderr[-1000:]!r}")
    if not (capture.out / "index.cdxj").is_file():
        problems.append("no index.cdxj: the capture did not finish its snapshot (Ctrl-C writes it)")
    running, temps = capture.leftovers()
    if running:
        problems.append(f"processes still running: {running}")
    if temps:
        problems.append(f"temporary folders left in TMPDIR (mitmproxy's CA key, Chromium's profile): {temps}")
    assert not problems, "\n".join(problems)


# -- the tests ------------------------------------------------------------------------------------------------


def test_ctrl_c_leaves_a_consistent_incomplete_snapshot(start_capture: StartCapture, tmp_path: Path) -> None:
    """Ctrl-C (SIGINT) after the first page: the capture exits with 130 and one line, the manifest says
    complete: false and lists fewer pages than the plan, every WARC reads to its end, every file matches the
    manifest, nothing is left running or in TMPDIR, and `capreplay verify --json` replays every captured page
    from the snapshot with 0 misses."""
    capture = start_capture(tmp_path / "out")
    capture.wait_for_pages(1)
    status, _, stderr = capture.stop(signal.SIGINT)

    manifest = check_interrupted_snapshot(capture)
    check_stopped_like_ctrl_c(capture, status, stderr)
    assert status == 130

    verify = subprocess.run([sys.executable, "-m", "capreplay", "verify", str(capture.out), "--json"],
                            cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert verify.returncode == 0, f"verify exited {verify.returncode}: {verify.stderr[-2000:]}"
    report = json.loads(verify.stdout)
    assert [p["url"] for p in report["pages"]] == [p["url"] for p in manifest["pages"]]
    assert report["misses"] == 0, [r for p in report["pages"] for r in p["requests"] if r["result"] == "miss"]
    assert all(p["status"] == "ok" for p in report["pages"]), report["pages"]


def test_sigterm_stops_a_capture_like_ctrl_c(start_capture: StartCapture, tmp_path: Path) -> None:
    """SIGTERM (a user's `kill`, a job scheduler's stop) after the first page has the same outcome as Ctrl-C:
    a snapshot with complete: false whose WARCs read to their end and whose files match the manifest, and
    then a clean stop: status 130 or 143 and one line on stderr, the index written, no process and no
    temporary folder (mitmproxy's CA private key, Chromium's profile) left behind."""
    capture = start_capture(tmp_path / "out")
    capture.wait_for_pages(1)
    status, _, stderr = capture.stop(signal.SIGTERM)

    check_interrupted_snapshot(capture)
    check_stopped_like_ctrl_c(capture, status, stderr)


def test_sigkill_leaves_whole_records_up_to_the_manifest(start_capture: StartCapture, tmp_path: Path) -> None:
    """kill -9 after the first page. Nothing of capreplay runs after SIGKILL, so this checks only what was
    already on disk, which is what the capture's write order guarantees:

    - manifest.json is replaced atomically (write, fsync, rename), so the one on disk is a whole, earlier
      manifest: it parses, says complete: false and lists at least the first page;
    - the WARC is append-only and synced before each manifest is written, so its first N bytes, N being the
      size the manifest lists, hash to the manifest's sha256 and read record by record to exactly N;
    - the rest of the WARC, written after that manifest, may end in a record cut mid-write: every record
      before the cut reads, and a read error may only come from beyond N;
    - every other file the manifest lists is whole (written before the manifest that lists it).

    A kill cannot guarantee that the WARC ends on a whole record, that its size equals the manifest's, that
    an index exists, or that temporary folders are removed; none of that is asserted.
    """
    capture = start_capture(tmp_path / "out")
    capture.wait_for_pages(1)
    status, _, _ = capture.stop(signal.SIGKILL)
    assert status == -signal.SIGKILL

    manifest: dict[str, Any] = json.loads((capture.out / "manifest.json").read_text())
    assert manifest["complete"] is False
    assert 1 <= len(manifest["pages"]) < capture.plan_pages
    listed = {f["path"]: f for f in manifest["files"]}
    assert any(p.startswith("archive/") for p in listed), "the manifest lists no WARC"
    for rel, entry in listed.items():
        data = (capture.out / rel).read_bytes()
        if rel.startswith("archive/"):
            assert len(data) >= entry["size"], f"{rel} is shorter than the manifest says: it was cut"
            vouched = data[: entry["size"]]
            assert hashlib.sha256(vouched).hexdigest() == entry["sha256"], f"{rel}: bytes the manifest lists changed"
            records = list(iter_records(io.BytesIO(vouched), rel))
            assert records[-1].offset + records[-1].length == entry["size"], f"{rel}: manifest size not on a record"
            read: list[StoredRecord] = []
            try:
                for record in iter_records(io.BytesIO(data), rel):
                    read.append(record)
            except ArchiveError:
                # a record cut by the kill: everything before it must have been read
                end = read[-1].offset + read[-1].length if read else 0
                assert end >= entry["size"], f"{rel}: unreadable before the size the manifest lists"
        else:
            assert len(data) == entry["size"] and hashlib.sha256(data).hexdigest() == entry["sha256"], rel


@pytest.fixture
def small_disk(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Path]:
    """A tmpfs of ``request.param`` bytes (e.g. "200k"), unmounted at teardown. Needs root: fails otherwise."""
    mount_point = tmp_path / "disk"
    mount_point.mkdir()
    size = str(request.param)
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(mount_point)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        pytest.fail(f"cannot mount a {size} tmpfs at {mount_point} (this test needs root and mount): "
                    f"{done.stderr.strip() or done.returncode}")
    try:
        yield mount_point
    finally:
        if subprocess.run(["umount", str(mount_point)], capture_output=True).returncode != 0:
            subprocess.run(["umount", "-l", str(mount_point)], capture_output=True)


@pytest.mark.parametrize(
    "small_disk",
    [
        pytest.param("200k", id="full-while-writing-a-screenshot"),
        pytest.param("32k", id="full-while-appending-a-warc-record"),
    ],
    indirect=True,
)
def test_capture_that_cannot_write_exits_1(small_disk: Path, start_capture: StartCapture) -> None:
    """A capture onto a disk that fills up fails loudly and honestly: status 1 (a capture error, not 0 and
    not 2, which would blame the user's input), one line on stderr saying it cannot write for lack of space
    and naming where, no traceback; what it wrote before is readable: every WARC reads record by record to its
    end, and a manifest, if one could be written, says complete: false; nothing is left running or in
    TMPDIR. With 200 KB the first page's records fit and its screenshot does not; with 32 KB the first page's
    records do not fit, so a WARC append fails halfway through a record."""
    out = small_disk / "out"
    capture = start_capture(out)
    status, _, stderr = capture.finish()

    assert status == 1, f"expected status 1 for a capture that cannot write, got {status}: {stderr[-2000:]!r}"
    line = one_line(stderr)
    assert "No space left on device" in line, line
    assert str(out) in line, f"the line does not name where it could not write: {line}"
    for warc in warcs(out):
        read_warc(warc)
    if (out / "manifest.json").exists():
        assert json.loads((out / "manifest.json").read_text())["complete"] is False
    running, temps = capture.leftovers()
    assert not running, f"processes still running: {running}"
    assert not temps, f"temporary folders left in TMPDIR: {temps}"
