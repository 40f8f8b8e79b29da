"""Rebuild benchmark applications and capture them again: do the pages say what the committed snapshot says?

    .venv/bin/python scripts/bench_rebuild.py [NAME ...] [--benchmark benchmark]

Each named application (default: all) is installed if needed, started in a fresh work folder, captured with
its plan as ``capreplay benchmark freeze`` does, and every page is paired with the same plan page of the
committed snapshot (``benchmark/snapshot``) by URL and actions; their visible texts are compared. The ids an
application makes up differ between builds; the text must not. The JSON result goes to
``results/bench/rebuild-<date>.json`` and a Markdown table to stdout. A benchmark, not a test.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from capreplay.archive.snapshot.manifest import load_manifest
from capreplay.benchmark.freeze import freeze_application
from capreplay.benchmark.rebuild import pair_pages, summary
from capreplay.benchmark.roster import application, names

ROOT = Path(__file__).resolve().parents[1]


def _texts(folder: Path, pages: list) -> dict[str, str]:  # type: ignore[type-arg]
    return {p.text: (folder / p.text).read_text(encoding="utf-8") for p in pages if p.text}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="applications (default: all)")
    parser.add_argument("--benchmark", type=Path, default=ROOT / "benchmark")
    args = parser.parse_args()
    committed = args.benchmark / "snapshot"
    manifest = load_manifest(committed)
    results = []
    for name in args.names or names():
        host = application(name).host
        old = [p for p in manifest.pages if p.url.split("/")[2] == host]
        with tempfile.TemporaryDirectory() as scratch:
            started = time.monotonic()
            part = freeze_application(name, args.benchmark, Path(scratch) / name)
            seconds = time.monotonic() - started
            pairs, alone = pair_pages(old, part.manifest.pages, _texts(committed, old),
                                      _texts(part.folder, part.manifest.pages))  # fmt: skip
        differing = [{"url": p.url, "ratio": round(p.ratio, 4), "first": p.first_difference}
                     for p in pairs if not p.same]  # fmt: skip
        results.append({"name": name, **summary(pairs, alone), "build_and_capture_s": round(seconds, 1),
                        "differing": differing, "unpaired_urls": alone})  # fmt: skip
    out = ROOT / "results" / "bench" / f"rebuild-{datetime.now(UTC):%Y-%m-%dT%H%M}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"benchmark": "rebuild", "results": results}, indent=1) + "\n")
    print("| application | pages paired | same text | lowest similarity | unpaired | build + capture s |")
    print("|---|---:|---:|---:|---:|---:|")
    for r in results:
        print(f"| {r['name']} | {r['paired']} | {r['same_text']} | {r['lowest_ratio']:.4f} | {r['unpaired']} "
              f"| {r['build_and_capture_s']} |")
    print(f"\nwrote {out}")


if __name__ == "__main__":
    main()
