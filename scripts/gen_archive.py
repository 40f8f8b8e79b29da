"""Write a deterministic synthetic snapshot for load tests and benchmarks.

    uv run python scripts/gen_archive.py --records 100000 --out /tmp/synth-100k --seed 0

Same ``--records``, ``--seed``, ``--hosts`` and ``--scheme`` give the same bytes. Prints one JSON line:
records, files, archive bytes and seconds spent.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from capreplay.errors import CapreplayError
from capreplay.testing.synth import RECORDS_PER_FILE, generate_snapshot


def main(argv: list[str] | None = None) -> int:
    """Parse options, generate, report."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--records", type=int, required=True, help="number of archived responses")
    p.add_argument("--out", type=Path, required=True, help="new (or empty) snapshot folder")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--hosts", type=int, default=50)
    p.add_argument("--scheme", choices=("http", "https"), default="https", help="scheme of the archived URLs")
    p.add_argument("--per-file", type=int, default=RECORDS_PER_FILE, help="responses per WARC file")
    p.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="processes writing WARC files")
    args = p.parse_args(argv)
    started = time.perf_counter()
    try:
        manifest = generate_snapshot(
            args.out,
            args.records,
            args.seed,
            hosts=args.hosts,
            scheme=args.scheme,
            per_file=args.per_file,
            workers=args.workers,
        )
    except CapreplayError as e:
        sys.stderr.write(f"gen_archive: {e.line()}\n")
        return 2
    archives = [f for f in manifest.files if f.path.startswith("archive/")]
    summary = {
        "out": str(args.out),
        "records": args.records,
        "snapshot_id": manifest.snapshot_id,
        "warc_files": len(archives),
        "archive_bytes": sum(f.size for f in archives),
        "seconds": round(time.perf_counter() - started, 2),
    }
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
