"""``tasks multihop`` to a batch folder: the drafts that passed the filters, proven on the snapshot, then written."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from capreplay.llm.client import ModelClient
from capreplay.llm.messages import ModelSettings
from capreplay.tasks.batch import prove_and_write
from capreplay.tasks.generation import BatchInfo, Made, PagePair
from capreplay.tasks.meter import Meter
from capreplay.tasks.multihop.corpus import page_documents
from capreplay.tasks.multihop.embed import RetrieverMaker
from capreplay.tasks.multihop.generate import PROMPT_NAMES, draft_multihop, tasks_from_pairs
from capreplay.tasks.prompts import prompt_hashes
from capreplay.tasks.snapshot_pages import SnapshotView, require_graph


async def multihop_batch(
    view: SnapshotView, out: Path, client: ModelClient, settings: ModelSettings, *, count: int, seed: int = 0,
    start: str | None = None, pairs: Sequence[Sequence[str]] | None = None, retriever: RetrieverMaker | None = None,
) -> BatchInfo:  # fmt: skip
    """Draft ``count`` page pairs into tasks (or the ``pairs`` of seed and partner URLs given), filter them,
    prove the survivors and write the batch ``out`` (already claimed). The batch's cost is the retrieval,
    drafting and filtering calls; the proof's judge uses ``client``. ``retriever`` makes the retriever of the
    pairs once the pages are read (e.g. :class:`capreplay.tasks.multihop.embed.EmbeddingRetrieval`; default
    BM25), and its name is recorded among the batch's inputs; given pairs need no retrieval."""
    meter = Meter(client)
    inputs: dict[str, str] = {}
    if pairs:
        given = [PagePair(seed=seed_url, partner=partner, score=0.0) for seed_url, partner in pairs]
        drafts = await tasks_from_pairs(view, meter, given, start=start)
    else:
        chosen = None
        if retriever is not None:
            chosen = await retriever(page_documents(view, require_graph(view)), meter)
            inputs["retrieval"] = retriever.name
        drafts = await draft_multihop(view, meter, count=count, seed=seed, start=start, retriever=chosen)
    inputs |= {f"pair {n}": f"{p.seed} + {p.partner}" for n, p in enumerate(drafts.pairs, start=1)}
    made = Made(
        snapshot_id=view.snapshot_id,
        model=settings.output_settings(),
        prompts=prompt_hashes(*PROMPT_NAMES),
        cost=meter.cost(),
    )
    return await prove_and_write(
        out,
        generator="multihop",
        snapshot=view.root,
        made=made,
        settings=settings,
        candidates=drafts.tasks,
        rejected=drafts.rejected,
        judge_client=client,
        inputs=inputs,
    )
