"""Regenerate snapshots/study/ from the study's fixture sites with ``capreplay capture``.

    uv run python scripts/make_study_snapshot.py [--out snapshots/study]

The study sites (www.study.test and frames.partner.test) are started on a free local port, the plan
is written to a temporary file, and the real command line captures the ten pages with ``--map`` so
the archive keeps the real hostnames. The new snapshot is verified offline before it replaces the old
one. Afterwards, run scripts/measure_locations.py: the location tags are measured on this snapshot.
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

from capreplay.fixtures.study.plan import study_plan_data
from capreplay.fixtures.study.sites import StudySites


async def _capture(out: Path) -> int:
    async with StudySites() as sites:
        with tempfile.TemporaryDirectory() as tmp:
            plan = Path(tmp, "plan.json")
            plan.write_text(json.dumps(study_plan_data(), indent=2))
            cmd = [sys.executable, "-m", "capreplay", "capture", "--plan", str(plan), "-o", str(out),
                   "--no-progress"]
            for mapping in sites.map_args():
                cmd += ["--map", mapping]
            proc = await asyncio.create_subprocess_exec(*cmd)
            return await proc.wait()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("snapshots/study"))
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
