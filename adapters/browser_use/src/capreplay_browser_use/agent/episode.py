"""One episode: browser-use's own ``Agent`` on the harness's browser, from the ``start`` line to the answer.

The agent is browser-use's, with browser-use's defaults, except where the episode needs otherwise:
- it attaches to the harness's browser (``BrowserSession(cdp_url=...)``, the connection ``Agent.run`` makes
  itself) and works in the harness's tab, the one showing the start URL; it never launches or closes a browser;
- it does not open a URL it finds in the task (``directly_open_url=False``): the tab already shows it;
- it leaves the tabs' viewport as the harness set it (``no_viewport=True``);
- no judge (``use_judge=False``): judging is capreplay's job, and browser-use's judge is one more model call;
- no signal handler: browser-use's pauses on Ctrl+C and waits for Enter on a terminal the harness does not have;
- it grants the browser no permissions (``permissions=[]``; browser-use grants clipboard access by default);
- about:blank tabs get no "loading" animation: it fetches browser-use's logo from its CDN, a request the
  offline browser must not make.

browser-use's files (downloads, the agent's file system, screenshots) go to its temporary folders, which the
entry point (``__main__``) keeps in one folder of its own and removes at exit.
"""

from __future__ import annotations

import asyncio
import logging
import os
from typing import Any

from browser_use import Agent, BrowserSession
from browser_use.agent.views import AgentHistoryList
from browser_use.browser.events import SwitchTabEvent
from browser_use.browser.watchdogs.aboutblank_watchdog import AboutBlankWatchdog

from capreplay_browser_use.agent.harness import Harness, Outbox, ProtocolError
from capreplay_browser_use.agent.messages import AgentUsage, Answer, Start
from capreplay_browser_use.agent.settings import agent_options, chat_model, model_settings, task_text
from capreplay_browser_use.agent.steps import ReportingTools, StepReporter

log = logging.getLogger("capreplay_browser_use.agent")

STOP_GRACE_S = 5.0
"""After a ``stop``, how long the agent may take to finish its step (a model call in flight) before it is
cancelled."""


class AttachError(Exception):
    """The agent cannot connect to the harness's browser."""


class AgentGaveUp(Exception):
    """browser-use stopped after too many failed steps in a row (the model or the actions kept failing)."""


async def _no_animation(self: AboutBlankWatchdog) -> None:
    """Stands in for ``AboutBlankWatchdog._show_dvd_screensaver_on_about_blank_tabs``."""


# The watchdog's other duty, keeping one tab open when the last one closes, stays.
AboutBlankWatchdog._show_dvd_screensaver_on_about_blank_tabs = _no_animation  # type: ignore[method-assign]


async def attach(session: BrowserSession, start_url: str) -> None:
    """Connect to the harness's browser and focus its tab showing ``start_url`` (if several tabs are open)."""
    try:
        await session.start()
    except Exception as e:
        # Whatever start() raises (HTTP, WebSocket, timeout errors) means the same to the harness: that URL is
        # not a browser's CDP endpoint the agent can reach.
        raise AttachError(f"cannot attach to {session.cdp_url}: {type(e).__name__}: {e}") from e
    assert session.session_manager is not None  # set by start()
    pages = session.session_manager.get_all_page_targets()
    tab = next((page for page in pages if page.url == start_url), None)
    if tab is None:
        log.warning("no tab shows %s; the agent starts in browser-use's choice of %d tab(s)", start_url, len(pages))
    elif tab.target_id != session.agent_focus_target_id:
        await session.event_bus.dispatch(SwitchTabEvent(target_id=tab.target_id))


def _gave_up(agent: Agent[Any, Any], history: AgentHistoryList[Any]) -> bool:
    limit = agent.settings.max_failures + int(agent.settings.final_response_after_failure)
    return not history.is_done() and agent.state.consecutive_failures >= limit


def _last_error(history: AgentHistoryList[Any]) -> str:
    errors = [error for error in history.errors() if error]
    lines = errors[-1].strip().splitlines() if errors else []
    return lines[0] if lines else "no error recorded"


async def _run(agent: Agent[Any, Any], harness: Harness, max_steps: int) -> AgentHistoryList[Any]:
    """Run the agent until it is done, at its step limit, or stopped by the harness (then within the grace)."""
    run = asyncio.ensure_future(agent.run(max_steps=max_steps))
    stopped = asyncio.ensure_future(harness.stopped.wait())
    try:
        await asyncio.wait({run, stopped}, return_when=asyncio.FIRST_COMPLETED)
        if not run.done():
            agent.stop()
            await asyncio.wait({run}, timeout=STOP_GRACE_S)
        if not run.done():
            log.warning("the agent did not stop within %.0f s: cancelling its step", STOP_GRACE_S)
            run.cancel()
            await asyncio.wait({run})
    finally:
        stopped.cancel()
        if not run.done():  # this task itself was cancelled
            run.cancel()
    return agent.history if run.cancelled() else run.result()


async def run_episode(start: Start, harness: Harness, outbox: Outbox) -> Answer:
    """Run browser-use's agent on the task of ``start``, reporting its steps; its answer and usage."""
    settings = model_settings(start.model)
    llm = chat_model(settings, os.environ)
    reporter = StepReporter(harness, outbox)
    session = BrowserSession(
        cdp_url=start.cdp_url,
        permissions=[],
        # The tabs keep the harness's viewport. browser-use's default depends on the machine: with no display
        # it forces every tab to the screen size it assumes (1920x1080), with one it leaves them be.
        headless=False,
        no_viewport=True,
    )
    agent = Agent(
        task=task_text(start.task),
        llm=llm,
        browser_session=session,
        tools=ReportingTools(reporter),
        register_new_step_callback=reporter.on_model_output,
        use_judge=False,
        directly_open_url=False,
        enable_signal_handler=False,
        **agent_options(settings),
    )
    reporter.stop_agent = agent.stop
    try:
        await attach(session, start.start_url)
    except BaseException:
        # Agent.run would have closed the session at its end (its connection and event bus only: a browser it
        # did not launch is never killed); left open, the bus's tasks would keep the process from exiting.
        await agent.close()  # type: ignore[no-untyped-call]  # browser-use leaves it unannotated
        raise
    history = await _run(agent, harness, start.step_limit)
    usage = await agent.token_cost_service.get_usage_summary()
    if harness.failure is not None:
        raise ProtocolError(harness.failure)
    if not harness.stopped.is_set() and _gave_up(agent, history):
        raise AgentGaveUp(
            f"browser-use gave up after {agent.state.consecutive_failures} failed steps in a row: "
            f"{_last_error(history)}"
        )
    return Answer(
        text=(history.final_result() or "") if history.is_done() else "",
        usage=AgentUsage(
            # Every input token the model read: browser-use counts cache reads in, cache writes apart.
            input_tokens=usage.total_prompt_tokens + usage.total_prompt_cache_creation_tokens,
            output_tokens=usage.total_completion_tokens,
            calls=usage.entry_count,
            model=settings.model,
        ),
    )
