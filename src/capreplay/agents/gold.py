"""The gold agent: replays a task's gold path in the harness's browser and answers from the page.

``python -m capreplay.agents.gold --tasks tasks.json`` speaks the agent protocol
(:mod:`capreplay.agents.protocol`): it reads ``start``, attaches to the browser over CDP, runs the task's gold
path step by step (each step reported and acknowledged), reads every output from the page, and answers with
one JSON object of the outputs. It calls no model. Its answers are what a perfect agent would say on the
snapshot, so the judge must score every one of them 1.0.

With ``--settle harness`` it does not wait for the network after a step itself: the harness waits for the
replay server to say the browser is quiet before it records the step (see :mod:`capreplay.replay.quiet`), and
the next step starts only after that. By default (``--settle auto``) it does so when the harness says it settles
on the server's signal (``$CAPREPLAY_SETTLING`` is ``server-quiet``), and waits itself otherwise.

Everything that does not depend on the task (imports, the tasks file, Playwright's driver) is done before it
reads ``start``: the harness starts the agent while the browser launches, so that time is not the episode's.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from playwright.async_api import Page, async_playwright

from capreplay.agents.protocol import TO_AGENT, AgentFailed, Answer, Start, Step, StepAction, Stop, encode
from capreplay.browser.actions import run_action
from capreplay.browser.settle import Quiet, settle
from capreplay.errors import CapreplayError
from capreplay.models.episode import SETTLING_VARIABLE
from capreplay.models.workflow import GoldStep, Goto, Read

Outputs = dict[str, str | list[str]]


async def read_output(page: Page, step: Read) -> str | list[str]:
    """The value one ``read`` step reads from the page (a list for ``many``)."""
    if step.source == "url":
        return output_value(step, [page.url])
    assert step.selector is not None
    locator = page.locator(step.selector)
    if step.source == "attribute":
        assert step.attribute is not None
        raw = [await item.get_attribute(step.attribute) or "" for item in await locator.all()]
    else:
        raw = [await item.inner_text() for item in await locator.all()]
    if not raw:
        raise CapreplayError(f"reading {step.output!r}: nothing matches {step.selector!r}", page.url)
    return output_value(step, raw)


def output_value(step: Read, raw: list[str]) -> str | list[str]:
    """What a ``read`` step gives from the texts it found (at least one): whitespace collapsed, the first one (all
    for ``many``), each cut to its ``pattern``'s group. Pure: every reader of a gold path (this agent, BrowserGym's
    scripted one) reads values the same way."""
    values = [" ".join(v.split()) for v in (raw if step.many else raw[:1])]
    if step.pattern is not None:
        values = [_cut(step.pattern, v, step.output) for v in values]
    return values if step.many else values[0]


def _cut(pattern: str, value: str, output: str) -> str:
    found = re.search(pattern, value)
    if found is None:
        raise CapreplayError(f"reading {output!r}: {pattern!r} does not match {value!r}")
    return found.group(1) if found.groups() else found.group(0)


async def run_step(page: Page, step: GoldStep, outputs: Outputs, quiet: Quiet | None = None) -> None:
    """Run one gold step: navigate, act, or read into ``outputs``; ``quiet`` replaces the waits for the network
    (see :func:`capreplay.browser.settle.settle`)."""
    if isinstance(step, Goto):
        await page.goto(step.url, wait_until="load")
        await settle(page, quiet)
    elif isinstance(step, Read):
        outputs[step.output] = await read_output(page, step)
    else:
        await run_action(page, step, quiet)


def step_action(step: GoldStep) -> StepAction:
    """A gold step as the protocol names an action."""
    data = step.model_dump(mode="json", exclude_none=True)
    return StepAction(name=data.pop("type"), args=data)


# ---------------------------------------------------------------------------------------------- subprocess


class _Channel:
    """Protocol lines in from stdin (read in a thread) and out to stdout."""

    async def receive(self) -> Any:
        line = await asyncio.to_thread(sys.stdin.buffer.readline)
        if not line:
            raise EOFError("the harness closed the protocol stream")
        return TO_AGENT.validate_json(line)

    def send(self, message: Step | Answer | AgentFailed) -> None:
        sys.stdout.buffer.write(encode(message))
        sys.stdout.buffer.flush()


async def _left_to_harness(since: float) -> bool:
    """No wait here: the harness waits for the server's quiet signal before it records (and acknowledges) the
    step, and the next step waits for that acknowledgement."""
    return True


SETTLINGS: dict[str, Quiet | None] = {"network-idle": None, "harness": _left_to_harness}
"""How the agent waits for the network after a step: Playwright's and the page's own (the default), or not at
all, leaving it to the harness (its ``server-quiet`` settling)."""


def settling_of(choice: str, environ: Mapping[str, str]) -> Quiet | None:
    """The waits ``--settle choice`` means; ``auto`` follows the harness's ``$CAPREPLAY_SETTLING``."""
    if choice == "auto":
        choice = "harness" if environ.get(SETTLING_VARIABLE) == "server-quiet" else "network-idle"
    return SETTLINGS[choice]


async def _episode(tasks_file: Path, quiet: Quiet | None = None) -> None:
    from capreplay.runs.tasks_file import load_tasks_file

    channel = _Channel()
    workflows = load_tasks_file(tasks_file).workflows
    if workflows is None:
        raise CapreplayError("the tasks file has no workflows", tasks_file)
    async with async_playwright() as pw:
        start = await channel.receive()
        if not isinstance(start, Start):
            raise CapreplayError(f"expected a start message, got {start.type!r}")
        task = workflows.task(start.task.id)
        browser = await pw.chromium.connect_over_cdp(start.cdp_url)
        context = browser.contexts[0]
        page = context.pages[-1] if context.pages else await context.new_page()
        outputs: Outputs = {}
        for n, step in enumerate(task.gold_path, start=1):
            await run_step(page, step, outputs, quiet)
            channel.send(Step(n=n, action=step_action(step), url=page.url))
            reply = await channel.receive()
            if isinstance(reply, Stop):
                break
        # Leaves the harness's browser running: this process only attached to it.
        channel.send(Answer(text=json.dumps(outputs, ensure_ascii=False, indent=1)))


def main(argv: list[str] | None = None) -> int:
    """Run one episode as the gold agent; exit status 1 (after an ``error`` line) if it cannot."""
    parser = argparse.ArgumentParser(prog="python -m capreplay.agents.gold", description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=Path, required=True, help="the tasks file holding the gold paths")
    parser.add_argument(
        "--settle",
        choices=["auto", *sorted(SETTLINGS)],
        default="auto",
        help="wait for the network after each step (network-idle), leave it to the harness (harness), or do "
        f"what ${SETTLING_VARIABLE} says the harness does (auto, the default)",
    )
    args = parser.parse_args(argv)
    try:
        asyncio.run(_episode(args.tasks, settling_of(args.settle, os.environ)))
    except (CapreplayError, EOFError, KeyError, ValueError) as e:
        message = e.line() if isinstance(e, CapreplayError) else f"{type(e).__name__}: {e}"
        _Channel().send(AgentFailed(message=message.splitlines()[0]))
        return 1
    except Exception as e:  # any other failure still ends the episode with a reason, not a silent exit
        _Channel().send(AgentFailed(message=f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"))
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
