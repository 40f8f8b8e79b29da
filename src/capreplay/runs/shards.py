"""Array jobs without Ray: a run's plan cut into N disjoint slices, one per shard. Pure functions, no I/O.

``capreplay run --shard I/N`` runs slice I of N of the run's plan into a run folder of its own; ``capreplay
run merge`` joins the N folders into one run (:mod:`capreplay.runs.merge`). The rule
(:data:`capreplay.models.episode.SHARD_RULE`) is round robin over the plan order: episode ``k`` of the plan
(counted from 0) belongs to shard ``k mod N``. The plan order is already seeded (the tasks in a seeded random
order per repeat), so the same seed, tasks, agents and repeats always give the same slices; the N slices are
disjoint, together they are the plan, and their sizes differ by at most one. With more shards than episodes
some slices are empty: such a shard records nothing and still merges.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence

from capreplay.errors import UsageError
from capreplay.models.episode import AgentRunInfo, EpisodeKey, ShardInfo

SHARD_SUFFIX = ".shard-{index}-of-{count}"
"""A shard's run id is the whole run's id and this (``gold.shard-0-of-8``)."""


def parse_shard(text: str) -> tuple[int, int]:
    """``I/N`` as ``(I, N)`` with ``0 <= I < N``; anything else is a ``ValueError`` saying what is wrong."""
    index_text, slash, count_text = text.partition("/")
    try:
        index, count = int(index_text), int(count_text)
    except ValueError:
        index, count = -1, 0
    if not slash or count < 1 or index < 0:
        raise ValueError(f"must be I/N with whole numbers 0 <= I < N (e.g. 0/8), not {text!r}")
    if index >= count:
        raise ValueError(f"shard {index} of {count} does not exist: I counts from 0 to N-1 ({count - 1}), not {text!r}")
    return index, count


def shard_slice[K](plan: Sequence[K], index: int, count: int) -> list[K]:
    """The episodes of shard ``index`` of ``count``: every ``count``-th one of ``plan``, from the ``index``-th."""
    if not 0 <= index < count:
        raise ValueError(f"no shard {index} of {count}")
    return list(plan[index::count])


def plan_sha256(plan: Sequence[EpisodeKey]) -> str:
    """sha256 of the plan's canonical JSON (sorted keys, no spaces): equal plans, equal digests."""
    data = json.dumps([k.model_dump() for k in plan], sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(data.encode("utf-8")).hexdigest()


def shard_run_id(run_id: str, index: int, count: int) -> str:
    """The run id of shard ``index`` of ``count`` of run ``run_id``."""
    return run_id + SHARD_SUFFIX.format(index=index, count=count)


def sharded(info: AgentRunInfo, index: int, count: int) -> AgentRunInfo:
    """The plan of shard ``index`` of ``count`` of the whole run ``info``: its own run id, its slice of the plan,
    and the whole plan kept in ``shard`` for the merge."""
    if info.shard is not None:
        raise ValueError(f"{info.run_id} is already a shard")
    run_id = shard_run_id(info.run_id, index, count)
    if len(run_id) > 128:
        raise UsageError(f"run id {info.run_id!r} is too long to name its shards (at most 128 characters with "
                         f"{SHARD_SUFFIX.format(index=index, count=count)!r})")  # fmt: skip
    shard = ShardInfo(
        index=index, count=count, run_id=info.run_id, plan_sha256=plan_sha256(info.planned), plan=list(info.planned)
    )
    planned = shard_slice(info.planned, index, count)
    return info.model_copy(update={"run_id": run_id, "planned": planned, "shard": shard})


def whole(info: AgentRunInfo, run_id: str) -> AgentRunInfo:
    """The whole, unsharded run a shard belongs to, named ``run_id``: the plan a run made in one piece has."""
    if info.shard is None:
        raise ValueError(f"{info.run_id} is not a shard")
    return info.model_copy(update={"run_id": run_id, "planned": list(info.shard.plan), "shard": None})
