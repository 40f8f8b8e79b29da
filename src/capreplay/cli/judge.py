"""``capreplay judge``: score agent runs with rubric trees on the snapshot the agents ran on.

    capreplay judge RUN_DIR                          judge every episode; write verdicts.jsonl, metrics.json, judge.md
    capreplay judge make-rubric --task ID            a model writes the task's rubric (validated, repaired if invalid)
    capreplay judge agreement LABELS --verdicts F    agreement and Cohen's kappa between the judge and human labels

The judge's model key is CAPREPLAY_JUDGE_API_KEY (else ANTHROPIC_API_KEY); its answers are cached in
``--cache`` by request hash, so judging a run again is deterministic and makes no call.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any, NoReturn

from capreplay.errors import UsageError

DEFAULT_CACHE = Path("results/judge-cache")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def add_parser(sub: Any) -> None:
    """Register the verb; its three forms are parsed in :func:`run`."""
    p = sub.add_parser(
        "judge",
        help="score agent runs with rubric trees; make-rubric; agreement",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("words", nargs=argparse.REMAINDER, metavar="RUN_DIR | make-rubric ... | agreement ...")
    p.set_defaults(run=run)


def _score_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="capreplay judge", add_help=False)
    p.add_argument("run_dir", type=Path)
    p.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    p.add_argument("--base-url")
    p.add_argument("--json", action="store_true")
    return p


def _rubric_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="capreplay judge make-rubric", add_help=False)
    p.add_argument("--task", required=True)
    p.add_argument("--tasks", type=Path, default=Path("tasks.json"))
    p.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    p.add_argument("--base-url")
    p.add_argument("-o", "--out", type=Path)
    return p


def _agreement_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="capreplay judge agreement", add_help=False)
    p.add_argument("labels", type=Path)
    p.add_argument("--verdicts", type=Path, required=True)
    p.add_argument("--json", action="store_true")
    return p


def run(args: argparse.Namespace) -> int:
    """Dispatch on the first word."""
    words: list[str] = args.words
    if not words:
        raise UsageError("name a run folder, or make-rubric or agreement")
    if words[0] == "make-rubric":
        return _make_rubric(_rubric_parser().parse_args(words[1:]))
    if words[0] == "agreement":
        return _agreement(_agreement_parser().parse_args(words[1:]))
    return _score(_score_parser().parse_args(words))


def _settings(settings: Any, base_url: str | None) -> Any:
    return settings.model_copy(update={"base_url": base_url}) if base_url else settings


def _score(args: argparse.Namespace) -> int:
    from capreplay.judge.run_judge import judge_client, judge_run, run_workflows

    workflows, _ = run_workflows(args.run_dir)
    client = judge_client(_settings(workflows.judge.model, args.base_url), args.cache)

    async def go() -> Any:
        try:
            return await judge_run(args.run_dir, client)
        finally:
            if client is not None:
                await client.aclose()

    judged = asyncio.run(go())
    if args.json:
        print(judged.metrics.model_dump_json())
        return 0
    print(judged.markdown, end="")
    unscored = [v for v in judged.verdicts if not v.scored]
    for verdict in unscored:
        print(f"unscored {verdict.episode}: {verdict.unscored}")
    print(
        f"judged {len(judged.verdicts)} episodes ({len(unscored)} unscored); verdicts in {args.run_dir}/verdicts.jsonl"
    )
    return 0


def _make_rubric(args: argparse.Namespace) -> int:
    from capreplay.errors import InputError
    from capreplay.judge.make_rubric import make_rubric
    from capreplay.llm import make_client
    from capreplay.study.registration import load_tasks_file

    workflows = load_tasks_file(args.tasks).workflows
    if workflows is None:
        raise InputError("has no 'workflows' section", args.tasks)
    try:
        task = workflows.task(args.task)
    except KeyError:
        raise UsageError(f"no workflow task {args.task!r} in {args.tasks}") from None
    from capreplay.judge.run_judge import JUDGE_KEY_VARIABLE

    settings = _settings(workflows.judge.model, args.base_url)
    client = make_client(settings, cache_dir=args.cache, api_key=os.environ.get(JUDGE_KEY_VARIABLE))

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
        from capreplay.archive.writer import write_atomic

        write_atomic(args.out, text.encode("utf-8"))
        print(f"wrote {args.out}", file=sys.stderr)
    else:
        print(text, end="")
    return 0


def _agreement(args: argparse.Namespace) -> int:
    from capreplay.judge.agreement import agreement_report, agreement_table, join, read_labels, read_verdict_passes

    report = agreement_report(join(read_labels(args.labels), read_verdict_passes(args.verdicts)))
    print(json.dumps(report.model_dump(mode="json")) if args.json else agreement_table(report), end="\n")
    return 0
