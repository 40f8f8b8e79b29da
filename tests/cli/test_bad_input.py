"""Bad input on the command line: exit status 2, one line on stderr naming the file and the problem, nothing written.

This is the contract of DESIGN.md ("Exit status 2 for bad input ... one clear line on stderr naming the file
and what is wrong; never a traceback for a user mistake") and of docs/README.md ("Bad input ... exits with status
2 and one line on stderr"). Every case runs ``python -m capreplay`` in a process of its own (forked from a warm
one that imported the verbs: tests/support/cli.py) in an empty working folder, and checks afterwards that neither
the input nor the working folder changed by a single byte.

The ``runs`` fixture starts every case at once on a small pool (one worker per CPU) and each test waits for its
own. A run that does not refuse its input is killed after ``TIMEOUT`` seconds;
``serve`` is killed as soon as it prints anything on stdout, since its first line means it started serving.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import shutil
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from capreplay.archive.snapshot.manifest import collect_files, load_manifest, write_manifest
from capreplay.models.manifest import snapshot_id
from tests.support.cli import WarmRun, first_stdout_line, start

REPO = Path(__file__).resolve().parents[2]
FIXTURE_SNAPSHOT = REPO / "snapshots" / "fixtures"
WARC = "archive/data-00000.warc.gz"
SHOP = "https://www.shop.test/"
TIMEOUT = 60.0
"""Seconds a run may take; bad input is refused in about two (four on a busy machine)."""
WORKERS = os.cpu_count() or 2
"""Runs at once: importing capreplay takes a CPU for about two seconds, so one per CPU."""
NOWHERE = "www.shop.test=127.0.0.1:9"
"""A --map to a closed port, so that a capture which wrongly starts cannot reach anything."""


# -- running the command line ---------------------------------------------------------------------------------


@dataclass
class CliRun:
    """How one ``python -m capreplay ...`` ended."""

    args: list[str]
    returncode: int | None
    """None if it was killed: it ran past ``TIMEOUT`` or (serve) started serving."""
    stdout: str
    stderr: str
    killed_because: str | None = None

    def describe(self) -> str:
        """The command and what it printed, for assertion messages."""
        return (f"`capreplay {' '.join(self.args)}` -> status {self.returncode}"
                f"{f' (killed: {self.killed_because})' if self.killed_because else ''}\n"
                f"stdout: {self.stdout[:500]!r}\nstderr: {self.stderr[-2000:]!r}")


@dataclass
class Batch:
    """Runs many command lines at once; every run it started is killed when the fixture ends."""

    pool: ThreadPoolExecutor
    started: list[WarmRun] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    closed: bool = False

    def submit(self, args: list[str], cwd: Path, *, stop_on_stdout: bool = False) -> Future[CliRun]:
        """Start ``capreplay ARGS`` in ``cwd`` as soon as a worker is free."""
        return self.pool.submit(self._run, args, cwd, stop_on_stdout)

    def _run(self, args: list[str], cwd: Path, stop_on_stdout: bool) -> CliRun:
        with self.lock:
            if self.closed:
                return CliRun(args, None, "", "", "the batch was closed before it started")
            run = start(args, cwd=cwd)
            self.started.append(run)
        reason = ""
        if stop_on_stdout and first_stdout_line(run, TIMEOUT):
            reason = "it printed on stdout, so it started serving"
        elif run.wait(TIMEOUT) is None:
            reason = f"still running after {TIMEOUT:.0f} s"
        if reason:
            run.kill()
        code = None if reason else run.returncode
        return CliRun(args, code, *run.output(), reason or None)

    def close(self) -> None:
        """Start nothing more, and kill whatever still runs (a run that hangs, or one a failing test left)."""
        with self.lock:
            self.closed = True
        for run in self.started:
            run.kill()


def tree(root: Path) -> dict[str, bytes | None]:
    """Every path under ``root`` with its bytes (None for a folder): equal trees mean nothing was written."""
    return {p.relative_to(root).as_posix(): None if p.is_dir() else p.read_bytes() for p in sorted(root.rglob("*"))}


def assert_refused(run: CliRun, *needles: str, problem: str | None = None) -> None:
    """Exit status 2, exactly one line on stderr and no traceback; the line names every needle and the problem."""
    assert run.returncode == 2, f"expected exit status 2 for bad input\n{run.describe()}"
    assert "Traceback" not in run.stderr, f"a traceback for bad input\n{run.describe()}"
    lines = run.stderr.splitlines()
    assert len(lines) == 1, f"expected exactly one line on stderr, got {len(lines)}\n{run.describe()}"
    for needle in needles:
        assert needle in lines[0], f"stderr does not name {needle!r}\n{run.describe()}"
    if problem is not None:
        assert re.search(problem, lines[0], re.IGNORECASE), f"stderr does not say /{problem}/\n{run.describe()}"


# -- broken snapshots -----------------------------------------------------------------------------------------


def copy_snapshot(case: Path) -> Path:
    """A private copy of the committed fixture snapshot, to break."""
    return Path(shutil.copytree(FIXTURE_SNAPSHOT, case / "snap"))


def truncated_warc(case: Path) -> tuple[Path, Path]:
    snap = copy_snapshot(case)
    warc = snap / WARC
    data = warc.read_bytes()
    warc.write_bytes(data[: len(data) // 2])
    return snap, warc


def truncated_warc_rehashed(case: Path) -> tuple[Path, Path]:
    # The manifest is made to match the cut file, as a tool that re-hashes a snapshot would: every hash now
    # agrees, yet the archive is still unreadable past the cut and must not be served.
    snap, warc = truncated_warc(case)
    files = collect_files(snap)
    manifest = load_manifest(snap)
    manifest = manifest.model_copy(update={"files": files, "snapshot_id": snapshot_id(files, manifest.pages)})
    write_manifest(snap, manifest)
    return snap, warc


def flipped_warc_byte(case: Path) -> tuple[Path, Path]:
    snap = copy_snapshot(case)
    warc = snap / WARC
    data = bytearray(warc.read_bytes())
    data[len(data) // 2] ^= 0xFF
    warc.write_bytes(bytes(data))
    return snap, warc


def missing_screenshot(case: Path) -> tuple[Path, Path]:
    snap = copy_snapshot(case)
    (snap / "captures/0000.png").unlink()
    return snap, snap / "captures/0000.png"


def appended_index_byte(case: Path) -> tuple[Path, Path]:
    snap = copy_snapshot(case)
    with (snap / "index.cdxj").open("ab") as f:
        f.write(b"\n")
    return snap, snap / "index.cdxj"


def extra_warc(case: Path) -> tuple[Path, Path]:
    snap = copy_snapshot(case)
    extra = snap / "archive/extra.warc.gz"
    extra.write_bytes(gzip.compress(b"WARC/1.1\r\nWARC-Type: resource\r\nContent-Length: 0\r\n\r\n\r\n\r\n", mtime=0))
    return snap, extra


def empty_folder(case: Path) -> tuple[Path, Path]:
    folder = case / "empty"
    folder.mkdir()
    return folder, folder


def folder_of_random_files(case: Path) -> tuple[Path, Path]:
    folder = case / "random"
    (folder / "archive").mkdir(parents=True)
    (folder / "notes.txt").write_text("not a snapshot\n")
    (folder / "archive" / "blob.bin").write_bytes(bytes(range(256)) * 8)
    return folder, folder


def path_that_does_not_exist(case: Path) -> tuple[Path, Path]:
    return case / "no-such-snapshot", case / "no-such-snapshot"


def regular_file(case: Path) -> tuple[Path, Path]:
    file = case / "snapshot.txt"
    file.write_text("a file, not a folder\n")
    return file, file


def manifest_not_json(case: Path) -> tuple[Path, Path]:
    snap = copy_snapshot(case)
    manifest = snap / "manifest.json"
    manifest.write_bytes(manifest.read_bytes()[:200])  # cut inside the JSON object
    return snap, manifest


def manifest_missing_fields(case: Path) -> tuple[Path, Path]:
    snap = copy_snapshot(case)
    manifest = snap / "manifest.json"
    data = json.loads(manifest.read_text())
    del data["files"], data["snapshot_id"]
    manifest.write_text(json.dumps(data, indent=2))
    return snap, manifest


@dataclass(frozen=True)
class SnapshotCase:
    """A way to break a snapshot: ``make(case_dir) -> (DIR to pass, path the message must name)``."""

    id: str
    make: Callable[[Path], tuple[Path, Path]]
    problem: str
    """Regular expression (case-insensitive) for what the one line must say is wrong."""


SNAPSHOT_CASES = [
    SnapshotCase("truncated-warc", truncated_warc, r"truncated|size \d+, manifest says"),
    SnapshotCase("truncated-warc-manifest-rehashed", truncated_warc_rehashed, r"truncated|ends|offset"),
    SnapshotCase("flipped-warc-byte", flipped_warc_byte, r"sha256|changed"),
    SnapshotCase("missing-listed-file", missing_screenshot, r"missing"),
    # a changed file of the same size is flipped-warc-byte (the sha256 check); this one fails the size check
    SnapshotCase("byte-appended-to-index", appended_index_byte, r"size|changed"),
    SnapshotCase("extra-warc", extra_warc, r"not listed"),
    SnapshotCase("empty-folder", empty_folder, r"not a snapshot"),
    SnapshotCase("folder-of-random-files", folder_of_random_files, r"not a snapshot"),
    SnapshotCase("path-does-not-exist", path_that_does_not_exist, r"no such|does not exist"),
    SnapshotCase("regular-file-as-dir", regular_file, r"not a folder|not a directory"),
    SnapshotCase("manifest-not-json", manifest_not_json, r"JSON"),
    SnapshotCase("manifest-missing-fields", manifest_missing_fields, r"invalid manifest|required"),
]

VERBS: dict[str, Callable[[Path], list[str]]] = {
    "serve": lambda snap: ["serve", str(snap)],
    # --url limits the damage if verify wrongly goes ahead: one page instead of nine
    "verify": lambda snap: ["verify", str(snap), "--url", SHOP],
    "open": lambda snap: ["open", str(snap), SHOP],
}


# -- capture: invalid plans, bad arguments; bad usage ---------------------------------------------------------

PLAN_CASES: dict[str, tuple[str | None, str]] = {
    # id: (plan file text, or None for no file; what the line must say)
    "not-json": ("{not json", r"JSON"),
    "unknown-action": (json.dumps({"pages": [{"url": SHOP, "actions": [{"type": "teleport"}]}]}), r"teleport"),
    "ftp-url": (json.dumps({"pages": [{"url": "ftp://www.shop.test/"}]}), r"http"),
    "https-url-without-host": (json.dumps({"pages": [{"url": "https://"}]}), r"URL|host"),
    "no-pages": (json.dumps({"pages": []}), r"no pages"),
    "file-does-not-exist": (None, r"no such file|does not exist"),
}

GOOD_PLAN = json.dumps({"pages": [{"url": SHOP, "actions": [{"type": "wait_for_network_idle"}]}]})

# id: (arguments with {out}, {plan}, {full} filled in; what the line must name)
CAPTURE_ARG_CASES: dict[str, tuple[list[str], list[str]]] = {
    "malformed-map": (["capture", SHOP, "-o", "{out}", "--map", "foo"], ["--map", "foo"]),
    "no-url-and-no-plan": (["capture", "-o", "{out}"], ["URL", "--plan"]),
    "url-and-plan": (["capture", SHOP, "--plan", "{plan}", "-o", "{out}"], ["URL", "--plan"]),
    "out-is-non-empty-folder": (["capture", SHOP, "-o", "{full}"], ["{full}"]),
}

USAGE_CASES: dict[str, tuple[list[str], list[str]]] = {
    "unknown-verb": (["frobnicate"], ["frobnicate"]),
    "verify-without-dir": (["verify"], ["DIR"]),
    "capture-without-out": (["capture", SHOP], ["-o"]),
}


@dataclass
class Prepared:
    """One case, broken and started: where it lives, what it must name, and the tree before the run."""

    root: Path
    """The case's folder: the broken input and the (empty) working folder, compared byte for byte after."""
    cwd: Path
    names: list[str]
    before: dict[str, bytes | None]
    future: Future[CliRun]
    out: Path | None = None

    def result(self) -> CliRun:
        """Wait for the run (at most ``TIMEOUT`` plus a margin, since the runner kills it at ``TIMEOUT``)."""
        return self.future.result(timeout=TIMEOUT + 30)


def _case_folder(base: Path, name: str) -> tuple[Path, Path]:
    root = base / name
    cwd = root / "cwd"
    cwd.mkdir(parents=True)
    return root, cwd


def _key(item: pytest.Item) -> str | None:
    """The ``runs`` key a collected test of this module waits for."""
    params = getattr(item, "callspec", None) and item.callspec.params  # type: ignore[attr-defined]
    if not params:
        return None
    if "case" in params:
        return f"{params['case'].id}/{params['verb']}"
    for name, group in (("plan_id", "plan"), ("arg_id", "capture"), ("usage_id", "usage")):
        if name in params:
            return f"{group}/{params[name]}"
    return None


@pytest.fixture(scope="module")
def runs(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Prepared]]:
    """Break the input of every selected test, then start them all at once; yields them by key, and kills
    whatever still runs at the end. Only the tests selected (``-k``, node ids) are run."""
    here = Path(__file__).resolve()
    wanted = {_key(item) for item in request.session.items if Path(item.path).resolve() == here}
    base = tmp_path_factory.mktemp("bad-input")
    prepared: dict[str, Prepared] = {}
    with ThreadPoolExecutor(max_workers=WORKERS) as pool:
        batch = Batch(pool)
        try:
            for case in SNAPSHOT_CASES:
                for verb, argv in VERBS.items():
                    if (key := f"{case.id}/{verb}") in wanted:
                        root, cwd = _case_folder(base, f"{case.id}-{verb}")
                        target, offending = case.make(root)
                        before = tree(root)
                        future = batch.submit(argv(target), cwd, stop_on_stdout=verb == "serve")
                        prepared[key] = Prepared(root, cwd, [str(offending)], before, future)
            for plan_id, (text, _) in PLAN_CASES.items():
                if (key := f"plan/{plan_id}") in wanted:
                    root, cwd = _case_folder(base, f"plan-{plan_id}")
                    plan, out = root / "plan.json", root / "out"
                    if text is not None:
                        plan.write_text(text)
                    args = ["capture", "--plan", str(plan), "-o", str(out), "--no-progress", "--map", NOWHERE]
                    prepared[key] = Prepared(root, cwd, [str(plan)], tree(root), batch.submit(args, cwd), out)
            for arg_id, (template, needles) in CAPTURE_ARG_CASES.items():
                if (key := f"capture/{arg_id}") in wanted:
                    root, cwd = _case_folder(base, f"capture-{arg_id}")
                    (root / "plan.json").write_text(GOOD_PLAN)
                    (root / "full").mkdir()
                    (root / "full" / "keep.txt").write_text("this folder is not the capture's to touch\n")
                    values = {"out": str(root / "out"), "plan": str(root / "plan.json"), "full": str(root / "full")}
                    args = [a.format(**values) for a in template] + ["--no-progress", "--map", NOWHERE]
                    names = [n.format(**values) for n in needles]
                    prepared[key] = Prepared(root, cwd, names, tree(root), batch.submit(args, cwd), root / "out")
            for usage_id, (args, needles) in USAGE_CASES.items():
                if (key := f"usage/{usage_id}") in wanted:
                    root, cwd = _case_folder(base, f"usage-{usage_id}")
                    prepared[key] = Prepared(root, cwd, needles, tree(root), batch.submit(args, cwd))
            yield prepared
        finally:
            batch.close()


def assert_nothing_written(case: Prepared) -> None:
    """The case's folder (input and working folder) is byte for byte what it was before the run."""
    after = tree(case.root)
    added = sorted(set(after) - set(case.before))
    removed = sorted(set(case.before) - set(after))
    changed = sorted(p for p in set(after) & set(case.before) if after[p] != case.before[p])
    assert not (added or removed or changed), f"the run wrote: added {added}, removed {removed}, changed {changed}"


# -- the tests ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("verb", list(VERBS))
@pytest.mark.parametrize("case", SNAPSHOT_CASES, ids=[c.id for c in SNAPSHOT_CASES])
def test_broken_snapshot_is_refused(runs: dict[str, Prepared], case: SnapshotCase, verb: str) -> None:
    """serve, verify and open refuse a broken, tampered or missing snapshot with status 2 and one line naming
    the offending file and the problem; serve prints nothing on stdout (no JSON line: it never serves); the
    snapshot and the working folder are left byte for byte as they were."""
    prepared = runs[f"{case.id}/{verb}"]
    run = prepared.result()
    if verb == "serve":
        assert run.stdout == "", f"serve printed on stdout, so it served a broken snapshot\n{run.describe()}"
    assert_refused(run, *prepared.names, problem=case.problem)
    assert_nothing_written(prepared)


@pytest.mark.parametrize("plan_id", list(PLAN_CASES))
def test_invalid_plan_is_refused(runs: dict[str, Prepared], plan_id: str) -> None:
    """capture refuses an invalid or missing plan file with status 2 and one line naming the plan and the
    problem, before anything is written: the -o folder is never created."""
    prepared = runs[f"plan/{plan_id}"]
    run = prepared.result()
    assert prepared.out is not None
    out_created = prepared.out.exists()
    assert_refused(run, *prepared.names, problem=PLAN_CASES[plan_id][1])
    assert not out_created, f"the -o folder {prepared.out} was created for an invalid plan"
    assert_nothing_written(prepared)


@pytest.mark.parametrize("arg_id", list(CAPTURE_ARG_CASES))
def test_bad_capture_arguments_are_refused(runs: dict[str, Prepared], arg_id: str) -> None:
    """capture refuses a malformed --map, no URL and no plan, both URLs and a plan, and an -o folder that
    already holds files, with status 2 and one line naming what is wrong; no -o folder is created and an
    existing one is left untouched."""
    prepared = runs[f"capture/{arg_id}"]
    run = prepared.result()
    assert prepared.out is not None
    assert_refused(run, *prepared.names)
    assert not prepared.out.exists(), f"the -o folder {prepared.out} was created for bad arguments"
    assert_nothing_written(prepared)


@pytest.mark.parametrize("usage_id", list(USAGE_CASES))
def test_bad_usage_is_refused(runs: dict[str, Prepared], usage_id: str) -> None:
    """An unknown verb or option, or a missing required argument, is status 2 and one line (no usage block,
    no traceback) naming what is wrong; nothing is written."""
    prepared = runs[f"usage/{usage_id}"]
    assert_refused(prepared.result(), *prepared.names)
    assert_nothing_written(prepared)
