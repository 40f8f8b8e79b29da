"""Regenerate snapshots/world/ from the world's four fixture sites, and the workflow tasks in tasks.json.

    uv run python scripts/make_world_snapshot.py [--out snapshots/world] [--tasks tasks.json] [--tasks-only]

The sites (www.fellgear.test, www.trailverdict.test, book.hutnet.test, data.parkstats.test) are started on
a free local port and the real command line captures every task's gold path and a crawl of the four sites
with ``--map``, so the archive keeps the real hostnames. The new snapshot is verified offline before it
replaces the old one. Then tasks.json gets the ``workflows`` section that ``capreplay.testing.fixtures.world.tasks``
builds and the ``world`` entry of ``snapshots``; nothing else in the file changes. ``--tasks-only``
rewrites those two keys without capturing, for changes that touch no page and no gold path.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from snapshot_tools import replace_snapshot

from capreplay.testing.fixtures.world.plan import world_plan_data
from capreplay.testing.fixtures.world.sites import WorldSites
from capreplay.testing.fixtures.world.tasks import SNAPSHOT, SNAPSHOT_PATH, workflows_data

ROOT = Path(__file__).resolve().parent.parent


def write_tasks(path: Path) -> None:
    """Set tasks.json's ``workflows`` and ``snapshots.world``, keeping every other key as it is."""
    data = json.loads(path.read_text(encoding="utf-8"))
    data.setdefault("snapshots", {})[SNAPSHOT] = SNAPSHOT_PATH
    data["workflows"] = workflows_data()
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote the workflows of {path}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / SNAPSHOT_PATH)
    parser.add_argument("--tasks", type=Path, default=ROOT / "tasks.json")
    parser.add_argument("--tasks-only", action="store_true", help="only rewrite the workflows in tasks.json")
    args = parser.parse_args()
    if not args.tasks_only:
        started = time.monotonic()
        code = replace_snapshot(WorldSites(), world_plan_data(), args.out)
        print(f"capture and verify took {time.monotonic() - started:.0f} s")
        if code != 0:
            return code
    write_tasks(args.tasks)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
