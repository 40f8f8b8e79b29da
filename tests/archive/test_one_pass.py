"""The one-pass index (``build_index_text``) writes the bytes of ``build_index`` + ``format_index``.

Each file is paired and formatted by its own worker; the parent pairs what a file left over and falls back
to the whole-archive pairing when records link files or revisits need their originals. Every case is
compared with the whole-archive result, and with the strict reader's (``index_records``) where the lean
scan reads the same records; the cross-file cases also check which way they were indexed.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from capreplay.archive.index import cdxj, one_pass
from capreplay.archive.index.cdxj import build_index, format_index, index_records
from capreplay.archive.warc.read import iter_records
from capreplay.errors import ArchiveError
from capreplay.replay.ready.with_index import ReadyParts
from tests.archive.test_archive_index import request_in_another_file, unlinked_warc
from tests.support import foreign_warc as fs
from tests.support.paths import ROOT

INTEROP = ROOT.parent / "shared" / "interop"


def _folders() -> list[Path]:
    """Folders of WARCs indexed together: the fixture snapshot's archive and each interop sample folder."""
    found = [ROOT / "snapshots" / "fixtures" / "archive"]
    if INTEROP.is_dir():
        found += sorted({p.parent for p in INTEROP.rglob("*") if p.name.endswith((".warc", ".warc.gz"))})
    return found


def _warcs(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith((".warc", ".warc.gz")))


def _strict(folder: Path, names: list[str]) -> bytes:
    """The index of ``names`` as the strict reader reads their records."""
    streams = [open(folder / name, "rb") for name in names]  # noqa: SIM115  # closed below
    try:
        return format_index(index_records((n, iter_records(s, n)) for n, s in zip(names, streams, strict=True)))
    finally:
        for stream in streams:
            stream.close()


@pytest.fixture
def parallel(monkeypatch: pytest.MonkeyPatch) -> None:
    """Small archives are indexed by worker processes too, one file each."""
    monkeypatch.setattr(cdxj, "PARALLEL_BYTES", 0)


@pytest.mark.parametrize("folder", _folders(), ids=lambda p: p.parent.name + "/" + p.name)
@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("ready", [False, True], ids=["index", "with-ready"])
def test_the_one_pass_index_is_build_indexs(
    folder: Path, workers: int, ready: bool, parallel: None, tmp_path: Path
) -> None:
    names = _warcs(folder)
    # with a sink, responses are parsed whole once for the index and the ready responses
    sink = ReadyParts(tmp_path) if ready else None
    try:
        expected = format_index(build_index(folder, names, workers=1))
    except ArchiveError as e:
        with pytest.raises(ArchiveError) as raised:
            one_pass.build_index_text(folder, names, workers=workers, sink=sink)
        assert str(raised.value) == str(e)
        return
    built = one_pass.build_index_text(folder, names, workers=workers, sink=sink)
    assert built.data == expected
    assert [line.urlkey for line in built.lines] == [line.split(" ", 1)[0] for line in expected.decode().splitlines()]


def _spy(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Record each fallback to the whole-archive pairing."""
    calls: list[bool] = []
    whole = one_pass._whole_archive

    def counted(*args: object) -> list[one_pass.Line]:
        calls.append(True)
        return whole(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(one_pass, "_whole_archive", counted)
    return calls


def _unlinked_files(root: Path) -> list[str]:
    """Two files of records without Concurrent-To: responses in the second whose requests are in the first."""
    a, b = "http://x.example/a", "http://x.example/b"
    (root / "1.warc.gz").write_bytes(
        unlinked_warc([("request", a, "<urn:q1>"), ("request", b, "<urn:q2>"), ("request", b, "<urn:q0>")])
    )
    (root / "2.warc.gz").write_bytes(
        unlinked_warc(
            [
                ("response", a, "<urn:r1>"),  # its request is in the first file
                ("request", a, "<urn:q3>"),
                ("response", a, "<urn:r2>"),  # paired in its own file
                ("response", b, "<urn:r3>"),  # the first file's latest request for b
                ("response", b, "<urn:r4>"),  # the earlier one
                ("response", b, "<urn:r5>"),  # none left
            ]
        )
    )
    return ["1.warc.gz", "2.warc.gz"]


def _same_ids_twice(root: Path) -> list[str]:
    """One file, and a copy of it: every record id in two files."""
    source = ROOT / "snapshots" / "fixtures" / "archive" / "data-00000.warc.gz"
    shutil.copy(source, root / "a.warc.gz")
    shutil.copy(source, root / "b.warc.gz")
    return ["a.warc.gz", "b.warc.gz"]


def _revisit_of_another_file(root: Path) -> list[str]:
    """A response, and in the next file a revisit of it."""
    url, body = "http://site.example/", b"<title>One</title>"
    revisit = fs.record(
        "revisit",
        url,
        fs.http("HTTP/1.1 200 OK", [("Content-Type", "text/html")]),
        n=2,
        payload_digest=fs.sha1_b32(body),
        headers=[("WARC-Refers-To", fs.rid(1)), ("WARC-Refers-To-Target-URI", url)],
    )
    (root / "a.warc.gz").write_bytes(fs.gz(fs.page(1, url, body), fs.request(3, url, 1)))
    (root / "b.warc.gz").write_bytes(fs.gz(revisit, fs.request(4, url, 2)))
    return ["a.warc.gz", "b.warc.gz"]


CASES: list[tuple[Callable[[Path], list[str]], bool]] = [
    (_unlinked_files, False),
    (request_in_another_file, True),
    (_same_ids_twice, True),
    (_revisit_of_another_file, True),
]


@pytest.mark.parametrize(("make", "whole_archive"), CASES, ids=lambda c: getattr(c, "__name__", str(c)))
@pytest.mark.parametrize("workers", [1, 2])
def test_records_across_files_are_paired_as_over_the_whole_archive(
    make: Callable[[Path], list[str]],
    whole_archive: bool,
    workers: int,
    tmp_path: Path,
    parallel: None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    names = make(tmp_path)
    calls = _spy(monkeypatch)
    built = one_pass.build_index_text(tmp_path, names, workers=workers)
    assert built.data == format_index(build_index(tmp_path, names, workers=1)) == _strict(tmp_path, names)
    assert bool(calls) == whole_archive


def test_a_response_left_over_takes_the_latest_earlier_request_of_another_file(tmp_path: Path, parallel: None) -> None:
    names = _unlinked_files(tmp_path)
    with open(tmp_path / names[0], "rb") as f:
        offsets = {r.record_id: r.offset for r in iter_records(f, names[0])}
    built = one_pass.build_index_text(tmp_path, names, workers=2)
    entries = sorted((json.loads(line.text.split(" ", 2)[2]) for line in built.lines), key=lambda e: e["seq"])
    assert [(e["req_filename"], e["req_offset"]) for e in entries] == [
        (names[0], offsets["<urn:q1>"]),
        (None, entries[1]["req_offset"]),
        (names[0], offsets["<urn:q0>"]),
        (names[0], offsets["<urn:q2>"]),
        (None, None),
    ]
