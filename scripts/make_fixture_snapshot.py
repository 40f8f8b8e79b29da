"""Regenerate snapshots/fixtures/ from the bundled fixture sites with ``capreplay capture``.

    uv run python scripts/make_fixture_snapshot.py [--out snapshots/fixtures]

The fixture sites are started on a free local port, the plan is written to a temporary file, and the
real command line captures them with ``--map`` so the archive keeps the real hostnames. The old
snapshot is replaced only once the new one is complete.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from snapshot_tools import replace_snapshot

from capreplay.testing.fixtures.plan import fixture_plan_data
from capreplay.testing.fixtures.sites import FixtureSites


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("snapshots/fixtures"))
    args = parser.parse_args()
    return replace_snapshot(FixtureSites(), fixture_plan_data(), args.out)


if __name__ == "__main__":
    raise SystemExit(main())
