"""``capreplay verify`` tells a replay defect (something archived was not served) from a capture gap (a
favicon or tracker that was never captured): only the first fails verify, unless ``--strict``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from capreplay.archive.importer.snapshot import ImportOptions, import_archives
from capreplay.capture.session import DEFAULT_SEED
from tests.support.cli import cli
from tests.support.foreign_warc import gz, page, request

pytestmark = pytest.mark.browser

SITE = "https://www.gaps.test"


def snapshot(tmp_path: Path, script: str, *, strict: bool = False) -> Path:
    """A page running ``script``, a tracker host never captured, an API archived as POST only, and a feed
    archived once as GET; ``strict`` asks for strict replay in the manifest."""
    html = (f'<!doctype html><html><head><title>Gaps</title></head><body><p>text</p>'
            f'<img src="https://pixel.tracker.test/t.gif"><script>{script}</script></body></html>').encode()
    json_type = [("Content-Type", "application/json")]
    records = [page(1, f"{SITE}/", html), request(2, f"{SITE}/", 1),
               page(3, f"{SITE}/api/item", b'{"ok": true}', headers=json_type),
               request(4, f"{SITE}/api/item", 3, method="POST", body=b"x"),
               page(5, f"{SITE}/api/feed?page=1", b'{"items": []}', headers=json_type),
               request(6, f"{SITE}/api/feed?page=1", 5)]
    (tmp_path / "in.warc.gz").write_bytes(gz(*records))
    out = tmp_path / "snap"
    import_archives(ImportOptions(inputs=[tmp_path / "in.warc.gz"], out=out, random_seed=DEFAULT_SEED))
    if strict:
        manifest = json.loads((out / "manifest.json").read_text())
        manifest["replay"] = {"strict": True}
        (out / "manifest.json").write_text(json.dumps(manifest))
    return out


def test_misses_of_things_never_captured_do_not_fail_verify_unless_strict(tmp_path: Path) -> None:
    # A GET of a path the archive holds only as a POST (a beacon sent another way) was never captured either.
    snap = snapshot(tmp_path, "fetch('/never-captured.js'); fetch('/api/item');")
    out = cli("verify", str(snap), "--json")
    assert out.returncode == 0, out.stdout + out.stderr
    report = json.loads(out.stdout)
    requests = {r["url"]: r for r in report["pages"][0]["requests"]}
    for url in (f"{SITE}/never-captured.js", f"{SITE}/api/item"):
        assert (requests[url]["result"], requests[url]["archived"]) == ("miss", False), requests[url]
    tracker = requests["https://pixel.tracker.test/t.gif"]
    assert (tracker["result"], tracker["archived"]) == ("blocked", False)
    assert requests[f"{SITE}/"]["archived"] is True
    assert report["misses"] >= 2 and report["archived_misses"] == 0
    assert cli("verify", str(snap), "--strict").returncode == 1
    table = cli("verify", str(snap))
    assert f"miss    GET {SITE}/never-captured.js  (never captured; nearest:" in table.stdout
    assert "of them of archived URLs" in table.stdout.splitlines()[-1]


def test_a_request_for_something_archived_that_is_not_served_fails_verify(tmp_path: Path) -> None:
    # Replayed strictly (no nearest-query), page 2 of a feed whose page 1 is archived finds nothing: the
    # archive holds that path for that method, so the miss is the replay's.
    snap = snapshot(tmp_path, "fetch('/api/feed?page=2');", strict=True)
    out = cli("verify", str(snap), "--json")
    assert out.returncode == 1, out.stdout + out.stderr
    report = json.loads(out.stdout)
    missed = [r for r in report["pages"][0]["requests"] if r["result"] == "miss"]
    assert [(r["url"], r["archived"]) for r in missed if "favicon" not in r["url"]] == [
        (f"{SITE}/api/feed?page=2", True)]
    assert report["archived_misses"] == 1
    table = cli("verify", str(snap))
    assert f"miss    GET {SITE}/api/feed?page=2  (archived, not served;" in table.stdout
