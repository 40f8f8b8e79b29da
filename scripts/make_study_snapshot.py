"""Regenerate snapshots/study/ from the study's fixture sites with ``capreplay capture``.

    uv run python scripts/make_study_snapshot.py [--out snapshots/study]

The study sites (www.study.test and frames.partner.test) are started on a free local port, the plan
is written to a temporary file, and the real command line captures the ten pages with ``--map`` so
the archive keeps the real hostnames. The new snapshot is verified offline before it replaces the old
one. Afterwards, run `capreplay study measure`: the location tags and ACT records are measured on this snapshot.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from snapshot_tools import replace_snapshot

from capreplay.testing.fixtures.study.plan import study_plan_data
from capreplay.testing.fixtures.study.sites import StudySites


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("snapshots/study"))
    args = parser.parse_args()
    return replace_snapshot(StudySites(), study_plan_data(), args.out)


if __name__ == "__main__":
    raise SystemExit(main())
