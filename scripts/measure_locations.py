"""Measure where every study task's answer or target is, and write the tags into the task file.

    uv run python scripts/measure_locations.py [--snapshot snapshots/study] [--tasks FILE] [--check]

The snapshot is served offline and each page is loaded in Chromium the way the study loads it
(1280x800, load, network idle, 500 ms, scrolled to the top). Each ACT chain is resolved through CDP
(closed shadow roots and out-of-process iframes included) and each READ answer is looked for in
visible text, attributes and form values, iframes and closed shadow roots. A selector that matches 0
or more than 1 elements, or an answer found nowhere, stops the script with exit status 1 and a line
naming the task. ``--check`` writes nothing and exits 1 if any committed tag differs from the measure.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from capreplay.errors import CapreplayError, InputError
from capreplay.fixtures.study.tasks import bundled_tasks_path, dump_tasks, load_tasks, with_locations
from capreplay.study.offline.measure import location_table, measure_snapshot


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--snapshot", type=Path, default=Path("snapshots/study"))
    parser.add_argument("--tasks", type=Path, default=bundled_tasks_path())
    parser.add_argument("--check", action="store_true", help="compare with the file's tags; write nothing")
    args = parser.parse_args()
    try:
        tasks = load_tasks(args.tasks)
    except InputError as e:
        print(f"measure_locations: {e.line()}", file=sys.stderr)
        return 2
    try:
        locations = asyncio.run(measure_snapshot(args.snapshot, tasks))
    except CapreplayError as e:
        # A bad selector or a missing answer is a fault of the tasks against this snapshot: exit 1.
        print(f"measure_locations: {e.line()}", file=sys.stderr)
        return 1
    print(location_table(tasks, locations))
    if args.check:
        changed = [f"{t.id}: file says {t.location}, measured {locations[t.id]}"
                   for t in tasks.tasks if t.location != locations[t.id]]
        for line in changed:
            print(f"measure_locations: {line}", file=sys.stderr)
        return 1 if changed else 0
    args.tasks.write_text(dump_tasks(with_locations(tasks, locations)), encoding="utf-8")
    print(f"wrote {args.tasks}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
