"""Running a BrowserGym agent through an episode, as an AgentLab-style loop does."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import gymnasium as gym
from capreplay.archive.snapshot.manifest import load_manifest

from capreplay_browsergym.gold import GoldPathAgent

MAX_STEPS = 40

Observation = dict[str, Any]


def run_episode(
    env: gym.Env[Any, Any], agent: GoldPathAgent, answer: Callable[[dict[str, Any]], str] | None = None
) -> tuple[float, dict[str, Any], list[str]]:
    """Reset, then step with the agent's actions until the episode ends; the reward, the last info and the actions
    that follow the gold path (without the agent's waits and retries after BrowserGym's 500 ms action timeouts).

    ``answer``: replaces the agent's own answer (built from the outputs it read) with another text.
    """
    obs, _ = env.reset()
    actions: list[str] = []
    for _ in range(MAX_STEPS):
        action, agent_info = agent.get_action(obs)
        if agent.done and answer is not None:
            action = f"send_msg_to_user({answer(dict(agent.outputs))!r})"
        if "retry" not in agent_info and "waiting" not in agent_info:
            actions.append(action)
        obs, reward, terminated, truncated, info = env.step(action)
        error = obs["last_action_error"]
        # An action that outlasted BrowserGym's 500 ms action timeout (a busy machine) is waited for or sent again
        # by the agent (see GoldPathAgent.get_action), and the reward says whether the episode still came out
        # right; any other error fails the episode.
        assert not error or error.startswith("TimeoutError:"), f"{action[:80]}: {error}"
        if terminated or truncated:
            return float(reward), info, actions
    raise AssertionError(f"the episode did not end in {MAX_STEPS} steps")


def changed(outputs: dict[str, Any], **values: Any) -> str:
    """The outputs with some values changed, as the JSON answer the gold agent gives."""
    return json.dumps({**outputs, **values}, ensure_ascii=False)


def snapshot_hosts(snapshot: Any) -> set[str]:
    """The hosts the snapshot's manifest lists."""
    return set(load_manifest(snapshot).hosts)


def hosts_of(requests: list[dict[str, Any]]) -> set[str]:
    """The hosts of recorded requests."""
    return {urlsplit(r["url"]).hostname or "" for r in requests}
