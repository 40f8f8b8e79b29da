"""``capreplay report RUN_DIR [-o DIR] [--kind KIND] [--json]``: the tables and plots of any run.

The kind of run is read from its run.json (or given with ``--kind``):

- ``study`` (``capreplay study run``): ``report.md`` (the per-representation tables, accuracy over repeats,
  figures per page kind), ``report.json`` and two PNG plots (tokens against accuracy; tokens per page);
- ``agents`` (``capreplay run``): ``report.md`` (a row per agent: the judge's scores if the run is judged,
  time, output tokens, model calls and endings; scores by covered-point type and by site; the episodes that
  left the snapshot), ``report.json`` and ``per_type.png`` (scores by CAP code, a bar per agent);
- ``judge`` (a judged agent run): ``judge.md`` and ``metrics.json``, the judge's metrics recomputed from
  ``verdicts.jsonl``.

Everything is written into DIR, by default ``results/reports/<run_id>``, and the Markdown is printed (the
JSON with ``--json``). ``capreplay study report RUN_DIR`` is this verb with ``-o RUN_DIR``.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

DEFAULT_REPORTS = Path("results/reports")
KINDS = ("study", "agents", "judge")


def add_parser(sub: Any) -> None:
    """Register the verb."""
    p = sub.add_parser("report", help="tables and plots of a study run, an agent run or its judging",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    p.add_argument("run_dir", type=Path, metavar="RUN_DIR", help="a run folder, e.g. results/runs/ID")
    p.add_argument("-o", "--out", type=Path, metavar="DIR",
                   help=f"folder to write into (default: {DEFAULT_REPORTS}/<run_id>)")  # fmt: skip
    p.add_argument("--kind", choices=KINDS, help="the report to write (default: the run's own kind)")
    p.add_argument("--json", action="store_true", help="print the report as JSON instead of Markdown")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Build the report of the run's kind, write it, print it and where it went."""
    return report_run_folder(args.run_dir, args.out, kind=args.kind, as_json=args.json)


def report_run_folder(run_dir: Path, out: Path | None, *, kind: str | None = None, as_json: bool = False) -> int:
    """Write the report of ``run_dir`` into ``out`` (default: ``results/reports/<run_id>``) and print it."""
    # Imported when the verb runs: Pillow and the report models would slow every command's start-up.
    from capreplay.report.agents import is_agent_run
    from capreplay.util.files import refuse_unmakeable_folder

    if out is not None:
        refuse_unmakeable_folder(out)  # before the run folder is read
    kind = kind or ("agents" if is_agent_run(run_dir) else "study")
    if kind == "study":
        from capreplay.report.study import report_folder, run_report_markdown, write_run_report

        study = report_folder(run_dir)
        target = out or DEFAULT_REPORTS / study.study.run_id
        refuse_unmakeable_folder(target)
        write_run_report(target, study)
        text, data = run_report_markdown(study), study.model_dump_json()
    elif kind == "agents":
        from capreplay.report.agents import agent_report_markdown, report_agent_folder, write_agent_report

        agents = report_agent_folder(run_dir)
        target = out or DEFAULT_REPORTS / agents.run_id
        refuse_unmakeable_folder(target)
        write_agent_report(target, agents)
        text, data = agent_report_markdown(agents), agents.model_dump_json()
    else:
        from capreplay.report.judge import metrics_table, report_judged_folder, write_judge_report

        metrics = report_judged_folder(run_dir)
        target = out or DEFAULT_REPORTS / run_dir.name
        refuse_unmakeable_folder(target)
        write_judge_report(target, metrics)
        text, data = metrics_table(metrics), metrics.model_dump_json()
    print(data if as_json else text, end="\n" if as_json else "")
    if not as_json:
        print(f"wrote {target}")
    return 0
