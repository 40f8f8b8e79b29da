"""``capreplay import`` refuses bad input: exit status 2, one line on stderr naming the file and the problem,
and nothing written (the output folder not created, or left exactly as it was; no staging folder left over).

Most cases call the command line's ``main()`` in this process, since each new process spends two seconds
importing capreplay; a few also run ``python -m capreplay`` as a real subprocess.
"""

from __future__ import annotations

import gzip
import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from capreplay.cli import main
from tests.support import foreign_warc as fs
from tests.support.cli import cli

HTML = b"<!doctype html><title>Example</title><p>" + b"lorem ipsum dolor sit amet " * 40


def good_records() -> list[bytes]:
    return [
        fs.warcinfo(0, "software: test\r\n"),
        fs.page(1, "http://example.com/", HTML),
        fs.request(2, "http://example.com/", of=1),
        fs.page(3, "http://example.com/style.css", b"p { color: blue }" * 20, headers=[("Content-Type", "text/css")]),
        # a space in WARC-Target-URI: warcio notes that it replaces it, a note the import keeps off stderr
        fs.page(4, "http://example.com/a b.png", b"\x89PNG", headers=[("Content-Type", "image/png")]),
    ]


@dataclass
class Case:
    """Input files to write into a fresh folder, extra arguments, and what the one stderr line must say."""

    files: dict[str, bytes]
    says: str
    """A regular expression the stderr line must match (the problem)."""
    names: str
    """What the line must name: a file in the case's folder (an input, or ``out``), or a URL."""
    args: tuple[str, ...] = ()
    prepare: Callable[[Path], None] | None = None


def truncated_gz() -> bytes:
    members = [gzip.compress(r, mtime=0) for r in good_records()]
    return members[0] + members[1][: len(members[1]) // 2]  # the file ends inside the HTML page's member


def truncated_plain() -> bytes:
    records = good_records()
    return records[0] + records[1][: len(records[1]) // 2]  # the file ends inside the HTML page's block


def flipped_gz() -> bytes:
    members = [gzip.compress(r, mtime=0) for r in good_records()]
    page = bytearray(members[1])
    page[len(page) // 2] ^= 0x55  # inside the deflate data of the HTML response's member
    members[1] = bytes(page)
    return b"".join(members)


def no_responses() -> bytes:
    return fs.gz(fs.warcinfo(0, "software: test\r\n"), fs.request(1, "http://example.com/", of=9),
                 fs.record("resource", "urn:x-log", b"log\n", n=2, content_type="text/plain"))  # fmt: skip


def digest_of_nothing() -> bytes:
    body = fs.http("HTTP/1.1 200 OK", [("Content-Type", "text/plain")], b"what the server sent")
    wrong = fs.record("response", "http://example.com/x.txt", body, n=5, payload_digest=fs.sha1_b32(b"no form of it"))
    return fs.gz(*good_records(), wrong)


def tampered_wacz(folder: Path) -> None:
    fs.wacz(folder / "in.wacz", {"a.warc.gz": fs.gz(*good_records())}, tamper="archive/a.warc.gz")


def other_snapshot_in_out(folder: Path) -> None:
    other = folder / "other.warc.gz"
    other.write_bytes(fs.gz(fs.page(1, "http://other.example/", HTML)))
    assert main(["import", str(other), "-o", str(folder / "out")]) == 0
    other.unlink()


def out_is_a_file(folder: Path) -> None:
    (folder / "out").write_text("not a folder")


def out_not_empty(folder: Path) -> None:
    (folder / "out").mkdir()
    (folder / "out" / "notes.txt").write_text("mine")


CASES = {
    "truncated-warc-gz": Case({"in.warc.gz": truncated_gz()}, r"offset \d+ .*truncated", "in.warc.gz"),
    "truncated-warc": Case({"in.warc": truncated_plain()}, r"truncated WARC record at offset \d+", "in.warc"),
    "flipped-gzip-byte": Case({"in.warc.gz": flipped_gz()}, r"corrupt gzip member at offset \d+", "in.warc.gz"),
    "text-named-warc-gz": Case({"in.warc.gz": b"hello, this is not an archive\n"}, "not a WARC file", "in.warc.gz"),
    "wacz-digest-mismatch": Case({}, r"archive/a\.warc\.gz: sha256 is .* datapackage\.json says", "in.wacz",
                                 prepare=tampered_wacz),
    "record-digest-matches-nothing": Case(
        {"in.warc.gz": digest_of_nothing()},
        r"payload digest of the record at offset \d+ \(<urn:uuid:[0-]+-4000-8000-0+5>, http://example\.com/x\.txt\) "
        "does not match", "in.warc.gz"),
    "empty-file": Case({"in.warc.gz": b""}, r"not a WARC file: it holds no records \(empty\?\)", "in.warc.gz"),
    "no-response-records": Case({"in.warc.gz": no_responses()}, "holds no response or revisit records", "in.warc.gz"),
    "out-holds-another-snapshot": Case({"in.warc.gz": fs.gz(*good_records())}, "already holds a different snapshot",
                                       "out", prepare=other_snapshot_in_out),
    "out-is-a-file": Case({"in.warc.gz": fs.gz(*good_records())}, "not a folder", "out", prepare=out_is_a_file),
    "out-not-empty": Case({"in.warc.gz": fs.gz(*good_records())}, "not empty", "out", prepare=out_not_empty),
    "one-gzip-stream": Case({"in.warc.gz": gzip.compress(b"".join(good_records()), mtime=0)},
                            r"more than one record \(use `warcio recompress`\)", "in.warc.gz"),
    "text-named-wacz": Case({"in.wacz": b"hello"}, "not a WACZ: not a readable zip file", "in.wacz"),
    "missing-input": Case({}, "cannot read: No such file", "in.warc.gz"),
    "second-input-broken": Case({"a.warc.gz": fs.gz(*good_records()), "in.warc.gz": truncated_gz()},
                                "truncated", "in.warc.gz"),
    "page-not-archived": Case({"in.warc.gz": fs.gz(*good_records())}, "the input holds no response for this URL",
                              "http://example.com/nope", args=("--page", "http://example.com/nope")),
}  # fmt: skip


def state(folder: Path) -> dict[str, str]:
    """Every path under ``folder`` with the sha256 of its bytes: what "nothing written" is checked against."""
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir"
            for p in sorted(folder.rglob("*"))}  # fmt: skip


def arguments(case: Case, folder: Path) -> list[str]:
    inputs = sorted(folder / name for name in case.files) if case.files else []
    if case.prepare is tampered_wacz:
        inputs = [folder / "in.wacz"]
    if not inputs:
        inputs = [folder / "in.warc.gz"]  # missing-input: named but never written
    return ["import", *map(str, inputs), "-o", str(folder / "out"), *case.args]


def prepared(case: Case, folder: Path) -> Path:
    for name, data in case.files.items():
        (folder / name).write_bytes(data)
    if case.prepare is not None:
        case.prepare(folder)
    return folder


@pytest.mark.parametrize("name", list(CASES))
def test_bad_input_is_refused_in_one_line_and_nothing_is_written(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    case = CASES[name]
    folder = prepared(case, tmp_path)
    capsys.readouterr()
    before = state(folder)
    status = main(arguments(case, folder))
    out, err = capsys.readouterr()
    assert status == 2, err
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("capreplay import: "), err
    named = case.names if "://" in case.names else str(folder / case.names)
    assert named in lines[0], f"the line does not name {named}: {lines[0]}"
    assert re.search(case.says, lines[0]), lines[0]
    assert out == ""
    assert state(folder) == before, "bad input must leave every file and folder as it was"


@pytest.mark.parametrize("name", ["truncated-warc-gz", "wacz-digest-mismatch", "out-holds-another-snapshot"])
def test_a_real_process_refuses_bad_input_without_a_traceback(name: str, tmp_path: Path) -> None:
    case = CASES[name]
    folder = prepared(case, tmp_path)
    before = state(folder)
    run = cli(*arguments(case, folder))
    assert run.returncode == 2, run.stderr
    assert "Traceback" not in run.stderr and len(run.stderr.splitlines()) == 1, run.stderr
    assert re.search(case.says, run.stderr), run.stderr
    assert state(folder) == before


def test_importing_the_same_snapshot_twice_is_a_no_op(tmp_path: Path) -> None:
    src = tmp_path / "in.warc.gz"
    src.write_bytes(fs.gz(*good_records()))
    first = cli("import", str(src), "-o", str(tmp_path / "out"))
    assert first.returncode == 0 and first.stderr == "", first.stderr
    assert re.fullmatch(r"imported 3 responses \(5 records read\), 1 page from 1 host into .*\n",
                        first.stdout), first.stdout  # fmt: skip
    before = state(tmp_path)
    again = cli("import", str(src), "-o", str(tmp_path / "out"))
    assert again.returncode == 0 and "already holds this snapshot" in again.stdout and again.stderr == ""
    assert state(tmp_path) == before
