"""``capreplay tasks``: turn a snapshot into a benchmark, every task proven solvable on its frozen pages.

    capreplay tasks cards SNAPSHOT -o cards.json             CAP's site cards, every item checked on the replay
    capreplay tasks propose --cards cards.json -o props.json  site affinities and workflow proposals (DAGs of steps)
    capreplay tasks instantiate --proposals props.json --cards cards.json --snapshot DIR -o BATCH
                                                             proposals made tasks, proven, written to BATCH/tasks.json
    capreplay tasks multihop SNAPSHOT -o BATCH               GTA's two-page questions, filtered and proven
    capreplay tasks check TASKS.json [--snapshot DIR]        the same proof on tasks written by hand
    capreplay tasks review BATCH [-o SHEET.md]               a sheet for a person: accept or reject each task
    capreplay tasks accept SHEET.md --into TASKS.json        merge the accepted tasks; log the rejections
    capreplay tasks agreement SHEET_A SHEET_B                Cohen's kappa of two reviewers' decisions
    capreplay tasks report BATCH... [--cards F] [--proposals F]  coverage and cost per batch

Every model call goes through the response cache (``--cache``), so a batch re-runs for free and bit for bit;
the model key is CAPREPLAY_TASKS_API_KEY (else ANTHROPIC_API_KEY). Each stage's prompt is a file of the
package, its sha256 recorded in what the stage writes.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from capreplay.cli.options import add_base_url_option, http_url, model_access, positive_int
from capreplay.errors import InputError

DEFAULT_CACHE = Path("results/tasks-cache")
DEFAULT_MODEL = {"provider": "anthropic", "model": "claude-sonnet-5", "max_tokens": 4096,
                 "thinking": {"type": "disabled"}, "timeout_s": 120.0}  # fmt: skip
"""The generation model unless ``--settings`` or ``--model`` say otherwise; also the generated tasks' judge."""


def add_parser(sub: Any) -> None:
    """Register the verb and its steps."""
    p = sub.add_parser("tasks", help="generate tasks on a snapshot (cards, workflows, multi-hop), prove, review",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    steps = p.add_subparsers(dest="step", required=True, metavar="STEP")

    cards = steps.add_parser("cards", help="CAP's site cards of a snapshot, every item checked on the replay")
    cards.add_argument("snapshot", type=Path, metavar="SNAPSHOT", help="the snapshot whose sites get cards")
    cards.add_argument("-o", "--out", type=Path, required=True, metavar="FILE", help="the cards file to write")
    cards.add_argument("--page", action="append", type=http_url, metavar="URL",
                       help="only this page of the crawl (repeatable; default: every crawled page)")  # fmt: skip
    cards.add_argument("--explore", action="store_true",
                       help="have the browser_use agent explore each site on the replay instead (its model key: "
                            "$CAPREPLAY_AGENT_API_KEY, else $ANTHROPIC_API_KEY; its endpoint: "
                            "$CAPREPLAY_AGENT_BASE_URL, else --base-url; episodes kept in FILE.explore/)")  # fmt: skip
    cards.add_argument("--site", action="append", metavar="SITE",
                       help="with --explore, only this site, e.g. fellgear.test (repeatable)")  # fmt: skip
    _model_options(cards)
    cards.set_defaults(run=run_cards)

    propose = steps.add_parser("propose", help="site affinities and workflow proposals from the cards")
    propose.add_argument("--cards", type=Path, required=True, metavar="FILE", help="the cards file (tasks cards)")
    propose.add_argument("-o", "--out", type=Path, required=True, metavar="FILE", help="the proposals file to write")
    propose.add_argument("--per-call", type=positive_int, default=2, metavar="N",
                         help="proposals asked for per group of sites (default: 2)")  # fmt: skip
    _model_options(propose)
    propose.set_defaults(run=run_propose)

    inst = steps.add_parser("instantiate", help="make the accepted proposals tasks, prove them, write a batch")
    inst.add_argument("--proposals", type=Path, required=True, metavar="FILE",
                      help="the proposals file (tasks propose); proposals a review rejected are skipped")  # fmt: skip
    inst.add_argument("--cards", type=Path, required=True, metavar="FILE", help="the cards the proposals came from")
    inst.add_argument("--snapshot", type=Path, required=True, metavar="DIR", help="the snapshot the cards describe")
    inst.add_argument("-o", "--out", type=Path, required=True, metavar="BATCH", help="the batch folder to write")
    _model_options(inst)
    inst.set_defaults(run=run_instantiate)

    hop = steps.add_parser("multihop", help="GTA's multi-hop questions over paired pages, filtered and proven")
    hop.add_argument("snapshot", type=Path, metavar="SNAPSHOT", help="a snapshot with a crawl graph (graph.json)")
    hop.add_argument("-o", "--out", type=Path, required=True, metavar="BATCH", help="the batch folder to write")
    hop.add_argument("--count", type=positive_int, default=5, metavar="N", help="page pairs to draft (default: 5)")
    hop.add_argument("--seed", type=int, default=0, metavar="N", help="seed of the choice of pages (default: 0)")
    hop.add_argument("--start", type=http_url, metavar="URL",
                     help="where every task starts (default: the seed page's site's crawl seed)")  # fmt: skip
    hop.add_argument("--pair", nargs=2, action="append", type=http_url, metavar=("SEED", "PARTNER"),
                     help="draft this pair of pages instead of retrieving pairs (repeatable)")  # fmt: skip
    hop.add_argument("--retrieval", choices=("bm25", "embeddings"), default="bm25",
                     help="how a seed page's related pages are found: BM25 over the pages' text, offline, or an "
                     "embedding model's vectors (default: bm25)")  # fmt: skip
    hop.add_argument("--embedding-model", metavar="NAME", help="the embedding model of --retrieval embeddings")
    hop.add_argument("--embedding-base-url", type=http_url, metavar="URL",
                     help="its OpenAI-compatible endpoint root, .../v1 (default: OPENAI_BASE_URL; "
                     "key: OPENAI_API_KEY, else none)")  # fmt: skip
    _model_options(hop)
    hop.set_defaults(run=run_multihop)

    check = steps.add_parser("check", help="prove the workflow tasks of a tasks file on their snapshot")
    check.add_argument("tasks", type=Path, metavar="TASKS", help="a tasks file with a 'workflows' section")
    check.add_argument("--snapshot", type=Path, metavar="DIR", help="default: the snapshot the workflows name")
    check.add_argument("--task", action="append", metavar="ID", help="only this task (repeatable)")
    check.add_argument("--work", type=Path, metavar="DIR",
                       help="where the proof's gold run is kept (default: a temporary folder)")  # fmt: skip
    check.add_argument("--json", action="store_true", help="print one JSON object per task instead")
    _model_options(check, judge=True)
    check.epilog = "The judge's key is CAPREPLAY_JUDGE_API_KEY (else ANTHROPIC_API_KEY); without one, a rubric that "
    "needs the judge's model cannot be proven."
    check.set_defaults(run=run_check)

    review = steps.add_parser("review", help="write a batch's review sheet (Markdown, accept/reject per task)")
    review.add_argument("batch", type=Path, metavar="BATCH", help="a batch folder (tasks instantiate, multihop)")
    review.add_argument("-o", "--out", type=Path, metavar="SHEET", help="default: BATCH/review.md")
    review.set_defaults(run=run_review)

    accept = steps.add_parser("accept", help="merge a filled review sheet's accepted tasks into a tasks file")
    accept.add_argument("sheet", type=Path, metavar="SHEET", help="a review sheet with its decisions filled in")
    accept.add_argument("--into", type=Path, required=True, metavar="TASKS", help="the tasks file to merge into")
    accept.set_defaults(run=run_accept)

    agree = steps.add_parser("agreement", help="agreement and Cohen's kappa of two reviewers' sheets of one batch")
    agree.add_argument("sheets", type=Path, nargs=2, metavar="SHEET", help="two reviewers' sheets of one batch")
    agree.add_argument("--json", action="store_true", help="print one JSON object instead")
    agree.set_defaults(run=run_agreement)

    report = steps.add_parser("report", help="coverage and cost of batches")
    report.add_argument("batches", type=Path, nargs="+", metavar="BATCH", help="batch folders to report on")
    report.add_argument("--cards", type=Path, metavar="FILE", help="the cards file the batches came from")
    report.add_argument("--proposals", type=Path, metavar="FILE", help="the proposals file they came from")
    report.add_argument("--accepted", type=Path, metavar="TASKS",
                        help="the tasks file of the accepted tasks (default: every proven task counts)")  # fmt: skip
    report.add_argument("--json", action="store_true", help="print one JSON object instead")
    report.set_defaults(run=run_report)


def _model_options(p: argparse.ArgumentParser, *, judge: bool = False) -> None:
    who = "the judge's" if judge else "the generation"
    p.add_argument("--settings", type=Path, metavar="FILE", help=f"{who} model settings as JSON (provider, model, "
                   "max_tokens, ...; default: claude-sonnet-5, 4096 output tokens)")  # fmt: skip
    p.add_argument("--model", metavar="NAME", help="the model's name, over the settings")
    add_base_url_option(p, "judge" if judge else "tasks", "the judge's" if judge else "the generation")
    p.add_argument("--cache", type=Path, default=DEFAULT_CACHE, metavar="DIR",
                   help=f"the response cache, by request hash (default: {DEFAULT_CACHE})")  # fmt: skip


def _settings(args: argparse.Namespace, default: Any = None) -> Any:
    from capreplay.llm.messages import ModelSettings
    from capreplay.util.files import read_model

    if args.settings is not None:
        settings = read_model(args.settings, ModelSettings, invalid="invalid model settings")
    else:
        settings = default or ModelSettings.model_validate(DEFAULT_MODEL)
    return settings.model_copy(update={"model": args.model}) if args.model else settings


def _client(settings: Any, key: str | None, cache: Path) -> Any:
    from capreplay.llm import make_client

    return make_client(settings, cache_dir=cache, api_key=key)


def _run_with_client[T](
    args: argparse.Namespace, body: Callable[[Any, Any], Awaitable[T]], *, default: Any = None
) -> T:
    """Run ``body(settings, client)`` and close the client, whatever happens; ``default``: settings unless given."""
    settings, key = model_access(args, "tasks", _settings(args, default))
    client = _client(settings, key, args.cache)

    async def go() -> T:
        try:
            return await body(settings, client)
        finally:
            await client.aclose()

    return asyncio.run(go())


def _print_rejections(rejected: list[Any]) -> None:
    for rejection in rejected:
        print(f"  rejected {rejection.candidate} ({rejection.stage}): {rejection.reason}")


# ---------------------------------------------------------------------------------------------- cards, workflows


def run_cards(args: argparse.Namespace) -> int:
    from capreplay.errors import UsageError
    from capreplay.tasks.cards import write_cards

    refuse_overwrite_parent(args.out)
    if args.explore:
        from capreplay.tasks.cards.explore import write_explored_cards

        if args.page:
            raise UsageError("--page chooses crawled pages for a model to read; with --explore, choose --site")
        # The agent calls its model itself, through the caching proxy: no client of the stage's own is made.
        settings, _ = model_access(args, "agent", _settings(args))
        cards = asyncio.run(write_explored_cards(args.snapshot, args.out, settings, args.cache, sites=args.site))
    else:
        if args.site:
            raise UsageError("--site chooses the sites the agent explores: it needs --explore")
        cards = _run_with_client(args, lambda settings, client: write_cards(
            args.snapshot, args.out, client, settings, pages=args.page))  # fmt: skip
    items = sum(len(c.execution_items) + len(c.perception_items) for c in cards.cards)
    print(f"{len(cards.cards)} site cards, {items} items kept, {len(cards.dropped)} dropped; wrote {args.out}")
    for dropped in cards.dropped:
        print(f"  dropped on {dropped.page}: {dropped.reason}")
    if args.explore:
        from capreplay.tasks.cards.explore import explore_run_dir

        print(f"the agent's steps and screenshots are in {explore_run_dir(args.out)}")
    return 0


def refuse_overwrite_parent(out: Path) -> None:
    """An InputError when the output file's folder does not exist (nothing has been done yet)."""
    if not out.parent.is_dir():
        raise InputError("cannot write here: no such folder", out.parent)


def run_propose(args: argparse.Namespace) -> int:
    from capreplay.tasks.workflows import write_proposals

    refuse_overwrite_parent(args.out)
    proposals = _run_with_client(
        args, lambda settings, client: write_proposals(args.cards, args.out, client, settings, per_call=args.per_call)
    )
    refused = [p for p in proposals.proposals if p.rejected is not None]
    print(f"{len(proposals.affinities)} site pairs rated, {len(proposals.proposals)} proposals "
          f"({len(refused)} rejected by review), {len(proposals.rejected)} unusable; wrote {args.out}")  # fmt: skip
    for proposal in refused:
        check = proposal.rejected
        assert check is not None
        print(f"  rejected {proposal.id} by the {check.by}: {check.reason}")
    _print_rejections(proposals.rejected)
    return 0


def _batch_summary(info: Any, out: Path) -> int:
    rejected = ", ".join(f"{n} at {stage}" for stage, n in info.rejected.items()) or "none"
    print(f"batch {info.batch}: {info.candidates} candidates, {len(info.proven)} proven, rejected {rejected}; "
          f"proof {info.proof_s:.1f} s")  # fmt: skip
    from capreplay.tasks.generation import Rejection

    lines = (out / "rejected.jsonl").read_text(encoding="utf-8").splitlines()
    _print_rejections([Rejection.model_validate_json(line) for line in lines if line.strip()])
    if info.proven:
        print(f"tasks in {out / 'tasks.json'}; review them: capreplay tasks review {out}")
    return 0 if info.proven else 1


def run_instantiate(args: argparse.Namespace) -> int:
    from capreplay.tasks.batch import claim_folder
    from capreplay.tasks.workflows import instantiate_batch

    inputs = instantiate_inputs(args.proposals, args.cards, args.snapshot)
    claim_folder(args.out)
    info = _run_with_client(args, lambda settings, client: instantiate_batch(
        *inputs, args.snapshot, args.out, client, settings))  # fmt: skip
    return _batch_summary(info, args.out)


def instantiate_inputs(proposals_path: Path, cards_path: Path, snapshot: Path) -> tuple[Any, Any]:
    """The proposals and cards files, checked to be of ``snapshot`` and of each other (InputError otherwise)."""
    from capreplay.archive.snapshot.manifest import load_manifest
    from capreplay.tasks.batch import file_sha256
    from capreplay.tasks.generation import CardsFile, ProposalsFile
    from capreplay.util.files import read_model

    cards = read_model(cards_path, CardsFile, invalid="not a cards file")
    proposals = read_model(proposals_path, ProposalsFile, invalid="not a proposals file")
    snapshot_id = load_manifest(snapshot).snapshot_id
    if cards.made.snapshot_id != snapshot_id:
        raise InputError(f"describes snapshot {cards.made.snapshot_id[:12]}, not {snapshot} ({snapshot_id[:12]})",
                         cards_path)  # fmt: skip
    if proposals.cards_sha256 != file_sha256(cards_path):
        raise InputError(f"was proposed from other cards than {cards_path}", proposals_path)
    return proposals, cards


def run_multihop(args: argparse.Namespace) -> int:
    from capreplay.errors import UsageError
    from capreplay.llm import EmbeddingSettings, make_embedder
    from capreplay.tasks.batch import claim_folder
    from capreplay.tasks.multihop import multihop_batch
    from capreplay.tasks.multihop.embed import EmbeddingRetrieval
    from capreplay.tasks.snapshot_pages import open_snapshot, require_graph

    embedder = None
    if args.retrieval == "embeddings":
        base_url = args.embedding_base_url or os.environ.get("OPENAI_BASE_URL")
        if not args.embedding_model or not base_url:
            raise UsageError("--retrieval embeddings needs --embedding-model and --embedding-base-url "
                             "(or OPENAI_BASE_URL)")  # fmt: skip
        # the embeddings endpoint gets OPENAI_API_KEY only, never the generation model's key
        embedder = make_embedder(EmbeddingSettings(model=args.embedding_model, base_url=base_url), cache_dir=args.cache)
    elif args.embedding_model or args.embedding_base_url:
        raise UsageError("--embedding-model and --embedding-base-url are for --retrieval embeddings")
    view = open_snapshot(args.snapshot)
    require_graph(view)
    claim_folder(args.out)

    async def run(settings: Any, client: Any) -> Any:
        try:
            return await multihop_batch(
                view, args.out, client, settings, count=args.count, seed=args.seed, start=args.start,
                pairs=args.pair, retriever=EmbeddingRetrieval(embedder) if embedder is not None else None)  # fmt: skip
        finally:
            if embedder is not None:
                await embedder.aclose()

    info = _run_with_client(args, run)
    return _batch_summary(info, args.out)


# ---------------------------------------------------------------------------------------------- check, review


def run_check(args: argparse.Namespace) -> int:
    import tempfile

    from capreplay.errors import UsageError
    from capreplay.runs.tasks_file import load_tasks_file
    from capreplay.tasks.proof import prove_tasks

    tasks = load_tasks_file(args.tasks)
    if tasks.workflows is None:
        raise InputError("has no 'workflows' section: no tasks to prove", args.tasks)
    workflows = tasks.workflows
    if args.task:
        unknown = [t for t in args.task if t not in {w.id for w in workflows.tasks}]
        if unknown:
            raise UsageError(f"no workflow task {unknown[0]!r} in {args.tasks}")
        workflows = workflows.model_copy(update={"tasks": [t for t in workflows.tasks if t.id in args.task]})
    snapshot = args.snapshot or tasks.snapshot_path(workflows.snapshot, args.tasks)
    from capreplay.judge.run_verdicts import judge_client

    settings, key = model_access(args, "judge", _settings(args, workflows.judge.model))
    # The judge's client, as `capreplay judge` makes it: without a key, only answers that need no model call
    # can be scored, and a task whose rubric needs one is rejected with that reason.
    client = judge_client(settings, key, args.cache)

    async def prove(work: Path) -> Any:
        try:
            return await prove_tasks(snapshot, workflows, work, client)
        finally:
            if client is not None:
                await client.aclose()

    with tempfile.TemporaryDirectory(prefix="capreplay-proof-") as scratch:
        proofs = asyncio.run(prove(args.work or Path(scratch)))
    for proof in proofs:
        if args.json:
            print(proof.model_dump_json())
        else:
            print(f"{proof.task}: {'proven' if proof.passed else 'rejected: ' + proof.reason}")
    failed = sum(not p.passed for p in proofs)
    if not args.json:
        print(f"{len(proofs) - failed} of {len(proofs)} tasks proven on {snapshot}", file=sys.stderr)
    return 1 if failed else 0


def run_review(args: argparse.Namespace) -> int:
    from capreplay.tasks.review import write_sheet

    out = args.out or args.batch / "review.md"
    written = write_sheet(args.batch, out)
    print(f"wrote {out} ({written} tasks to review)")
    return 0


def run_accept(args: argparse.Namespace) -> int:
    from capreplay.tasks.review import accept_sheet

    summary = accept_sheet(args.sheet, args.into)
    print(f"accepted {len(summary.accepted)}, rejected {len(summary.rejected)}, undecided {len(summary.undecided)}; "
          f"merged into {args.into}")  # fmt: skip
    return 0


def run_agreement(args: argparse.Namespace) -> int:
    from capreplay.tasks.review import sheet_agreement

    report = sheet_agreement(*args.sheets)
    print(json.dumps(report.model_dump(mode="json")) if args.json else report.table())
    return 0


def run_report(args: argparse.Namespace) -> int:
    from capreplay.tasks.coverage import coverage_report, coverage_table

    report = coverage_report(args.batches, cards=args.cards, proposals=args.proposals, accepted=args.accepted)
    print(json.dumps(report.model_dump(mode="json")) if args.json else coverage_table(report), end="\n")
    return 0
