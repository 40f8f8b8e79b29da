"""``capreplay verify`` tells a replay defect (something archived was not served) from a capture gap (a
favicon or tracker that was never captured): only the first fails verify, unless ``--strict``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from capreplay.archive.importer import ImportOptions, import_archives
from capreplay.capture.session import DEFAULT_SEED
from capreplay.testing.foreign_warc import gz, page, request

pytestmark = pytest.mark.browser

SITE = "https://www.gaps.test"


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "capreplay", *args], capture_output=True, text=True, timeout=300,
                          check=False)


def snapshot(tmp_path: Path, script: str) -> Path:
    """A page running ``script``, a tracker host that was never captured, and an API archived as POST only."""
    html = (f'<!doctype html><html><head><title>Gaps</title></head><body><p>text</p>'
            f'<img src="https://pixel.tracker.test/t.gif"><script>{script}</script></body></html>').encode()
    records = [page(1, f"{SITE}/", html), request(2, f"{SITE}/", 1),
               page(3, f"{SITE}/api/item", b'{"ok": true}', headers=[("Content-Type", "application/json")]),
               request(4, f"{SITE}/api/item", 3, method="POST", body=b"x")]
    (tmp_path / "in.warc.gz").write_bytes(gz(*records))
    import_archives(ImportOptions(inputs=[tmp_path / "in.warc.gz"], out=tmp_path / "snap", random_seed=DEFAULT_SEED))
    return tmp_path / "snap"


def test_misses_of_things_never_captured_do_not_fail_verify_unless_strict(tmp_path: Path) -> None:
    snap = snapshot(tmp_path, "fetch('/never-captured.js');")
    out = cli("verify", str(snap), "--json")
    assert out.returncode == 0, out.stdout + out.stderr
    report = json.loads(out.stdout)
    requests = {r["url"]: r for r in report["pages"][0]["requests"]}
    assert requests[f"{SITE}/never-captured.js"]["result"] == "miss"
    assert requests[f"{SITE}/never-captured.js"]["archived"] is False
    assert requests["https://pixel.tracker.test/t.gif"] | {"result": "blocked", "archived": False} == requests[
        "https://pixel.tracker.test/t.gif"]
    assert requests[f"{SITE}/"]["archived"] is True
    assert report["misses"] >= 1 and report["archived_misses"] == 0
    assert cli("verify", str(snap), "--strict").returncode == 1
    table = cli("verify", str(snap))
    assert f"miss    GET {SITE}/never-captured.js  (never captured; nearest:" in table.stdout
    assert "of them of archived URLs" in table.stdout.splitlines()[-1]


def test_a_request_for_something_archived_that_is_not_served_fails_verify(tmp_path: Path) -> None:
    # The archive holds /api/item, but only as a POST: a GET of it cannot be answered from the recording.
    snap = snapshot(tmp_path, "fetch('/api/item');")
    out = cli("verify", str(snap), "--json")
    assert out.returncode == 1, out.stdout + out.stderr
    report = json.loads(out.stdout)
    missed = [r for r in report["pages"][0]["requests"] if r["result"] == "miss"]
    assert [(r["url"], r["archived"]) for r in missed if "favicon" not in r["url"]] == [(f"{SITE}/api/item", True)]
    assert report["archived_misses"] == 1
    table = cli("verify", str(snap))
    assert f"miss    GET {SITE}/api/item  (archived, not served;" in table.stdout
