"""Pure conversions between BrowserGym's world and capreplay's records: the goal, the answer, the steps.

BrowserGym keeps the conversation as chat messages (``{"role", "timestamp", "message"}``): the environment greets
(``assistant``), the goal follows (``user``), and the agent answers with ``send_msg_to_user(text)``, which adds an
``assistant`` message; ``report_infeasible(reason)`` adds an ``infeasible`` one. The episode ends at either.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from capreplay.agents.harness import agent_task
from capreplay.models.workflow import WorkflowTask

_CALL = re.compile(r"([A-Za-z_]\w*)\s*\(")


@dataclass(frozen=True)
class End:
    """How the agent ended the episode."""

    how: Literal["answered", "infeasible"]
    text: str
    """The answer sent to the user, or the reason the agent gave for calling the task infeasible."""


def goal_text(task: WorkflowTask) -> str:
    """The goal BrowserGym shows the agent: the task's description and the outputs its answer must give.

    These are what ``capreplay run`` tells every agent (:func:`capreplay.agents.harness.agent_task`): never the
    rubric, the gold path or the expected values.
    """
    told = agent_task(task)
    lines = [
        told.description,
        "",
        "Send your answer to the user when you are done. Give each of these outputs, as a JSON object with these",
        "keys or one `name: value` line each:",
    ]
    lines += [f"- {output.name} ({output.type}): {output.description}" for output in told.outputs]
    return "\n".join(lines)


def episode_end(chat_messages: Sequence[Mapping[str, Any]]) -> End | None:
    """The agent's answer (or its report that the task is infeasible), or None while the episode goes on.

    The episode ends when the last message is the agent's and comes after the goal (the first ``user`` message):
    BrowserGym's greeting, also an ``assistant`` message, comes before it.
    """
    roles = [str(m.get("role")) for m in chat_messages]
    if "user" not in roles or roles.index("user") == len(roles) - 1:
        return None
    last = chat_messages[-1]
    text = str(last.get("message", ""))
    if roles[-1] == "assistant":
        return End("answered", text)
    if roles[-1] == "infeasible":
        return End("infeasible", text)
    return None


def off_snapshot(hosts: Iterable[str]) -> re.Pattern[str]:
    """The http(s) and ws(s) URLs whose host is none of ``hosts`` (the hosts the snapshot's resolver rules map).

    Written so that JavaScript reads it as Python does: Playwright matches route patterns in its own process.
    """
    names = "|".join(re.escape(host) for host in sorted(set(hosts), key=lambda h: (-len(h), h)))
    return re.compile(rf"^(?:https?|wss?)://(?!(?:{names})(?::\d+)?(?:[/?#]|$))", re.IGNORECASE)


def action_name(action: str) -> str:
    """The name of the first function a high-level action calls (``click("a12")`` is ``click``), else ``python``."""
    found = _CALL.search(action)
    return found.group(1) if found else "python"
