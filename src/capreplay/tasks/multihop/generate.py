"""``tasks multihop``: GTA's multi-hop tasks drafted from a snapshot's pages and filtered, ready for the proof.

The pages become documents (:mod:`.corpus`), seeds and partners are retrieved and paired (:mod:`.pairs`),
each pair is drafted into a task (:mod:`.draft`) and filtered (:mod:`.filters`). Pairs are drafted one
after another, so a run asks its questions in one order and a list of scripted replies answers them in
that order. The proof on the replay comes after, in :mod:`capreplay.tasks.proof`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from capreplay.errors import InputError
from capreplay.models.workflow import WorkflowTask
from capreplay.tasks.generation import PagePair, Rejection
from capreplay.tasks.meter import Meter
from capreplay.tasks.multihop.corpus import page_documents
from capreplay.tasks.multihop.draft import draft_id, draft_pair
from capreplay.tasks.multihop.filters import filter_draft
from capreplay.tasks.multihop.pairs import BM25Retriever, Retriever, choose_pairs
from capreplay.tasks.snapshot_pages import SnapshotView, require_graph

PROMPT_NAMES = ("multihop", "multihop_review", "answer_from_pages")
"""The prompts the stage uses, for its record (:func:`capreplay.tasks.prompts.prompt_hashes`)."""


@dataclass(frozen=True)
class MultihopDrafts:
    """What the stage made: the tasks that passed the filters, every pair drafted, and every rejection."""

    tasks: list[WorkflowTask]
    pairs: list[PagePair]
    rejected: list[Rejection]


async def draft_multihop(
    view: SnapshotView, meter: Meter, *, count: int, seed: int = 0, start: str | None = None, top_k: int = 5,
    retriever: Retriever | None = None,
) -> MultihopDrafts:  # fmt: skip
    """Draft up to ``count`` multi-hop tasks from the snapshot: ``count`` pairs drafted, those that pass kept.

    ``seed`` fixes the pairs; ``start`` is where every gold path starts (default: the crawl seed of the seed
    page's site); ``retriever`` defaults to BM25 over the pages' text. An InputError when the snapshot has no
    crawl graph or ``start`` is not one of its pages.
    """
    graph = require_graph(view)
    if start is not None and view.page(start) is None:
        raise InputError(f"the start URL {start} is not a page of the snapshot", view.root)
    docs = page_documents(view, graph)
    pairs = choose_pairs(docs, retriever or BM25Retriever(docs), count=count, seed=seed, top_k=top_k)
    return await tasks_from_pairs(view, meter, pairs, start=start)


async def tasks_from_pairs(
    view: SnapshotView, meter: Meter, pairs: Sequence[PagePair], *, start: str | None = None
) -> MultihopDrafts:
    """Draft and filter a task for each of ``pairs`` (the ``n``-th one's id ends in ``-n``)."""
    graph = require_graph(view)
    docs = {doc.url: doc for doc in reversed(page_documents(view, graph))}
    tasks: list[WorkflowTask] = []
    rejected: list[Rejection] = []
    for n, pair in enumerate(pairs, start=1):
        drafted = await draft_pair(meter, pair, docs, graph, task_id=draft_id(pair, n), start=start)
        if isinstance(drafted, Rejection):
            rejected.append(drafted)
            continue
        refused = await filter_draft(meter, drafted)
        if refused is not None:
            rejected.append(refused)
        else:
            tasks.append(drafted.task)
    return MultihopDrafts(tasks=tasks, pairs=list(pairs), rejected=rejected)
