"""``capreplay register [--tasks tasks.json] [--id ID]``: pre-register a run's inputs before any model answers."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any


def add_parser(sub: Any) -> None:
    """Register the verb."""
    p = sub.add_parser(
        "register",
        help="hash tasks.json, its snapshots' manifests, the prompt, model settings and code into a registration",
        description=__doc__,
    )
    p.add_argument("--tasks", type=Path, default=Path("tasks.json"), metavar="FILE",
                   help="the tasks file to register (default: tasks.json)")
    p.add_argument("--id", dest="registration_id", metavar="ID",
                   help="the registration's id: letters, digits, '.', '_', '-'; an existing one is never replaced "
                        "(default: the UTC time and the first 8 hex digits of the tasks file's sha256)")
    p.add_argument("--results", type=Path, default=Path("results"), metavar="DIR",
                   help="write RESULTS/registrations/ID.json here (default: results)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Write the registration and print what it holds."""
    # Imported when the verb runs: importing every verb's libraries would slow every command's start-up.
    from capreplay.runs.registration import register

    registration, path = register(args.tasks, results_dir=args.results, registration_id=args.registration_id)
    inputs, code = registration.inputs, registration.inputs.code
    print(f"registered {registration.id}: {path}")
    rows = [("tasks file", inputs.tasks_sha256, registration.tasks_file)]
    if inputs.prompt_sha256 and inputs.model_settings_sha256 and inputs.model_settings:
        rows.append(("prompt", inputs.prompt_sha256, ""))
        rows.append(("model settings", inputs.model_settings_sha256, str(inputs.model_settings["model"])))
    rows += [(f"snapshot {name}", s.manifest_sha256, s.path) for name, s in inputs.snapshots.items()]
    dirty = " (uncommitted changes)" if code.git_dirty else ""
    commit = f", commit {code.git_commit}{dirty}" if code.git_commit else ""
    rows.append(("code", code.source_sha256, f"capreplay {code.package_version}{commit}"))
    width = max(len(label) for label, _, _ in rows)
    for label, sha256, note in rows:
        print(f"  {label:<{width}}  {sha256}  {note}".rstrip())
    return 0
