"""``capreplay judge``: score agent runs with rubric trees on the snapshot the agents ran on.

    capreplay judge [score] RUN_DIR                  judge every episode; write verdicts.jsonl, metrics.json, judge.md
    capreplay judge make-rubric --task ID            a model writes the task's rubric (validated, repaired if invalid)
    capreplay judge agreement LABELS --verdicts F    agreement and Cohen's kappa between the judge and human labels

The judge's model key is $CAPREPLAY_JUDGE_API_KEY (else $ANTHROPIC_API_KEY), its endpoint --base-url (else
$CAPREPLAY_JUDGE_BASE_URL, else its settings'); its answers are cached in
``--cache`` by request hash, so judging a run again is deterministic and makes no call.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from capreplay.cli import StepsWithDefault
from capreplay.cli.options import add_base_url_option, model_access
from capreplay.errors import UsageError

DEFAULT_CACHE = Path("results/judge-cache")


def add_parser(sub: Any) -> None:
    """Register the verb and its steps: ``score`` (also the default, ``capreplay judge RUN_DIR``), ``make-rubric``
    and ``agreement``."""
    p = sub.add_parser("judge", help="score agent runs with rubric trees; make-rubric; agreement",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    steps = p.add_subparsers(dest="step", required=True, metavar="STEP", action=StepsWithDefault,
                             default_step="score")

    score = steps.add_parser("score", help="judge every episode of an agent run (the default step)",
                             description="Judge every recorded episode of RUN_DIR on the snapshot it ran on; write "
                             "RUN_DIR/verdicts.jsonl, metrics.json and judge.md; print the metrics.")  # fmt: skip
    score.add_argument("run_dir", type=Path, metavar="RUN_DIR", help="an agent run folder, e.g. results/runs/ID")
    _model_options(score)
    score.add_argument("--json", action="store_true", help="print the metrics as one JSON object instead")
    score.set_defaults(run=run_score)

    rubric = steps.add_parser("make-rubric", help="a model writes a task's rubric tree (validated, repaired)",
                              description="Ask the judge's model for the rubric tree of one workflow task; an invalid "
                              "tree is sent back with its problems, up to the judge's max_attempts. Exit status 1 "
                              "if no attempt is valid.")  # fmt: skip
    rubric.add_argument("--task", required=True, metavar="ID", help="the workflow task's id")
    rubric.add_argument("--tasks", type=Path, default=Path("tasks.json"), metavar="FILE",
                        help="the tasks file with the workflows (default: tasks.json)")  # fmt: skip
    _model_options(rubric)
    rubric.add_argument("-o", "--out", type=Path, metavar="FILE", help="write the rubric here (default: print it)")
    rubric.set_defaults(run=run_make_rubric)

    agree = steps.add_parser("agreement", help="agreement and Cohen's kappa between the judge and human labels",
                             description="Join human pass/fail labels (JSON lines: episode, passed) with the judge's "
                             "verdicts and print the agreement, Cohen's kappa and the confusion counts.")  # fmt: skip
    agree.add_argument("labels", type=Path, metavar="LABELS", help="the human labels, one JSON object per line")
    agree.add_argument("--verdicts", type=Path, required=True, metavar="FILE", help="a run's verdicts.jsonl")
    agree.add_argument("--json", action="store_true", help="print the report as one JSON object instead")
    agree.set_defaults(run=run_agreement)


def _model_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--cache", type=Path, default=DEFAULT_CACHE, metavar="DIR",
                   help=f"the judge's response cache, by request hash (default: {DEFAULT_CACHE})")  # fmt: skip
    add_base_url_option(p, "judge", "the judge")


def run_score(args: argparse.Namespace) -> int:
    from capreplay.judge.run_verdicts import judge_client, judge_run, run_workflows
    from capreplay.report.judge import metrics_table, write_judge_report

    workflows, _ = run_workflows(args.run_dir)
    client = judge_client(*model_access(args, "judge", workflows.judge.model), args.cache)

    async def go() -> Any:
        try:
            return await judge_run(args.run_dir, client)
        finally:
            if client is not None:
                await client.aclose()

    judged = asyncio.run(go())
    write_judge_report(args.run_dir, judged.metrics)
    if args.json:
        print(judged.metrics.model_dump_json())
        return 0
    print(metrics_table(judged.metrics), end="")
    unscored = [v for v in judged.verdicts if not v.scored]
    for verdict in unscored:
        print(f"unscored {verdict.episode}: {verdict.unscored}")
    print(
        f"judged {len(judged.verdicts)} episodes ({len(unscored)} unscored); verdicts in {args.run_dir}/verdicts.jsonl"
    )
    return 0


def run_make_rubric(args: argparse.Namespace) -> int:
    from capreplay.errors import InputError
    from capreplay.judge.make_rubric import make_rubric
    from capreplay.llm import make_client
    from capreplay.runs.tasks_file import load_tasks_file

    workflows = load_tasks_file(args.tasks).workflows
    if workflows is None:
        raise InputError("has no 'workflows' section", args.tasks)
    try:
        task = workflows.task(args.task)
    except KeyError:
        raise UsageError(f"no workflow task {args.task!r} in {args.tasks}") from None
    settings, key = model_access(args, "judge", workflows.judge.model)
    client = make_client(settings, cache_dir=args.cache, api_key=key)

    async def go() -> Any:
        try:
            return await make_rubric(
                client,
                task.description,
                task.covered_points,
                task.outputs,
                max_attempts=workflows.judge.max_attempts,
            )
        finally:
            await client.aclose()

    result = asyncio.run(go())
    for n, attempt in enumerate(result.attempts, start=1):
        status = "valid" if not attempt.problems else f"{len(attempt.problems)} problems: {attempt.problems[0]}"
        print(f"attempt {n}: {status}", file=sys.stderr)
    if result.rubric is None:
        print(f"capreplay judge make-rubric: no valid rubric after {len(result.attempts)} attempts", file=sys.stderr)
        return 1
    text = result.rubric.model_dump_json(indent=2, exclude_none=True, exclude_defaults=True) + "\n"
    if args.out:
        from capreplay.util.files import write_atomic

        write_atomic(args.out, text.encode("utf-8"))
        print(f"wrote {args.out}", file=sys.stderr)
    else:
        print(text, end="")
    return 0


def run_agreement(args: argparse.Namespace) -> int:
    from capreplay.judge.agreement import agreement_report, agreement_table, join, read_labels, read_verdict_passes

    report = agreement_report(join(read_labels(args.labels), read_verdict_passes(args.verdicts)))
    print(json.dumps(report.model_dump(mode="json")) if args.json else agreement_table(report), end="\n")
    return 0
