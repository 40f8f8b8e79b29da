"""Episodes on the committed world snapshot, through ``gym.make`` as AgentLab makes environments.

A scripted agent follows a task's gold path with BrowserGym's own high-level actions (the bids found in the
observation) and must get reward 1.0 on tasks of three flows; the same path with a wrong price gets the judge's
lower score, with exactly the price's leaves failed; a visit off the snapshot is refused and recorded as blocked.
Every request of a gold episode is answered from the snapshot. Real Chromium, real replay server, real judge.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest
from browsergym.core.action.highlevel import HighLevelActionSet
from capreplay.archive.snapshot.manifest import load_manifest
from capreplay.models.episode import EpisodeRecord
from capreplay.models.workflow import Workflows
from capreplay.runs.episode_log import read_episodes

import capreplay_browsergym
from capreplay_browsergym.gold import GoldPathAgent, unsupported
from support import changed, hosts_of, run_episode, snapshot_hosts

pytestmark = pytest.mark.browser

COLD_BAG = "cold-bag-delivery"  # sequential: paginate a review list, open a product's delivery tab
CHEAPEST = "review-page-cheapest"  # fan_in: a review list page, a shop listing sorted with a select menu
RAIN_TENT = "rain-tent"  # conditional: hover a point of a canvas chart (a coordinate action), a specs tab
WITH_COORDINATES = HighLevelActionSet(subsets=["chat", "infeas", "bid", "coord", "nav", "tab"])


@pytest.fixture(scope="module")
def registered(tasks_file: Path, world: Path) -> list[str]:
    return capreplay_browsergym.register(tasks_file, world)


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("results")


@pytest.fixture(scope="module")
def cold_bag(registered: list[str], results: Path) -> Iterator[Any]:
    """One environment for every episode of the cold-bag task, recording into ``results``."""
    env = gym.make(capreplay_browsergym.env_id(COLD_BAG), results_dir=results)
    yield env
    env.close()


def _on_snapshot(info: dict[str, Any], world: Path) -> None:
    requests = info["task_info"]["requests"]
    assert requests, "the episode made no request"
    assert {r["result"] for r in requests} <= {"hit", "fuzzy"}, [
        r for r in requests if r["result"] not in ("hit", "fuzzy")
    ]
    assert hosts_of(requests) <= snapshot_hosts(world)
    assert info["task_info"]["off_snapshot"] == []
    assert info["task_info"]["verdict"]["off_snapshot"] is False


def _gold_actions(actions: list[str]) -> list[str]:
    return [action.split("(")[0] for action in actions]


def _last_record(results: Path) -> EpisodeRecord:
    return read_episodes(results)[-1]


def test_the_gold_path_gets_reward_1(cold_bag: Any, workflows: Workflows, world: Path, results: Path) -> None:
    task = workflows.task(COLD_BAG)
    reward, info, actions = run_episode(cold_bag, GoldPathAgent(task))
    verdict = info["task_info"]["verdict"]
    assert reward == 1.0
    assert verdict["scored"] and verdict["score"] == 1.0 and verdict["passed"]
    assert verdict["fields"]["bag_name"] == "Cinder" and float(verdict["fields"]["bag_price"]) == 189
    assert _gold_actions(actions) == ["goto", "click", "goto", "click", "send_msg_to_user"]
    _on_snapshot(info, world)
    # Recorded as capreplay run records an episode: every action a step, every request with its result.
    record = _last_record(results)
    assert record.key.id() == info["task_info"]["episode"] == f"browsergym/{record.key.repeat}/{COLD_BAG}"
    assert record.status == "answered" and json.loads(record.answer or "")["bag_name"] == "Cinder"
    # Every action is a step, in order (with the agent's waits and retries, if any, between them).
    recorded = iter(step.args["action"] for step in record.steps)
    assert all(action in recorded for action in actions)
    assert record.steps[-1].args["action"] == actions[-1] and len(record.steps) >= len(actions)
    assert "https://www.trailverdict.test/reviews?page=3" in [step.url for step in record.steps]
    assert [r.model_dump(mode="json") for r in record.requests] == info["task_info"]["requests"]


def test_a_wrong_answer_gets_the_judges_lower_score(cold_bag: Any, workflows: Workflows, results: Path) -> None:
    task = workflows.task(COLD_BAG)
    reward, info, _ = run_episode(cold_bag, GoldPathAgent(task), answer=lambda out: changed(out, bag_price="1189"))
    verdict = info["task_info"]["verdict"]
    failed = {leaf["node"] for leaf in verdict["leaves"] if not leaf["passed"]}
    # The price is a non-critical leaf of 'shop' and so is its check on the cited page: 'shop' averages its four
    # non-critical leaves to 0.5, 'reviews' is 1, and the root averages the two.
    assert failed == {"price", "price-on-page"}
    assert reward == verdict["score"] == 0.75
    assert not verdict["passed"]
    assert _last_record(results).key.id() == info["task_info"]["episode"]


def test_a_page_off_the_snapshot_is_refused_and_recorded(cold_bag: Any, results: Path, world: Path) -> None:
    obs, _ = cold_bag.reset()
    # The page runs in capreplay's browser: the snapshot's frozen clock (capreplay's init script), its viewport.
    page = cold_bag.unwrapped.page
    frozen_ms = load_manifest(world).frozen_time.timestamp() * 1000
    assert 0 <= page.evaluate("Date.now()") - frozen_ms < 60_000
    assert page.viewport_size == {"width": 1280, "height": 800}
    obs, reward, terminated, _, info = cold_bag.step('goto("https://www.example.com/")')
    assert not terminated and reward == 0
    assert "ERR_BLOCKED_BY_CLIENT" in obs["last_action_error"]
    obs, reward, terminated, _, info = cold_bag.step('send_msg_to_user("I could not find it.")')
    assert terminated
    # The free-text answer needs the judge's model to be read, and no key is set: unscored, not failed.
    verdict = info["task_info"]["verdict"]
    assert math.isnan(reward) and not verdict["scored"] and "no judge key" in verdict["unscored"]
    blocked = [r for r in info["task_info"]["off_snapshot"] if r["result"] == "blocked"]
    assert [r["url"] for r in blocked] == ["https://www.example.com/"]
    assert verdict["off_snapshot"] is True
    record = _last_record(results)
    assert [r.url for r in record.off_snapshot] == ["https://www.example.com/"]


def test_the_results_folder_holds_each_episode_and_its_verdict(cold_bag: Any, results: Path) -> None:
    records = read_episodes(results)
    verdicts = [json.loads(line) for line in (results / "verdicts.jsonl").read_text().splitlines()]
    assert [v["episode"] for v in verdicts] == [r.key.id() for r in records]
    assert [r.key.repeat for r in records] == list(range(len(records)))


def test_a_fan_in_gold_path_with_a_select_menu(registered: list[str], workflows: Workflows, world: Path) -> None:
    task = workflows.task(CHEAPEST)
    assert task.flow == "fan_in"
    env = gym.make(capreplay_browsergym.env_id(CHEAPEST))
    try:
        reward, info, actions = run_episode(env, GoldPathAgent(task))
    finally:
        env.close()
    assert reward == 1.0
    assert "select_option" in _gold_actions(actions)
    assert info["task_info"]["verdict"]["fields"]["cheapest_tent"] == "Corrie 1"
    _on_snapshot(info, world)


def test_a_conditional_gold_path_with_a_coordinate_hover(
    registered: list[str], workflows: Workflows, world: Path
) -> None:
    task = workflows.task(RAIN_TENT)
    assert task.flow == "conditional"
    assert unsupported(task) and not unsupported(task, coordinates=True)
    env = gym.make(capreplay_browsergym.env_id(RAIN_TENT), action_mapping=WITH_COORDINATES.to_python_code)
    try:
        reward, info, actions = run_episode(env, GoldPathAgent(task, coordinates=True))
    finally:
        env.close()
    assert reward == 1.0
    assert "mouse_move" in _gold_actions(actions)
    assert float(info["task_info"]["verdict"]["fields"]["october_rainfall"]) == 171
    _on_snapshot(info, world)
