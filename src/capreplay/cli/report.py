"""``capreplay report RUN_DIR [-o DIR]``: the tables and plots of a study run or an agent run.

A study run (``capreplay study run``) gets ``report.md`` (the per-representation tables, accuracy over
repeats, figures per page kind), ``report.json`` and two PNG plots (tokens against accuracy; tokens per page).
An agent run (``capreplay run``; its run.json's "kind" is "agents") gets ``report.md`` (a row per agent: the
judge's scores, time, output tokens, model calls and endings; scores by covered-point type and by site; the
episodes that left the snapshot), ``report.json`` and ``per_type.png`` (scores by CAP code, a bar per agent).
Both are written into DIR, by default ``results/reports/<run_id>``, and the Markdown is printed.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

DEFAULT_REPORTS = Path("results/reports")


def add_parser(sub: Any) -> None:
    """Register the verb."""
    p = sub.add_parser("report", help="tables and plots of a study run or an agent run", description=__doc__)
    p.add_argument("run_dir", type=Path, metavar="RUN_DIR", help="a run folder, e.g. results/runs/ID")
    p.add_argument("-o", "--out", type=Path, metavar="DIR",
                   help=f"folder to write into (default: {DEFAULT_REPORTS}/<run_id>)")  # fmt: skip
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Build the report of the run's kind, write it, print the Markdown and where it went."""
    # Imported when the verb runs: Pillow and the study's models would slow every command's start-up.
    from capreplay.report.agent_run import is_agent_run

    if is_agent_run(args.run_dir):
        return _agent_run(args)
    from capreplay.report.study_run import report_folder, run_report_markdown, write_run_report

    report = report_folder(args.run_dir)
    out = args.out or DEFAULT_REPORTS / report.study.run_id
    write_run_report(out, report)
    print(run_report_markdown(report), end="")
    print(f"wrote {out}")
    return 0


def _agent_run(args: argparse.Namespace) -> int:
    from capreplay.report.agent_run import agent_report_markdown, report_agent_folder, write_agent_report

    report = report_agent_folder(args.run_dir)
    out = args.out or DEFAULT_REPORTS / report.run_id
    write_agent_report(out, report)
    print(agent_report_markdown(report), end="")
    print(f"wrote {out}")
    return 0
