"""Measure where every study task's answer or target is, and what each ACT target is, into the task file.

    uv run python scripts/measure_locations.py [--snapshot snapshots/study] [--tasks FILE] [--check]

The same as ``capreplay study measure`` (see its ``--help``), kept for the scripts that name it.
"""

from __future__ import annotations

import sys

from capreplay.cli import main

if __name__ == "__main__":
    raise SystemExit(main(["study", "measure", *sys.argv[1:]]))
