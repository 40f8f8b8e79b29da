"""The pure parts: when an episode ends, the goal an agent is told, the step names, the merged launch arguments."""

from __future__ import annotations

from capreplay.models.workflow import Workflows

from capreplay_browsergym.env import launch_args
from capreplay_browsergym.records import End, action_name, episode_end, goal_text, off_snapshot

GREETING = {"role": "assistant", "timestamp": 1.0, "message": "Hi! I am your UI assistant, ..."}
GOAL = {"role": "user", "timestamp": 2.0, "message": "Find the bag."}


def test_the_greeting_before_the_goal_is_no_answer() -> None:
    assert episode_end([]) is None
    assert episode_end([GREETING]) is None
    assert episode_end([GREETING, GOAL]) is None


def test_the_agents_message_after_the_goal_ends_the_episode() -> None:
    answer = {"role": "assistant", "timestamp": 3.0, "message": '{"bag_name": "Cinder"}'}
    assert episode_end([GREETING, GOAL, answer]) == End("answered", '{"bag_name": "Cinder"}')
    infeasible = {"role": "infeasible", "timestamp": 3.0, "message": "no such bag"}
    assert episode_end([GREETING, GOAL, infeasible]) == End("infeasible", "no such bag")


def test_a_user_message_after_the_answer_goes_on() -> None:
    answer = {"role": "assistant", "timestamp": 3.0, "message": "Which size?"}
    reply = {"role": "user", "timestamp": 4.0, "message": "Large."}
    assert episode_end([GREETING, GOAL, answer, reply]) is None


def test_the_goal_tells_the_outputs_and_nothing_of_the_rubric(workflows: Workflows) -> None:
    task = workflows.task("cold-bag-delivery")
    goal = goal_text(task)
    assert goal.startswith(task.description)
    for output in task.outputs:
        assert f"- {output.name} ({output.type}): {output.description}" in goal
    # The rubric's values and the gold path's selectors stay with the judge.
    assert "Cinder" not in goal and "189" not in goal and "#delivery-days" not in goal


def test_action_names() -> None:
    assert action_name("click('a12')") == "click"
    assert action_name('  send_msg_to_user("done")\nnoop()') == "send_msg_to_user"
    assert action_name("") == "python"


def test_capreplay_flags_first_and_browsergyms_disable_features_left_out() -> None:
    ours = ["--host-resolver-rules=MAP www.a.test:443 127.0.0.1:1, MAP * ~NOTFOUND", "--hide-scrollbars"]
    theirs = ["--window-size=1280,800", "--disable-features=OverlayScrollbars,ExtendedOverlayScrollbars"]
    assert launch_args(ours, theirs) == [*ours, "--window-size=1280,800"]
    assert launch_args(ours, ["--hide-scrollbars"]) == ours


def test_the_off_snapshot_pattern_leaves_the_snapshots_hosts_alone() -> None:
    pattern = off_snapshot(["www.shop.test", "shop.test", "cdn.shop.test"])
    for url in ("https://www.shop.test/", "http://shop.test:8080/a?b", "HTTPS://CDN.SHOP.TEST/x.js", "wss://shop.test"):
        assert not pattern.search(url), url
    for url in ("https://www.example.com/", "https://shop.test.evil.example/", "http://127.0.0.1:9/", "ws://x.test/"):
        assert pattern.search(url), url
    # Not a request to a host at all.
    assert not pattern.search("data:text/plain,hi") and not pattern.search("about:blank")
