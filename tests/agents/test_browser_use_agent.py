"""browser-use's own agent (the adapter's agent mode) on the replayed fixture snapshot, driven over the agent
protocol as the harness drives it. Everything is real (Chromium, the replay server, the adapter process with
browser-use and its Anthropic client) except the model: the fake Messages API answers with scripted
``AgentOutput`` tool calls."""

from __future__ import annotations

import asyncio
import collections
import json
import os
import re
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import anthropic
import pytest
from playwright.async_api import BrowserContext, Page

from capreplay.agents.protocol import (
    FROM_AGENT,
    Ack,
    AgentFailed,
    AgentTask,
    Answer,
    Start,
    Step,
    Stop,
    TaskOutput,
    encode,
)
from capreplay.browser.launch import cdp_url
from capreplay.runs.adapters import ADAPTER_PROJECT, adapter_python
from capreplay.study.page.load import open_page_session, replay_browser
from capreplay.testing.fake_llm import FakeLLM, Received, Reply, text_tokens

TEST_KEY = "sk-ant-agent-test-0123456789-SECRET"
MODEL = "claude-test"
HOME_URL = "https://www.shop.test/"
FORM_URL = "https://www.shop.test/form"
ANSWER = f"form_url: {FORM_URL} (source: {FORM_URL})"
# browser-use's indexed DOM lists the home page's link as "[index]<a />" and its text on the next line.
FORM_LINK = re.compile(r"\[(\d+)\]<a />\s*Order form \(POST\)")
LINE_TIMEOUT_S = 45.0
"""The longest wait for one line: the first comes after browser-use's import, connection and a model call."""


def start_line(cdp: str, step_limit: int = 5, **model: Any) -> Start:
    """The start line of an episode on the fixture shop's home page."""
    return Start(
        task=AgentTask(
            id="find-order-form",
            description="Find the address of the shop's order form.",
            start_url=HOME_URL,
            outputs=[TaskOutput(name="form_url", type="url", description="The URL of the order form page.")],
        ),
        cdp_url=cdp,
        start_url=HOME_URL,
        step_limit=step_limit,
        model={"model": MODEL, "max_tokens": 2048, "max_retries": 0, **model},
    )


def agent_output(next_goal: str, action: dict[str, Any]) -> dict[str, Any]:
    """The input of browser-use's forced ``AgentOutput`` tool: its brain fields and one action."""
    return {
        "thinking": "scripted",
        "evaluation_previous_goal": "scripted",
        "memory": "scripted",
        "next_goal": next_goal,
        "action": [action],
    }


def click_form_link(received: Received) -> Reply:
    """Step 1: click the home page's link to the order form, found by its index in the prompt."""
    found = FORM_LINK.search(received.prompt)
    if found is None:
        return Reply(status=500, message="the order form link is not in the prompt")
    return Reply(tool_input=agent_output("Open the order form", {"click": {"index": int(found[1])}}), output_tokens=41)


def in_turn(*answers: Reply | Callable[[Received], Reply]) -> Callable[[Received], Reply]:
    """A script answering the n-th call with the n-th answer (asked of the request, if it is a function)."""
    calls = iter(answers)

    def answer(received: Received) -> Reply:
        found = next(calls, Reply(status=500, message="the script has no answer left"))
        return found(received) if callable(found) else found

    return answer


DONE = Reply(tool_input=agent_output("Report the form's address", {"done": {"text": ANSWER, "success": True}}),
             output_tokens=23)  # fmt: skip


@dataclass
class World:
    """The harness's side: a browser on the served snapshot, its tab on the start page, every request made."""

    context: BrowserContext
    page: Page
    requests: list[str]
    hosts: list[str]

    def assert_nothing_left_the_snapshot(self) -> None:
        """Every request of every tab went to a host of the snapshot (none to browser-use's CDN)."""
        outside = [url for url in self.requests if urlsplit(url).scheme != "data" and urlsplit(url).hostname
                   not in self.hosts]  # fmt: skip
        assert outside == []
        assert self.requests, "the browser made no request: the check proves nothing"


@pytest.fixture
async def world(committed_snapshot: Path) -> AsyncIterator[World]:
    hosts = json.loads((committed_snapshot / "manifest.json").read_text())["hosts"]
    async with replay_browser(committed_snapshot, cdp=True) as context:
        requests: list[str] = []
        context.on("request", lambda request: requests.append(request.url))
        # The persistent context's first tab stays blank: the agent must find the harness's tab itself.
        page = await open_page_session(context, HOME_URL)
        yield World(context, page, requests, hosts)


class AgentProcess:
    """The adapter's agent process, spoken to as the harness does."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.stderr: collections.deque[str] = collections.deque(maxlen=200)
        assert proc.stderr is not None
        self._drain = asyncio.ensure_future(self._read_stderr(proc.stderr))

    async def _read_stderr(self, stream: asyncio.StreamReader) -> None:
        async for line in stream:
            self.stderr.append(line.decode(errors="replace").rstrip())

    async def send(self, message: Start | Ack | Stop) -> None:
        """One protocol line to the agent."""
        assert self.proc.stdin is not None
        self.proc.stdin.write(encode(message))
        await self.proc.stdin.drain()

    async def read(self) -> Step | Answer | AgentFailed:
        """The agent's next protocol line, validated by the harness's own models."""
        assert self.proc.stdout is not None
        line = await asyncio.wait_for(self.proc.stdout.readline(), LINE_TIMEOUT_S)
        assert line, "the agent closed stdout without answering:\n" + "\n".join(self.stderr)
        return FROM_AGENT.validate_json(line)

    async def exit_status(self) -> int:
        """Wait for the process to end (stdin stays open: the agent must exit on its own)."""
        status = await asyncio.wait_for(self.proc.wait(), 20)
        await self._drain
        return status


Spawn = Callable[..., Awaitable[AgentProcess]]
"""Starts the agent process for a fake model API (and, optionally, another key or none)."""


@pytest.fixture
async def spawn(tmp_path: Path) -> AsyncIterator[Spawn]:
    """Starts the agent as the harness would, with only PATH, HOME and the agent's model settings as environment."""
    started: list[AgentProcess] = []

    async def start(fake: FakeLLM, key: str | None = TEST_KEY) -> AgentProcess:
        home = tmp_path / "home"
        home.mkdir(exist_ok=True)
        env = {"PATH": os.environ["PATH"], "HOME": str(home), "ANTHROPIC_BASE_URL": fake.base_url}
        if key is not None:
            env["ANTHROPIC_API_KEY"] = key
        proc = await asyncio.create_subprocess_exec(
            str(adapter_python(ADAPTER_PROJECT)), "-m", "capreplay_browser_use.agent",
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            env=env, cwd=ADAPTER_PROJECT,
        )  # fmt: skip
        started.append(AgentProcess(proc))
        return started[-1]

    yield start
    for agent in started:
        if agent.proc.returncode is None:
            agent.proc.kill()
            await agent.proc.wait()


def assert_only_the_test_key_reached(fake: FakeLLM) -> None:
    """Every call carried the agent's key as x-api-key, no other credential, to the fake on 127.0.0.1."""
    assert fake.received, "the fake received no request: the check proves nothing"
    for received in fake.received:
        assert received.headers["x-api-key"] == TEST_KEY
        assert "authorization" not in received.headers
        assert received.headers["host"] == f"127.0.0.1:{fake.port}"


@pytest.mark.browser
@pytest.mark.slow
async def test_the_agent_clicks_reports_each_step_and_answers(world: World, spawn: Spawn) -> None:
    async with FakeLLM(in_turn(click_form_link, DONE)) as fake:
        agent = await spawn(fake)
        await agent.send(start_line(cdp_url(world.context)))
        steps: list[Step] = []
        tab_urls: list[str] = []
        while not isinstance(message := await agent.read(), Answer | AgentFailed):
            steps.append(message)
            # What the harness's screenshot of the step would show: the tab as the action left it.
            tab_urls.append(await world.page.evaluate("location.href"))
            await agent.send(Ack(n=message.n))
        status = await agent.exit_status()

    assert isinstance(message, Answer), message
    assert status == 0, "\n".join(agent.stderr)
    index = FORM_LINK.search(fake.calls("messages")[0].prompt)
    assert index is not None
    assert [(s.n, s.action.name, s.url) for s in steps] == [(1, "click", FORM_URL), (2, "done", FORM_URL)]
    assert steps[0].action.args == {"index": int(index[1])}
    assert steps[0].thought == "Open the order form"
    assert steps[1].action.args["text"] == ANSWER
    assert tab_urls == [FORM_URL, FORM_URL]
    assert await world.page.evaluate("location.href") == FORM_URL  # the harness's tab (and browser) outlive the agent
    viewport = world.page.viewport_size
    assert viewport is not None
    assert await world.page.evaluate("[innerWidth, innerHeight]") == [viewport["width"], viewport["height"]]

    assert message.text == ANSWER
    calls = fake.calls("messages")
    assert len(calls) == 2
    assert calls[0].body["tool_choice"] == {"type": "tool", "name": "AgentOutput"}
    assert message.usage.calls == 2
    assert message.usage.input_tokens == sum(call.input_tokens for call in calls)
    assert message.usage.output_tokens == 41 + 23
    assert message.usage.model == MODEL
    assert calls[0].images, "browser-use's default sends a screenshot"
    assert_only_the_test_key_reached(fake)
    world.assert_nothing_left_the_snapshot()


@pytest.mark.browser
@pytest.mark.slow
async def test_a_stop_while_a_step_waits_for_its_ack_ends_the_episode_with_what_the_agent_has(
    world: World, spawn: Spawn
) -> None:
    async with FakeLLM(in_turn(click_form_link, DONE)) as fake:
        agent = await spawn(fake)
        await agent.send(start_line(cdp_url(world.context)))
        step = await agent.read()
        assert isinstance(step, Step) and step.action.name == "click"
        await agent.send(Stop(reason="step limit"))
        answer = await agent.read()
        status = await agent.exit_status()

    assert isinstance(answer, Answer), answer
    assert status == 0, "\n".join(agent.stderr)
    assert answer.text == ""  # the agent had not answered yet
    assert len(fake.calls("messages")) == 1  # and it asked the model nothing more
    assert (answer.usage.calls, answer.usage.output_tokens) == (1, 41)
    assert await world.page.evaluate("location.href") == FORM_URL


@pytest.mark.browser
@pytest.mark.slow
async def test_a_stop_during_a_model_call_ends_the_episode_within_the_grace(world: World, spawn: Spawn) -> None:
    async with FakeLLM(Reply(delay_s=60.0, tool_input=agent_output("never", {"wait": {"seconds": 1}}))) as fake:
        agent = await spawn(fake)
        await agent.send(start_line(cdp_url(world.context)))
        for _ in range(200):  # bounded: the first call comes once browser-use has read the page
            if fake.calls("messages"):
                break
            await asyncio.sleep(0.1)
        assert fake.calls("messages"), "\n".join(agent.stderr)
        await agent.send(Stop(reason="time limit"))
        answer = await agent.read()
        status = await agent.exit_status()

    assert isinstance(answer, Answer), answer
    assert status == 0, "\n".join(agent.stderr)
    assert answer.text == ""
    assert answer.usage.calls == 0  # the one call never answered
    assert await world.page.evaluate("location.href") == HOME_URL


@pytest.mark.browser
@pytest.mark.slow
async def test_a_failing_model_ends_the_episode_with_an_error_line(world: World, spawn: Spawn) -> None:
    async with FakeLLM(Reply(status=500, message="scripted outage")) as fake:
        agent = await spawn(fake)
        await agent.send(start_line(cdp_url(world.context), max_failures=1))
        message = await agent.read()
        status = await agent.exit_status()

    assert isinstance(message, AgentFailed), message
    assert status == 1
    assert "gave up" in message.message and "scripted outage" in message.message, message.message
    assert "\n" not in message.message
    # One failed step, then browser-use's one last try for a final answer; the SDK retries nothing.
    assert len(fake.calls("messages")) == 2
    assert_only_the_test_key_reached(fake)
    assert await world.page.evaluate("location.href") == HOME_URL


@pytest.mark.slow
async def test_without_a_key_the_agent_fails_at_once(spawn: Spawn) -> None:
    async with FakeLLM("unused") as fake:
        agent = await spawn(fake, key=None)
        await agent.send(start_line("http://127.0.0.1:9"))
        message = await agent.read()
        status = await agent.exit_status()
    assert isinstance(message, AgentFailed), message
    assert status == 1
    assert "ANTHROPIC_API_KEY" in message.message
    assert fake.received == []


@pytest.mark.slow
async def test_an_unreachable_browser_ends_the_episode_with_an_error_line(spawn: Spawn) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # released: nothing listens there
    async with FakeLLM("unused") as fake:
        agent = await spawn(fake)
        await agent.send(start_line(f"http://127.0.0.1:{port}"))
        message = await agent.read()
        status = await agent.exit_status()
    assert isinstance(message, AgentFailed), message
    assert message.message.startswith(f"AttachError: cannot attach to http://127.0.0.1:{port}")
    assert status == 1
    # It exited on its own, not by the last-resort timer: browser-use's session was closed.
    assert not any("still running" in line for line in agent.stderr)
    assert fake.received == []


async def test_the_fake_answers_a_tool_reply_as_browser_uses_client_reads_it() -> None:
    """The fake's part of the tests above: a ``tool_use`` block naming the forced tool (else the first one)."""
    tools: list[Any] = [{"name": "First", "input_schema": {"type": "object"}}, {"name": "AgentOutput",
                        "input_schema": {"type": "object"}}]  # fmt: skip
    replies = [
        Reply(tool_input={"a": 1}),
        Reply(text="Let me see.", tool_input={"b": [2]}),
        Reply(tool_input={}),
        Reply(tool_input={"long": "x"}, output_tokens=65),
    ]
    async with FakeLLM(replies) as fake:
        client = anthropic.AsyncAnthropic(api_key=TEST_KEY, base_url=fake.base_url, max_retries=0)
        try:
            ask: dict[str, Any] = {"model": MODEL, "max_tokens": 64, "messages": [{"role": "user", "content": "go"}]}
            forced = await client.messages.create(
                **ask, tools=tools, tool_choice={"type": "tool", "name": "AgentOutput"}
            )
            first = await client.messages.create(**ask, tools=tools)
            with pytest.raises(anthropic.InternalServerError, match="offers none"):
                await client.messages.create(**ask)
            cut = await client.messages.create(**ask, tools=tools)
        finally:
            await client.close()

    assert forced.stop_reason == "tool_use"
    assert [(b.type, getattr(b, "name", None), getattr(b, "input", None)) for b in forced.content] == [
        ("tool_use", "AgentOutput", {"a": 1})
    ]
    assert forced.usage.output_tokens == text_tokens('{"a": 1}') == 2
    assert [b.type for b in first.content] == ["text", "tool_use"]
    assert (first.content[1].name, first.content[1].input) == ("First", {"b": [2]})
    assert first.usage.output_tokens == text_tokens("Let me see.") + text_tokens('{"b": [2]}') == 3 + 3
    assert (cut.stop_reason, cut.content, cut.usage.output_tokens) == ("max_tokens", [], 64)


@pytest.mark.browser
async def test_the_harness_runs_browser_use_end_to_end(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`capreplay run`'s own path: the registry's spec, the harness's browser and screenshots, the agent's key only."""
    from capreplay.agents.harness import Limits, run_episode
    from capreplay.agents.run import agent_spec
    from capreplay.models.episode import EpisodeKey
    from capreplay.models.workflow import Workflows, WorkflowTask
    from capreplay.replay.server import ReplayServer
    from tests.support.world_sample import FIXTURES, sample_task

    task = sample_task("find-form", [{"type": "read", "output": "product", "selector": "h1"},
                                     {"type": "read", "output": "product_url", "source": "url"}])  # fmt: skip
    async with FakeLLM(in_turn(click_form_link, DONE)) as fake:
        monkeypatch.setenv("CAPREPLAY_AGENT_API_KEY", TEST_KEY)
        monkeypatch.setenv("CAPREPLAY_AGENT_BASE_URL", fake.base_url)
        monkeypatch.setenv("CAPREPLAY_JUDGE_API_KEY", "judge-key-must-not-leak")
        workflows = Workflows.model_validate({
            "snapshot": "fixtures", "judge": {"model": {"model": "claude-judge", "max_tokens": 100}},
            "agent_model": {"model": MODEL, "max_tokens": 2048}, "tasks": [task],
        })  # fmt: skip
        spec = agent_spec("browser_use", workflows, tmp_path / "tasks.json")
        server = ReplayServer(FIXTURES, keep_log=True)
        await server.start()
        try:
            key = EpisodeKey(repeat=0, task="find-form", agent="browser_use")
            record = await run_episode(server, key, WorkflowTask.model_validate(task), spec, Limits(5, 120), tmp_path)
        finally:
            await server.stop()
    assert record.status == "answered", record.error
    assert record.answer == ANSWER
    assert [s.action for s in record.steps] == ["click", "done"]
    assert record.steps[0].url == FORM_URL
    assert all(s.screenshot and (tmp_path / s.screenshot).is_file() for s in record.steps)
    assert record.usage.calls == 2 and record.usage.output_tokens == 41 + 23
    assert record.off_snapshot == []
    assert FORM_URL in {r.url for r in record.requests}
    assert_only_the_test_key_reached(fake)
    assert all("judge-key-must-not-leak" not in json.dumps(r.body) for r in fake.received)
