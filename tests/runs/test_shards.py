"""Cutting a run's plan into shards: disjoint slices that cover the plan, the same every time, balanced."""

from __future__ import annotations

from collections import Counter

import pytest

from capreplay.agents.run import plan_episodes
from capreplay.models.episode import SHARD_RULE, ShardInfo
from capreplay.runs.shards import parse_shard, plan_sha256, shard_run_id, shard_slice, sharded, whole
from tests.support.shards import AGENTS, TASKS, whole_run

PLANS = [(7, 1, TASKS[:2], ["gold"]), (7, 3, TASKS, AGENTS), (12345, 4, TASKS[:3], ["gold"]), (0, 1, TASKS, AGENTS)]


@pytest.mark.parametrize(("seed", "repeats", "tasks", "agents"), PLANS)
@pytest.mark.parametrize("count", [1, 2, 3, 4, 7, 8, 40])
def test_the_slices_are_disjoint_cover_the_plan_and_balance(
    seed: int, repeats: int, tasks: list[str], agents: list[str], count: int
) -> None:
    plan = plan_episodes(seed, repeats, tasks, agents)
    assert len(plan) == repeats * len(tasks) * len(agents)
    slices = [shard_slice(plan, i, count) for i in range(count)]
    every = Counter(k for s in slices for k in s)
    assert set(every) == set(plan) and set(every.values()) == {1}  # each planned episode in exactly one slice
    sizes = [len(s) for s in slices]
    assert max(sizes) - min(sizes) <= 1 and sum(sizes) == len(plan)
    # each slice keeps the plan's order
    for s in slices:
        assert s == sorted(s, key=plan.index)
    # the same seed gives the same slices; another seed another cut of the same episodes
    again = plan_episodes(seed, repeats, tasks, agents)
    assert [shard_slice(again, i, count) for i in range(count)] == slices


def test_the_rule_is_round_robin_over_the_seeded_plan_order() -> None:
    plan = plan_episodes(7, 2, TASKS, ["gold"])
    assert shard_slice(plan, 1, 3) == [plan[1], plan[4], plan[7]]
    assert shard_slice(plan, 0, 1) == plan
    # the seed orders the plan, so another seed cuts it otherwise
    other = plan_episodes(8, 2, TASKS, ["gold"])
    assert shard_slice(other, 0, 2) != shard_slice(plan, 0, 2)


def test_a_one_repeat_plan_gives_each_shard_different_tasks() -> None:
    plan = plan_episodes(7, 1, TASKS, ["gold"])
    tasks = [{k.task for k in shard_slice(plan, i, 2)} for i in range(2)]
    assert tasks[0].isdisjoint(tasks[1]) and tasks[0] | tasks[1] == set(TASKS)


def test_a_shard_run_records_its_slice_and_the_whole_plan() -> None:
    info = whole_run("exp")
    shard = sharded(info, 2, 3)
    assert shard.run_id == "exp.shard-2-of-3" == shard_run_id("exp", 2, 3)
    assert shard.planned == shard_slice(info.planned, 2, 3)
    assert shard.shard == ShardInfo(index=2, count=3, run_id="exp", rule=SHARD_RULE,
                                    plan_sha256=plan_sha256(info.planned), plan=info.planned)  # fmt: skip
    assert whole(shard, "exp") == info
    # the shard's run.json reads back (the model validates it) and differs from every other shard's
    assert type(shard).model_validate_json(shard.model_dump_json()) == shard
    assert sharded(info, 1, 3).planned != shard.planned


def test_the_plan_digest_changes_with_the_plan() -> None:
    plan = plan_episodes(7, 2, TASKS, AGENTS)
    assert plan_sha256(plan) == plan_sha256(list(plan)) and len(plan_sha256(plan)) == 64
    assert plan_sha256(plan) != plan_sha256(plan_episodes(8, 2, TASKS, AGENTS))
    assert plan_sha256(plan) != plan_sha256(plan[::-1])


@pytest.mark.parametrize(("text", "expected"), [("0/1", (0, 1)), ("0/8", (0, 8)), ("7/8", (7, 8)), ("12/40", (12, 40))])
def test_shard_options_count_from_zero(text: str, expected: tuple[int, int]) -> None:
    assert parse_shard(text) == expected


@pytest.mark.parametrize(("text", "says"), [("8/8", "does not exist"), ("1/1", "does not exist"),
                                            ("-1/8", "0 <= I < N"), ("0/0", "0 <= I < N"), ("3", "I/N"),
                                            ("a/b", "I/N"), ("", "I/N"), ("1/2/3", "I/N")])  # fmt: skip
def test_bad_shard_options_say_what_is_wrong(text: str, says: str) -> None:
    with pytest.raises(ValueError, match=says):
        parse_shard(text)


def test_a_shard_index_at_or_above_the_count_is_not_a_shard() -> None:
    with pytest.raises(ValueError, match="not below the count"):
        ShardInfo(index=2, count=2, run_id="x", plan_sha256="0" * 64, plan=[])
    with pytest.raises(ValueError):
        shard_slice([1, 2], 2, 2)
