"""``capreplay import`` makes the snapshot's ready responses, so that its first ``serve`` sends them at once.

A real interop WARC is imported as a user would (a subprocess); the cache then holds a whole ready folder for
the snapshot, and a server opened on it finds that very folder (the same file identities: opened, not built
again) before its first request, which gets the archived bytes. A cache folder that cannot be written costs
the ready responses, never the import.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from capreplay.archive.warc.read import read_record
from capreplay.replay.ready.responses import ReadyResponses, check_folder, ready_folder
from capreplay.replay.server import ReplayServer
from capreplay.replay.store import INDEX_FILE
from tests.support.cli import cli
from tests.support.paths import ROOT
from tests.support.raw_http import raw_get

SMALL_WARC = ROOT.parent / "shared" / "interop" / "openzim+warc2zim" / "tests" / "data" / "http-return-codes.warc.gz"


def _imported(tmp_path: Path) -> Path:
    assert SMALL_WARC.is_file(), f"interop sample missing: {SMALL_WARC}"
    out = tmp_path / "imported"
    done = cli("import", str(SMALL_WARC), "-o", str(out))
    assert done.returncode == 0, done.stderr
    return out


def _identity(snapshot: Path) -> tuple[str, str]:
    manifest = json.loads((snapshot / "manifest.json").read_text())
    index = next(f for f in manifest["files"] if f["path"] == INDEX_FILE)
    return manifest["snapshot_id"], index["sha256"]


async def _first_response(snapshot: Path, url: str) -> tuple[ReadyResponses | None, bool, bytes]:
    """The ready responses a new server holds before it starts (only an existing folder is there so soon),
    whether they hold ``url``, and the server's first response, to a GET of ``url``."""
    server = ReplayServer(snapshot, keep_log=False)
    opened = server.ready.current
    info = await server.start()
    try:
        tls = url.startswith("https:")
        got = await raw_get(info.https_port if tls else info.http_port, url, tls=tls)
        return opened, opened is not None and opened.find(url) is not None, got
    finally:
        await server.stop()


def test_import_builds_the_ready_responses_a_server_then_sends(tmp_path: Path) -> None:
    snapshot = _imported(tmp_path)
    snapshot_id, index_sha256 = _identity(snapshot)
    folder = ready_folder(snapshot_id, index_sha256)
    stamps = check_folder(folder, snapshot_id, index_sha256)
    assert stamps is not None and stamps.responses > 0
    lines = (snapshot / INDEX_FILE).read_text().splitlines()
    entry = next(e for line in lines if (e := json.loads(line.split(" ", 2)[2]))["status"] == 200)
    opened, holds_url, got = asyncio.run(_first_response(snapshot, entry["url"]))
    # the import's folder, opened as it was made (not built again), and holding the URL asked for
    assert opened is not None and opened.folder == folder and opened.stamps == stamps and holds_url
    with open(snapshot / entry["filename"], "rb") as f:
        archived = read_record(f, entry["offset"]).payload
    assert got.startswith(b"HTTP/1.1 200 ") and got.endswith(b"\r\n\r\n" + archived)


def test_a_cache_that_cannot_be_written_does_not_fail_the_import(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocked = tmp_path / "cache-is-a-file"
    blocked.write_text("not a folder")
    monkeypatch.setenv("CAPREPLAY_CACHE_DIR", str(blocked))
    snapshot = _imported(tmp_path)
    assert (snapshot / INDEX_FILE).is_file()
    assert blocked.read_text() == "not a folder"
