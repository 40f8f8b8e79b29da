"""Snapshots captured one by one, joined into one: every page, file and response of each part, nothing else."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from capreplay.archive.snapshot.manifest import checked_manifest
from capreplay.capture.join import join_snapshots
from capreplay.errors import InputError
from capreplay.replay.server import ReplayServer
from tests.support.raw_http import raw_get

SNAPSHOTS = Path(__file__).resolve().parents[2] / "snapshots"
PARTS = {"shop": SNAPSHOTS / "fixtures", "study": SNAPSHOTS / "study"}


def _manifest(folder: Path) -> dict:  # type: ignore[type-arg]
    return json.loads((folder / "manifest.json").read_text())


async def _body(snapshot: Path, url: str) -> bytes:
    async with ReplayServer(snapshot) as info:
        return await raw_get(info.https_port, url, tls=True)


async def test_the_joined_snapshot_holds_each_part_in_order_and_replays_it(tmp_path: Path) -> None:
    out = tmp_path / "joined"
    manifest = join_snapshots(PARTS, out)
    checked_manifest(out)  # every file matches its sha256
    shop, study = _manifest(PARTS["shop"]), _manifest(PARTS["study"])
    assert [p.url for p in manifest.pages] == [p["url"] for p in shop["pages"] + study["pages"]]
    assert [p.screenshot for p in manifest.pages][:2] == ["captures/0000.png", "captures/0001.png"]
    assert manifest.pages[9].screenshot == "captures/0009.png"  # the study's first page, after the shop's nine
    assert (out / "captures/0009.png").read_bytes() == (PARTS["study"] / study["pages"][0]["screenshot"]).read_bytes()
    assert manifest.hosts == sorted(set(shop["hosts"]) | set(study["hosts"]))
    archives = sorted(p.name for p in (out / "archive").iterdir())
    assert archives == ["shop-data-00000.warc.gz", "study-data-00000.warc.gz"]
    assert (out / "archive/study-data-00000.warc.gz").read_bytes() == (
        PARTS["study"] / "archive/data-00000.warc.gz").read_bytes()  # fmt: skip
    for part in PARTS.values():
        url = _manifest(part)["pages"][0]["url"]
        assert await _body(out, url) == await _body(part, url)


def test_parts_of_different_seeds_are_refused_and_nothing_is_written(tmp_path: Path) -> None:
    other = tmp_path / "other"
    shutil.copytree(PARTS["study"], other)
    manifest = _manifest(other)
    manifest["random_seed"] += 1
    (other / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(InputError, match="different random seeds"):
        join_snapshots({"shop": PARTS["shop"], "other": other}, tmp_path / "joined")
    assert not (tmp_path / "joined").exists() or not any((tmp_path / "joined").iterdir())


async def test_a_strict_join_misses_a_state_the_capture_never_saw(tmp_path: Path) -> None:
    shop_url = _manifest(PARTS["shop"])["pages"][0]["url"] + "?never=captured"
    study_url = _manifest(PARTS["study"])["pages"][0]["url"] + "?never=captured"
    lenient = join_snapshots(PARTS, tmp_path / "lenient")
    strict = join_snapshots(PARTS, tmp_path / "strict", strict=True)
    shop_only = join_snapshots(PARTS, tmp_path / "shop-only", strict_hosts=["www.shop.test"])
    assert (lenient.replay.strict, strict.replay.strict, shop_only.replay.strict) == (False, True, False)
    assert shop_only.replay.strict_hosts == ["www.shop.test"]
    for folder, url, status in (("lenient", shop_url, b"200"), ("strict", shop_url, b"404"),
                                ("shop-only", shop_url, b"404"), ("shop-only", study_url, b"200")):  # fmt: skip
        assert (await _body(tmp_path / folder, url)).startswith(b"HTTP/1.1 " + status), (folder, url)
