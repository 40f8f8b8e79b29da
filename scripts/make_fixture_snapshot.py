"""Regenerate snapshots/fixtures/ from the bundled fixture sites with ``capreplay capture``.

    uv run python scripts/make_fixture_snapshot.py [--out snapshots/fixtures]

The fixture sites are started on a free local port, the plan is written to a temporary file, and the
real command line captures them with ``--map`` so the archive keeps the real hostnames. The old
snapshot is replaced only once the new one is complete.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from capreplay.fixtures.plan import fixture_plan_data
from capreplay.fixtures.sites import FixtureSites


async def _capture(out: Path) -> int:
    sites = FixtureSites()
    await sites.start()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            plan = Path(tmp, "plan.json")
            plan.write_text(json.dumps(fixture_plan_data(), indent=2))
            cmd = [sys.executable, "-m", "capreplay", "capture", "--plan", str(plan), "-o", str(out),
                   "--no-progress"]
            for mapping in sites.map_args():
                cmd += ["--map", mapping]
            proc = await asyncio.create_subprocess_exec(*cmd)
            return await proc.wait()
    finally:
        await sites.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("snapshots/fixtures"))
    args = parser.parse_args()
    staging = args.out.with_name(args.out.name + ".new")
    shutil.rmtree(staging, ignore_errors=True)
    code = asyncio.run(_capture(staging))
    if code != 0:
        print(f"capture failed with exit status {code}; {args.out} left unchanged", file=sys.stderr)
        return code
    verify = subprocess.run([sys.executable, "-m", "capreplay", "verify", str(staging)], check=False)
    if verify.returncode != 0:
        print(f"verify failed; the new snapshot is left in {staging} for inspection", file=sys.stderr)
        return verify.returncode
    shutil.rmtree(args.out, ignore_errors=True)
    staging.rename(args.out)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
