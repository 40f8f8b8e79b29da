"""The gold agent after BrowserGym's 500 ms action timeout: it waits once, then sends the action again only if the
page is as it was, and goes on if the input did reach the page (a busy machine)."""

from __future__ import annotations

from typing import Any

import pytest
from capreplay.models.workflow import Goto, Read, Workflows

from capreplay_browsergym.gold import NAVIGATION_WAIT_MS, RETRIES, GoldPathAgent

COLD_BAG = "cold-bag-delivery"
TIMEOUT = "TimeoutError: Locator.click: Timeout 500ms exceeded."
WAIT = f"noop({NAVIGATION_WAIT_MS!r})"


def _obs(url: str, text: str = "", error: str = "") -> dict[str, Any]:
    """An observation with only what the agent compares: the URL and the DOM (one string here)."""
    dom = {"documents": [{"nodes": {"nodeName": [0]}}], "strings": [text or "BODY"]}
    return {"url": url, "dom_object": dom, "last_action_error": error}


@pytest.fixture
def agent(workflows: Workflows) -> GoldPathAgent:
    """The task's first step (a goto) and its first read of the URL, then the answer: no DOM to look into."""
    task = workflows.task(COLD_BAG)
    read_url = next(s for s in task.gold_path if isinstance(s, Read) and s.source == "url")
    return GoldPathAgent(task.model_copy(update={"gold_path": [task.gold_path[0], read_url]}))


def _answered(action: str, url: str) -> bool:
    return action.startswith("send_msg_to_user(") and url in action


def _first_goto(agent: GoldPathAgent) -> str:
    step = agent.task.gold_path[0]
    assert isinstance(step, Goto)
    return f"goto({step.url!r})"


def test_an_action_that_timed_out_on_an_unchanged_page_is_sent_again_after_a_wait(agent: GoldPathAgent) -> None:
    start = agent.task.start_url
    action, _ = agent.get_action(_obs(start))
    assert action == _first_goto(agent)
    assert agent.get_action(_obs(start, error=TIMEOUT)) == (WAIT, {"step": 1, "waiting": "timeout"})
    assert agent.get_action(_obs(start)) == (action, {"step": 1, "retry": 1})


def test_an_action_that_timed_out_but_reached_the_page_is_not_sent_again(agent: GoldPathAgent) -> None:
    start = agent.task.start_url
    action, _ = agent.get_action(_obs(start))
    assert agent.get_action(_obs(start, error=TIMEOUT))[0] == WAIT
    goto = agent.task.gold_path[0]
    assert isinstance(goto, Goto)
    # The page changed during the wait: the agent goes on (reads the URL, answers).
    action, info = agent.get_action(_obs(goto.url, text="the review list"))
    assert _answered(action, goto.url) and "retry" not in info


def test_retries_are_bounded(agent: GoldPathAgent) -> None:
    start = agent.task.start_url
    action, _ = agent.get_action(_obs(start))
    for n in range(1, RETRIES + 1):
        assert agent.get_action(_obs(start, error=TIMEOUT))[0] == WAIT
        assert agent.get_action(_obs(start)) == (action, {"step": 1, "retry": n})
    assert agent.get_action(_obs(start, error=TIMEOUT))[0] == WAIT
    assert _answered(agent.get_action(_obs(start))[0], start)  # no more retries: on with the page as it is
