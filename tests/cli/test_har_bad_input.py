"""Bad HAR input and bad HAR output paths are refused: exit status 2, one line on stderr naming the file and the
problem, and nothing written. Most cases call ``main()`` in this process; one runs ``python -m capreplay``."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

import pytest

from capreplay.cli import main
from tests.support.cli import cli
from tests.support.paths import ROOT

FIXTURES = ROOT / "snapshots" / "fixtures"


def har(entries: list[dict[str, Any]]) -> bytes:
    return json.dumps({"log": {"version": "1.2", "creator": {"name": "test", "version": "1"},
                               "entries": entries}}).encode()  # fmt: skip


def entry(**changes: Any) -> dict[str, Any]:
    """A good entry, with parts replaced: ``request``, ``response``, ``startedDateTime``."""
    good: dict[str, Any] = {
        "startedDateTime": "2024-01-01T00:00:00.000Z",
        "request": {"method": "GET", "url": "https://a.test/", "headers": []},
        "response": {"status": 200, "headers": [{"name": "Content-Type", "value": "text/html"}],
                     "content": {"size": 16, "mimeType": "text/html", "text": "<title>A</title>"}},
    }  # fmt: skip
    good.update(changes)
    return good


BASE64_BAD = {"status": 200, "headers": [], "content": {"size": 3, "encoding": "base64", "text": "not base64!"}}
NO_BODY = {"status": 200, "headers": [], "content": {"size": 5000, "mimeType": "image/jpeg"}}
POST_BAD = {"method": "POST", "url": "https://a.test/p", "headers": [],
            "postData": {"mimeType": "application/octet-stream", "text": "%%%", "encoding": "base64"}}  # fmt: skip
CASES: dict[str, tuple[bytes | None, str]] = {
    "not-json": (b"<html>a web page, not a HAR</html>", r"not a HAR file: not valid JSON \(.*line 1 column 1\)"),
    "empty": (b"", "not a HAR file: it is empty"),
    "not-utf8": (b'{"log": "\xff"}', r"not a HAR file: not UTF-8 text"),
    "no-log": (b'{"entries": []}', 'not a HAR file: it holds no "log" object'),
    "no-entries": (b'{"log": {"version": "1.2", "pages": []}}', 'its "log" holds no "entries" list'),
    "entry-without-url": (har([entry(request={"method": "GET", "headers": []})]),
                          r"invalid HAR: log\.entries\.0\.request\.url: Field required"),
    "bad-date": (har([entry(startedDateTime="yesterday")]), r"invalid HAR: log\.entries\.0\.startedDateTime: "),
    "bad-base64": (har([entry(), entry(response=BASE64_BAD)]),
                   r"log\.entries\[1\]\.response\.content\.text \(https://a\.test/\) is not valid base64"),
    "bad-post-base64": (har([entry(request=POST_BAD)]),
                        r"log\.entries\[0\]\.request\.postData\.text \(https://a\.test/p\) is not valid base64"),
    "unknown-encoding": (har([entry(response={**BASE64_BAD, "content": {"text": "x", "encoding": "gzip"}})]),
                         "has the encoding 'gzip'; HAR knows only base64"),
    "nothing-to-replay": (har([entry(response=NO_BODY)]),
                          r"no entry of the HAR holds a response to replay \(1 entry left out: no body kept: 1\)"),
    "json-not-har": (b'[{"url": "https://a.test/"}]', 'not a HAR file: it holds no "log" object'),
    "binary-junk": (bytes(range(256)) * 4, r"not a HAR file: not UTF-8 text \(byte 128\)"),
    "gzip": (b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03" + bytes(40), r"not a HAR file: not UTF-8 text \(byte 1\)"),
    "log-null": (b'{"log": null}', 'not a HAR file: it holds no "log" object'),
    "entries-null": (b'{"log": {"version": "1.2", "entries": null}}', 'its "log" holds no "entries" list'),
    "entry-null": (b'{"log": {"entries": [null]}}', r"invalid HAR: log\.entries\.0: "),
    "method-null": (har([entry(request={"method": None, "url": "https://a.test/", "headers": []})]),
                    r"invalid HAR: log\.entries\.0\.request\.method: "),
    "websocket-message-without-time": (
        har([entry(response={"status": 101, "headers": [{"name": "Upgrade", "value": "websocket"}]},
                   _webSocketMessages=[{"type": "receive", "opcode": 1, "data": "hi"}])]),
        r"log\.entries\[0\] \(https://a\.test/\) _webSocketMessages\[0\] has no numeric time and opcode"),
    "missing": (None, "cannot read: No such file or directory"),
    "attachment-missing": (har([entry(response={**NO_BODY, "content": {"size": 3, "_file": "gone.dat"}})]),
                           r"log\.entries\[0\]\.response\.content\._file: cannot read gone\.dat: No such file"),
    "attachment-outside": (har([entry(response={**NO_BODY, "content": {"size": 3, "_file": "../../etc/passwd"}})]),
                           r"content\._file '\.\./\.\./etc/passwd' is no file in the HAR's folder"),
}  # fmt: skip


def state(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir"
            for p in sorted(folder.rglob("*"))}  # fmt: skip


def one_line(capsys: pytest.CaptureFixture[str], verb: str) -> str:
    out, err = capsys.readouterr()
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"capreplay {verb}: "), err
    assert out == ""
    return lines[0]


@pytest.mark.parametrize("name", list(CASES))
def test_a_bad_har_is_refused_in_one_line_naming_it(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data, says = CASES[name]
    path = tmp_path / "trace.har"
    if data is not None:
        path.write_bytes(data)
    before = state(tmp_path)
    capsys.readouterr()
    assert main(["import", str(path), "-o", str(tmp_path / "out")]) == 2
    line = one_line(capsys, "import")
    assert str(path) in line and re.search(says, line), line
    assert state(tmp_path) == before


def test_a_real_process_refuses_a_bad_har_without_a_traceback(tmp_path: Path) -> None:
    path = tmp_path / "trace.har"
    path.write_bytes(har([entry(request={"method": "GET", "headers": []})]))
    run = cli("import", str(path), "-o", str(tmp_path / "out"))
    assert run.returncode == 2 and "Traceback" not in run.stderr and len(run.stderr.splitlines()) == 1, run.stderr
    assert str(path) in run.stderr and "request.url: Field required" in run.stderr
    assert not (tmp_path / "out").exists()


def test_export_refuses_an_output_that_is_neither_wacz_nor_har(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "snap.json"
    assert main(["export", str(FIXTURES), "-o", str(out)]) == 2
    line = one_line(capsys, "export")
    assert str(out) in line and "must end in .wacz (a WACZ) or .har (a HAR)" in line
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("where", ["exists", "inside-snapshot", "no-folder"])
def test_export_refuses_a_har_path_it_must_not_write(
    where: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    paths = {"exists": tmp_path / "x.har", "inside-snapshot": FIXTURES / "x.har",
             "no-folder": tmp_path / "no" / "x.har"}  # fmt: skip
    out = paths[where]
    if where == "exists":
        out.write_bytes(b"mine")
    assert main(["export", str(FIXTURES), "-o", str(out)]) == 2
    line = one_line(capsys, "export")
    says = {"exists": "already exists; pass --force", "inside-snapshot": "inside the snapshot folder",
            "no-folder": "does not exist"}[where]  # fmt: skip
    assert str(out) in line and says in line, line
    assert not (FIXTURES / "x.har").exists()
    assert [p.name for p in tmp_path.iterdir()] == (["x.har"] if where == "exists" else [])
    if where == "exists":
        assert out.read_bytes() == b"mine"
