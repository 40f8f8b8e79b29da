"""Foreign digests: a payload digest over another form of the body, and a block digest over the payload alone
(Webrecorder's 2019 recorder), are accepted and reported; a digest that matches nothing is refused, unless
``--allow-digest-mismatch`` imports it and the manifest lists it.

Each record is written with warcio, with its WARC-Payload-Digest set by the test over the form under test
(warcio keeps a digest it is given and computes the block digest itself).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import re
from io import BytesIO
from pathlib import Path

import brotli
import pytest
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from capreplay.archive.snapshot.manifest import checked_manifest, load_manifest
from capreplay.archive.warc.digests import check_record
from capreplay.cli import main
from capreplay.models.manifest import DigestMismatch, OtherFormDigest
from tests.support import foreign_warc as fs

REPO = Path(__file__).resolve().parents[2]
SCOOP = REPO.parent / "shared" / "interop" / "harvard-lil+scoop" / "assets" / "fixtures" / "example.com.wacz"
URL = "http://site.example/"
CSS_URL = "http://site.example/style.css"
HTML = b"<!doctype html><title>Home</title><link rel=stylesheet href=/style.css><p>hello"
CSS = b"body { color: red }\n" * 50
PAGE_ID = "<urn:uuid:00000000-0000-4000-8000-000000000001>"
CSS_ID = "<urn:uuid:00000000-0000-4000-8000-000000000002>"


def chunk(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n0\r\n\r\n" % (len(data), data)


def warc(css_headers: list[tuple[str, str]], css_stored: bytes, css_digest: str) -> bytes:
    """A page and its stylesheet, the stylesheet stored as ``css_stored`` under the payload digest ``css_digest``."""
    out = BytesIO()
    writer = WARCWriter(out, gzip=True, warc_version="1.0")
    for url, record_id, headers, body, digest in (
        (URL, PAGE_ID, [("Content-Type", "text/html")], HTML, None),
        (CSS_URL, CSS_ID, [("Content-Type", "text/css"), *css_headers], css_stored, css_digest),
    ):
        warc_headers = {"WARC-Record-ID": record_id, "WARC-Date": "2020-01-02T03:04:05Z"}
        if digest:
            warc_headers["WARC-Payload-Digest"] = digest
        writer.write_record(writer.create_warc_record(
            url, "response", payload=BytesIO(body), length=len(body), warc_headers_dict=warc_headers,
            http_headers=StatusAndHeaders("200 OK", headers, protocol="HTTP/1.1"),
        ))  # fmt: skip
    return out.getvalue()


GZ_CSS = gzip.compress(CSS, mtime=0)
CASES = {
    # case: (headers, stored body, the body the digest is taken over, the form that is)
    "gzip-decoded": ([("Content-Encoding", "gzip")], GZ_CSS, CSS, "decoded"),
    "br-decoded": ([("Content-Encoding", "br")], brotli.compress(CSS), CSS, "decoded"),
    "dechunked": ([("Transfer-Encoding", "chunked")], chunk(CSS), CSS, "dechunked"),
    "chunked-gzip-decoded": ([("Transfer-Encoding", "chunked"), ("Content-Encoding", "gzip")], chunk(GZ_CSS), CSS,
                             "decoded"),
    "chunked-gzip-dechunked": ([("Transfer-Encoding", "chunked"), ("Content-Encoding", "gzip")], chunk(GZ_CSS), GZ_CSS,
                               "dechunked"),
}  # fmt: skip


def imported(tmp_path: Path, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[str], list[str]]:
    capsys.readouterr()
    status = main(["import", *args, "-o", str(tmp_path / "out")])
    out, err = capsys.readouterr()
    return status, out.splitlines(), err.splitlines()


@pytest.mark.parametrize("case", list(CASES))
def test_a_payload_digest_over_another_form_of_the_body_is_accepted_and_reported(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    headers, stored, hashed, form = CASES[case]
    src = tmp_path / "in.warc.gz"
    src.write_bytes(warc(headers, stored, fs.sha1_b32(hashed)))
    status, out, err = imported(tmp_path, capsys, str(src))
    assert status == 0 and err == [], err
    assert out[1:] == [f"digests: 1 payload digest in in.warc.gz is over the body with its "
                       f"{'chunked transfer coding removed' if form == 'dechunked' else 'Content-Encoding undone'}, "
                       "not the payload as stored; accepted"]  # fmt: skip
    report = checked_manifest(tmp_path / "out").digests
    assert report is not None and not report.allow_mismatch and report.mismatches == []
    assert report.other_forms == [OtherFormDigest(file="in.warc.gz", record_id=CSS_ID, url=CSS_URL, digest="payload",
                                                  form=form)]  # fmt: skip


def test_a_digest_of_the_stored_payload_is_no_news(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "in.warc.gz"
    src.write_bytes(warc([("Content-Encoding", "gzip")], GZ_CSS, fs.sha1_b32(GZ_CSS)))
    status, out, _ = imported(tmp_path, capsys, str(src))
    assert status == 0 and len(out) == 1
    report = load_manifest(tmp_path / "out").digests
    assert report is not None and report.other_forms == [] and report.mismatches == []


def test_a_payload_digest_of_no_form_is_refused_unless_allowed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = tmp_path / "in.warc.gz"
    wrong = fs.sha1_b32(b"some other stylesheet")
    src.write_bytes(warc([("Content-Encoding", "gzip")], GZ_CSS, wrong))
    status, out, err = imported(tmp_path, capsys, str(src))
    assert status == 2 and out == [] and len(err) == 1, err
    assert str(src) in err[0] and CSS_ID in err[0] and CSS_URL in err[0] and "payload digest" in err[0]
    assert "--allow-digest-mismatch" in err[0] and not (tmp_path / "out").exists()

    status, out, err = imported(tmp_path, capsys, str(src), "--allow-digest-mismatch")
    assert status == 0, err
    assert out[1:] == ["digests: 1 digest matched nothing and was imported as --allow-digest-mismatch asks; "
                       "manifest.json lists every one"]  # fmt: skip
    assert len(err) == 1 and CSS_ID in err[0] and wrong in err[0], err
    report = checked_manifest(tmp_path / "out").digests
    assert report is not None and report.allow_mismatch and report.other_forms == []
    assert report.mismatches == [DigestMismatch(file="in.warc.gz", record_id=CSS_ID, url=CSS_URL, digest="payload",
                                                expected=wrong, actual=fs.sha1_b32(GZ_CSS))]  # fmt: skip


def test_a_wacz_with_a_wrong_datapackage_digest_is_refused_unless_allowed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = warc([], CSS, fs.sha1_b32(CSS))
    path = fs.wacz(tmp_path / "in.wacz", {"a.warc.gz": data}, [{"url": URL}], tamper="archive/a.warc.gz")
    status, out, err = imported(tmp_path, capsys, str(path))
    assert status == 2 and out == [] and len(err) == 1, err
    assert str(path) in err[0] and re.search(r"archive/a\.warc\.gz: sha256 is \w+, datapackage\.json says", err[0])
    assert not (tmp_path / "out").exists()

    status, out, err = imported(tmp_path, capsys, str(path), "--allow-digest-mismatch")
    assert status == 0, err
    assert "in.wacz!archive/a.warc.gz" in err[0] and "datapackage" in err[0]
    manifest = checked_manifest(tmp_path / "out")
    assert manifest.digests is not None and manifest.digests.allow_mismatch
    assert manifest.digests.mismatches == [DigestMismatch(
        file="in.wacz!archive/a.warc.gz", record_id=None, url=None, digest="datapackage",
        expected="sha256:" + hashlib.sha256(data + b"x").hexdigest(),  # fs.wacz's tampering
        actual="sha256:" + hashlib.sha256(data).hexdigest(),
    )]  # fmt: skip
    assert [p.url for p in manifest.pages] == [URL]
    # the snapshot holds the WARC as the zip holds it, whatever the data package said
    archived = [f for f in manifest.files if f.path.startswith("archive/")]
    assert [f.sha256 for f in archived] == [hashlib.sha256(data).hexdigest()]


def test_an_older_manifest_without_a_digest_report_still_loads(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = tmp_path / "in.warc.gz"
    src.write_bytes(warc([], CSS, fs.sha1_b32(CSS)))
    assert imported(tmp_path, capsys, str(src))[0] == 0
    path = tmp_path / "out" / "manifest.json"
    data = json.loads(path.read_text())
    del data["digests"]
    path.write_text(json.dumps(data))
    assert checked_manifest(tmp_path / "out").digests is None


def test_scoops_file_uri_records_hash_the_body_after_their_http_head(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if not SCOOP.is_file():
        pytest.skip(f"{SCOOP} is absent")
    status, out, err = imported(tmp_path, capsys, str(SCOOP))
    assert status == 0, err
    # its pages.jsonl lists those two records too, which no browser can be sent to
    assert [line.split(" is listed")[0] for line in err] == [
        "capreplay import: warning: page file:///screenshot.png", "capreplay import: warning: page file:///pdf-snapshot.pdf"
    ]
    member = "example.com.wacz!archive/data.warc"
    assert out[1:] == [f"digests: 2 payload digests in {member} are over the body after the HTTP head of a record "
                       "whose URI is not http(s), not the payload as stored; accepted"]  # fmt: skip
    report = checked_manifest(tmp_path / "out").digests
    assert report is not None and report.mismatches == []
    assert [(d.record_id, d.url, d.form) for d in report.other_forms] == [
        ("<urn:uuid:7e7446b7-04de-4b69-8d1d-6be66ccc1ce7>", "file:///screenshot.png", "http-body"),
        ("<urn:uuid:e171c361-9b0f-4eae-bf5f-896931a25dab>", "file:///pdf-snapshot.pdf", "http-body"),
    ]
    assert all(d.file == member for d in report.other_forms)


def webrecorder_2019(block_digest_of: str) -> tuple[bytes, list[str]]:
    """A page and its stylesheet as Webrecorder's 2019 recorder wrote them: the payload's sha1 as both the
    payload and the block digest (``block_digest_of="payload"``), or a block digest over other bytes; and the
    ids of the two responses."""
    records = []
    for n, (url, body, mime) in enumerate(((URL, HTML, "text/html"), (CSS_URL, CSS, "text/css")), start=1):
        block = fs.http("HTTP/1.1 200 OK", [("Content-Type", mime), ("Content-Length", str(len(body)))], body)
        digest = fs.sha1_b32(body if block_digest_of == "payload" else b"some other " + body)
        records.append(fs.record("response", url, block, n=n, headers=[("WARC-Block-Digest", digest)]))
    return fs.gz(*records), [fs.rid(1), fs.rid(2)]


def test_a_block_digest_over_the_payload_is_accepted_and_reported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = tmp_path / "in.warc.gz"
    data, ids = webrecorder_2019("payload")
    src.write_bytes(data)
    status, out, err = imported(tmp_path, capsys, str(src))
    assert status == 0 and err == [], err
    assert out[1:] == ["digests: 2 block digests in in.warc.gz are over the payload alone, not the whole block "
                       "(as Webrecorder's 2019 recorder wrote it); accepted"]  # fmt: skip
    report = checked_manifest(tmp_path / "out").digests
    assert report is not None and not report.allow_mismatch and report.mismatches == []
    assert report.other_forms == [
        OtherFormDigest(file="in.warc.gz", record_id=ids[0], url=URL, digest="block", form="payload"),
        OtherFormDigest(file="in.warc.gz", record_id=ids[1], url=CSS_URL, digest="block", form="payload"),
    ]


def test_a_block_digest_over_neither_the_block_nor_the_payload_is_a_mismatch(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = tmp_path / "in.warc.gz"
    data, ids = webrecorder_2019("other bytes")
    src.write_bytes(data)
    status, out, err = imported(tmp_path, capsys, str(src))
    assert status == 2 and out == [] and len(err) == 1, err
    assert str(src) in err[0] and ids[0] in err[0] and "block digest" in err[0] and "--allow-digest-mismatch" in err[0]

    status, out, err = imported(tmp_path, capsys, str(src), "--allow-digest-mismatch")
    assert status == 0, err
    report = checked_manifest(tmp_path / "out").digests
    assert report is not None and report.other_forms == []
    assert [(m.record_id, m.digest, m.expected) for m in report.mismatches] == [
        (ids[0], "block", fs.sha1_b32(b"some other " + HTML)),
        (ids[1], "block", fs.sha1_b32(b"some other " + CSS)),
    ]


def test_a_record_without_an_http_head_has_no_payload_apart_for_its_block_digest() -> None:
    # a resource record's payload is its block: a block digest over anything else matches no form
    found = check_record(block=CSS, payload=CSS, headers=None, labels={"WARC-Block-Digest": fs.sha1_b32(CSS[1:])})
    assert [(f.digest, f.form) for f in found] == [("block", None)]
