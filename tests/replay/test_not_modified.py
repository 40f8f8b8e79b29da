"""A recorded ``304 Not Modified`` answered a capture browser that held the body; a replayed request may hold
nothing, so where the body was recorded too, every request gets the body (a fresh browser given a 304 it never
asked for fails with ERR_ABORTED: the benchmark's dashboard loaded only once per replay server)."""

from __future__ import annotations

from pathlib import Path

from capreplay.archive.importer.snapshot import ImportOptions, import_archives
from capreplay.capture.session import DEFAULT_SEED
from capreplay.replay.matching import Candidate, Matcher
from capreplay.replay.server import ReplayServer
from tests.support.foreign_warc import gz, http, page, record, request
from tests.support.raw_http import raw_get

URL = "http://static.bench.test/index.html"
BODY = b"<!doctype html><title>dashboard</title><h1>Releases</h1>"


def test_the_body_answers_every_repeat_and_a_lone_304_still_answers() -> None:
    cands = [Candidate("GET", URL, None, 0), Candidate("GET", URL, None, 1, not_modified=True),
             Candidate("GET", URL, None, 2, not_modified=True)]  # fmt: skip
    m = Matcher(cands)
    assert [m.match("GET", URL, None).candidate.seq for _ in range(4)] == [0, 0, 0, 0]  # type: ignore[union-attr]
    only = Matcher([Candidate("GET", URL, None, 5, not_modified=True)])
    assert only.match("GET", URL, None).candidate.seq == 5  # type: ignore[union-attr]
    nearest = Matcher(cands)
    found = nearest.match("GET", URL + "?v=2", None)
    assert found is not None and found.candidate.seq == 0


async def test_a_replay_serves_the_body_where_the_capture_got_304s(tmp_path: Path) -> None:
    not_modified = record("response", URL, http("HTTP/1.1 304 Not Modified", [("Server", "SimpleHTTP/0.6")]), n=3)
    warc = tmp_path / "in.warc.gz"
    warc.write_bytes(gz(page(1, URL, BODY), request(2, URL, 1), not_modified, request(4, URL, 3),
                        record("response", URL, http("HTTP/1.1 304 Not Modified", []), n=5), request(6, URL, 5)))
    out = tmp_path / "snap"
    import_archives(ImportOptions(inputs=[warc], out=out, random_seed=DEFAULT_SEED))
    async with ReplayServer(out) as info:
        for _ in range(3):
            got = await raw_get(info.http_port, URL, tls=False)
            assert got.startswith(b"HTTP/1.1 200"), got[:80]
            assert got.endswith(BODY)
