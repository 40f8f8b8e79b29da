"""Each action browser-use's agent takes, reported to the harness as a ``step`` and held until it is acked.

browser-use runs up to ``max_actions_per_step`` actions per model call, all through ``Tools.act``, so the
report hooks in there (a ``Tools`` subclass, given to the ``Agent`` as its tools): each action gets its own
step line, with the URL its tab shows once that action is done, and the next action waits for the ack, so the
harness's screenshot of a step shows the page that action left. The step callbacks of ``Agent.run`` come too
late for that (after every action of a model call) and ``register_new_step_callback`` too early (before any);
the latter is used only to learn the model's stated goal for the actions that follow.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from browser_use import BrowserSession, Tools
from browser_use.agent.views import ActionResult, AgentOutput
from browser_use.browser.views import BrowserStateSummary
from browser_use.filesystem.file_system import FileSystem
from browser_use.llm.base import BaseChatModel
from browser_use.tools.registry.views import ActionModel

from capreplay_browser_use.agent.harness import Harness, Outbox
from capreplay_browser_use.agent.messages import Step, StepAction


def describe(action: ActionModel) -> StepAction:
    """An action as the protocol names it: browser-use's action name and the arguments the model gave."""
    data: dict[str, Any] = action.model_dump(mode="json", exclude_unset=True)
    if len(data) != 1:
        # browser-use's action models carry exactly one set action; anything else is not an action it runs.
        raise ValueError(f"an action model must name exactly one action, got {sorted(data)}")
    name, args = next(iter(data.items()))
    return StepAction(name=name, args=args if isinstance(args, dict) else {})


class StepReporter:
    """Numbers the actions, sends them to the harness and waits for each ack."""

    def __init__(self, harness: Harness, outbox: Outbox) -> None:
        self.harness = harness
        self.outbox = outbox
        self.sent = 0
        self.thought: str | None = None
        """The model's stated next goal (or its thinking) for the actions of the current model call."""
        self.stop_agent: Callable[[], None] = lambda: None
        """Called when the harness stops the episode while a step waits for its ack (``Agent.stop``)."""

    def on_model_output(self, state: BrowserStateSummary, output: AgentOutput, step: int) -> None:
        """browser-use's ``register_new_step_callback``: the model answered; its actions follow."""
        self.thought = output.next_goal or output.thinking or None

    async def report(self, action: ActionModel, url: str) -> None:
        """Send one step and wait for its ack, or for the harness to stop the episode."""
        if not self.harness.stopped.is_set():
            self.sent += 1
            self.outbox.send(Step(n=self.sent, action=describe(action), url=url, thought=self.thought))
            if await self.harness.acked(self.sent):
                return
        # Not an exception: the action is done and its result (a `done` answer above all) must reach the
        # history. A stopped agent runs no further action: browser-use checks before each one.
        self.stop_agent()


class ReportingTools(Tools[Any]):
    """browser-use's default tools, each action reported as a step once it is done."""

    def __init__(self, reporter: StepReporter) -> None:
        super().__init__()
        self.reporter = reporter

    async def act(
        self,
        action: ActionModel,
        browser_session: BrowserSession,
        page_extraction_llm: BaseChatModel | None = None,
        sensitive_data: dict[str, str | dict[str, str]] | None = None,
        available_file_paths: list[str] | None = None,
        file_system: FileSystem | None = None,
        extraction_schema: dict[Any, Any] | None = None,
        action_timeout: float | None = None,
    ) -> ActionResult:
        """Run the action as browser-use does, then report it, whether it succeeded or failed."""
        try:
            result = await super().act(
                action, browser_session, page_extraction_llm, sensitive_data, available_file_paths, file_system,
                extraction_schema, action_timeout,
            )  # fmt: skip
        except Exception:
            await self.reporter.report(action, await browser_session.get_current_page_url())
            raise
        await self.reporter.report(action, await browser_session.get_current_page_url())
        return result
