"""One episode: a fresh offline browser on the served snapshot, the agent as a subprocess, everything recorded.

The harness opens its own ports on the shared replay server (so the requests of this browser are told apart
from other episodes'), launches Chromium through :mod:`capreplay.browser` with a CDP port, loads the start URL,
then starts the agent and speaks the protocol of :mod:`capreplay.agents.protocol`. After each step it takes a
screenshot of the tab the agent is on, then acknowledges. The episode ends with the agent's answer, its error
or exit, the step limit, or the time limit; whatever happens, the record says which, and lists every request
the browser made with its replay result.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from playwright.async_api import BrowserContext, Error as PlaywrightError, Page, Playwright, Request
from pydantic import ValidationError

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
from capreplay.browser.flags import BLOCKED_ERRORS as BLOCKED_ERRORS  # re-exported: BrowserGym's adapter uses it
from capreplay.browser.launch import BrowserSettings, cdp_url, open_browser
from capreplay.browser.settle import Quiet, confirmed_quiet, rendered, settle
from capreplay.browser.touches import WATCH_SCRIPT, Touches
from capreplay.errors import validation_reason
from capreplay.models.episode import (
    SETTLING_VARIABLE,
    AgentUsage,
    EpisodeKey,
    EpisodeRecord,
    EpisodeStatus,
    RequestRecord,
    Settling,
    StepRecord,
)
from capreplay.models.workflow import WorkflowTask
from capreplay.replay.app import Served
from capreplay.replay.quiet import STEP_QUIET_MS
from capreplay.replay.server import ReplayServer, ServeInfo

STOP_GRACE_S = 20.0
"""After ``stop``, how long the agent has to answer before it is killed."""
STDERR_LINES = 20

# Environment variables every agent gets from the harness's own environment: enough to run a program.
_PASSED_ENV = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "PYTHONPATH", "VIRTUAL_ENV", "UV_CACHE_DIR")


@dataclass(frozen=True)
class AgentSpec:
    """How to start one agent."""

    name: str
    command: Sequence[str]
    env: Mapping[str, str] = field(default_factory=dict)
    """The agent's own variables (its model key and endpoint); nothing else of the harness's secrets."""
    model: Mapping[str, object] | None = None
    """The model settings sent in ``start``."""
    cwd: Path | None = None
    """The folder the agent runs in (its own project, for adapters)."""


@dataclass(frozen=True)
class Limits:
    """How far one episode may go."""

    step_limit: int
    timeout_s: float
    stop_grace_s: float = STOP_GRACE_S
    """After ``stop``, how long the agent has to answer before it is killed."""


def agent_env(spec: AgentSpec) -> dict[str, str]:
    """The agent's whole environment: a few harmless variables of the harness, and the agent's own.

    Built from nothing rather than copied and filtered, so no key of the harness (the judge's included) can
    reach an agent by a name nobody thought of.
    """
    env = {name: os.environ[name] for name in _PASSED_ENV if name in os.environ}
    env.update(spec.env)
    return env


def agent_task(task: WorkflowTask) -> AgentTask:
    """What an agent is told: the description, the start URL and the outputs; never rubric, gold path or values."""
    outputs = [TaskOutput(name=o.name, type=o.type, description=o.description) for o in task.outputs]
    return AgentTask(id=task.id, description=task.description, start_url=task.start_url, outputs=outputs)


class _Requests:
    """Requests this episode's browser made, from the server's log (by port) and the browser's own failures,
    each with the step it belongs to (see :attr:`RequestRecord.step`)."""

    def __init__(self, server: ReplayServer, ports: tuple[int, int]) -> None:
        self.server = server
        self.ports = ports
        self.blocked: list[RequestRecord] = []
        self.closed: list[int] = []
        """How many of this browser's requests the server had answered once the start page settled (first), then
        when each step's screenshot was taken."""

    def _mine(self) -> list[Served]:
        return [s for s in self.server.served if s.port in self.ports]

    def close_step(self) -> None:
        """The start page (first call) or the step just recorded owns every request answered up to now that
        nothing before it owns."""
        self.closed.append(len(self._mine()))

    def on_failed(self, request: Request) -> None:
        if any(err in (request.failure or "") for err in BLOCKED_ERRORS):
            step = len(self.closed)
            self.blocked.append(RequestRecord(method=request.method, url=request.url, result="blocked", step=step))

    def _step(self, i: int) -> int:
        # The first mark taken after the i-th answer: 0 the start page, n step n, past the last: after the steps.
        return next((n for n, count in enumerate(self.closed) if i < count), len(self.closed))

    def take(self) -> list[RequestRecord]:
        """This episode's records, taken out of the server's log so that a long run does not grow it."""
        mine = self._mine()
        served = self.server.served
        served[:] = [s for s in served if s.port not in self.ports]
        records = [
            RequestRecord(method=s.method, url=s.url, result=s.result, rule=s.rule, status=s.status, nearest=s.nearest,
                          step=self._step(i))
            for i, s in enumerate(mine)
        ]  # fmt: skip
        return records + self.blocked


@dataclass
class Prepared:
    """A fresh browser on its own ports of the server and the agent's process waiting for ``start``: what one
    episode needs before it can begin, made ready by :func:`prepare` (possibly while another episode runs)."""

    spec: AgentSpec
    info: ServeInfo
    context: BrowserContext
    proc: asyncio.subprocess.Process
    requests: _Requests
    stderr: deque[str]
    drain: asyncio.Task[None]
    stack: contextlib.AsyncExitStack
    launch_s: float
    """How long getting ready took."""

    async def release(self) -> None:
        """Kill the agent if it still runs, close the browser and its ports; the server's log of them stays."""
        try:
            if self.proc.returncode is None:
                self.proc.kill()
            await self.proc.wait()
            await self.drain
        finally:
            try:
                await self.stack.aclose()
            finally:
                await self.requests.server.unlisten(self.info)


async def prepare(
    server: ReplayServer,
    spec: AgentSpec,
    settling: Settling = "network-idle",
    *,
    together: bool = True,
    driver: Playwright | None = None,
) -> Prepared:
    """Open ports on ``server``, then launch a fresh Chromium on them and start the agent's process at the same
    time (it waits for ``start``); the caller owns the result (:func:`run_episode` releases it). ``together=False``
    starts the agent only once the browser is up, as the harness once did (a benchmark's baseline); ``driver``: a
    running Playwright to launch the browser with (see :func:`~capreplay.browser.launch.open_browser`)."""
    clock = time.monotonic()
    info = await server.listen()
    stack = contextlib.AsyncExitStack()
    proc: asyncio.subprocess.Process | None = None
    try:
        manifest = server.store.manifest
        settings = BrowserSettings(info.chromium_args, manifest.frozen_time, manifest.random_seed, cdp_port=0)
        launching = asyncio.create_task(stack.enter_async_context(open_browser(settings, driver=driver)))
        if not together:
            await asyncio.wait([launching])
        try:
            proc = await asyncio.create_subprocess_exec(
                *spec.command,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env={**agent_env(spec), SETTLING_VARIABLE: settling},
                cwd=spec.cwd,
                limit=16 * 1024 * 1024,
            )
        finally:
            context = await launching  # also when the spawn failed: the browser must be closed, not left behind
        if settling == "server-quiet":
            await context.add_init_script(WATCH_SCRIPT)  # tells a step that only read the page (see _Conversation)
        assert proc.stderr is not None
        stderr: deque[str] = deque(maxlen=STDERR_LINES)
        drain = asyncio.create_task(_drain(proc.stderr, stderr))
    except BaseException:
        if proc is not None and proc.returncode is None:
            proc.kill()
            await proc.wait()
        await stack.aclose()
        await server.unlisten(info)
        raise
    requests = _Requests(server, (info.http_port, info.https_port))
    context.on("requestfailed", requests.on_failed)
    return Prepared(spec, info, context, proc, requests, stderr, drain, stack, round(time.monotonic() - clock, 3))


async def _drain(stream: asyncio.StreamReader, lines: deque[str]) -> None:
    async for line in stream:
        lines.append(line.decode("utf-8", "replace").rstrip())


async def run_episode(
    server: ReplayServer,
    key: EpisodeKey,
    task: WorkflowTask,
    spec: AgentSpec,
    limits: Limits,
    run_dir: Path,
    settling: Settling = "network-idle",
    *,
    prepared: Prepared | None = None,
    on_answered: Callable[[], None] | None = None,
) -> EpisodeRecord:
    """Run one episode of a workflow task and return its record; screenshots go under ``run_dir``.

    ``prepared``: the episode's browser and agent, made ready by :func:`prepare` with the same ``spec`` and
    ``settling`` (the episode releases them); without it, they are prepared now. ``on_answered`` is called once
    the agent is done (answered, failed or stopped), before the browser and agent are closed."""
    return await run_agent_episode(
        server, key, agent_task(task), spec, limits, run_dir, settling, prepared=prepared, on_answered=on_answered
    )


async def run_agent_episode(
    server: ReplayServer,
    key: EpisodeKey,
    task: AgentTask,
    spec: AgentSpec,
    limits: Limits,
    run_dir: Path,
    settling: Settling = "network-idle",
    *,
    prepared: Prepared | None = None,
    on_answered: Callable[[], None] | None = None,
) -> EpisodeRecord:
    """Run one episode of what the agent is told (``task``, which has no rubric or gold path: an exploration
    needs none) and return its record; screenshots go under ``run_dir``; ``settling`` says how pages settle;
    ``prepared`` and ``on_answered`` as in :func:`run_episode`."""
    ready = prepared if prepared is not None else await prepare(server, spec, settling)
    started = datetime.now(UTC)
    clock = time.monotonic()
    shots = Path(key.agent, str(key.repeat), key.task)
    try:
        (run_dir / shots).mkdir(parents=True, exist_ok=True)
        context = ready.context
        page = context.pages[0] if context.pages else await context.new_page()
        quiet = _server_quiet(server, ready.info, context) if settling == "server-quiet" else None
        await page.goto(task.start_url, wait_until="load")
        await settle(page, quiet)
        ready.requests.close_step()
        conversation = _Conversation(context, run_dir, shots, clock, ready.requests.close_step, quiet)
        if quiet is not None:
            conversation.watch(Touches(context), _network_unchanged(server, ready.info))
        start = Start(
            task=task,
            cdp_url=cdp_url(context),
            start_url=page.url,  # after any redirect: the URL the agent finds its tab by
            step_limit=limits.step_limit,
            model=dict(spec.model) if spec.model is not None else None,
        )
        status, error, answer = await conversation.run(ready, start, limits)
        final_url = _current(context).url if context.pages else None
        if on_answered is not None:
            on_answered()
    finally:
        await ready.release()
    return EpisodeRecord(
        key=key,
        started_at=started,
        duration_s=round(time.monotonic() - clock, 3),
        status=status,
        error=error,
        answer=answer.text if answer else None,
        usage=answer.usage if answer else AgentUsage(),
        steps=conversation.steps,
        requests=ready.requests.take(),
        start_url=task.start_url,
        final_url=final_url,
        launch_s=ready.launch_s,
    )


def _server_quiet(server: ReplayServer, info: ServeInfo, context: BrowserContext) -> Quiet:
    """The replay server's quiet signal for the browser on ``info``'s ports, after a step's short interval,
    confirmed by the agent's tab (see :func:`confirmed_quiet`)."""

    async def signal(since: float, timeout_ms: float) -> bool:
        return await server.quiet(info, since=since, quiet_ms=STEP_QUIET_MS, timeout_ms=timeout_ms)

    return confirmed_quiet(
        signal, _network_unchanged(server, info), lambda: _current(context) if context.pages else None
    )


def _network_unchanged(server: ReplayServer, info: ServeInfo) -> Callable[[float], bool]:
    """Whether the browser on ``info``'s ports has no request in flight and none started or ended after a loop time."""
    traffic, ports = server.traffic, (info.http_port, info.https_port)
    return lambda since: traffic.inflight(ports) == 0 and traffic.changed(ports) <= since


def _current(context: BrowserContext) -> Page:
    # The tab the agent works in: the newest one still open (agents that open tabs move to them).
    return context.pages[-1]


class _Conversation:
    """The protocol with one agent process."""

    def __init__(
        self,
        context: BrowserContext,
        run_dir: Path,
        shots: Path,
        clock: float,
        on_step: Callable[[], None],
        quiet: Quiet | None = None,
    ) -> None:
        self.context = context
        self.quiet = quiet
        self.told = 0.0
        """The loop time the agent was last told to act (``start`` or an ``ack`` sent): its step began after it."""
        self.on_step = on_step
        self.run_dir = run_dir
        self.shots = shots
        self.clock = clock
        self.steps: list[StepRecord] = []
        self.stderr: deque[str] = deque(maxlen=STDERR_LINES)
        self.touches: Touches | None = None
        self.network_unchanged: Callable[[float], bool] = lambda since: False

    def watch(self, touches: Touches, network_unchanged: Callable[[float], bool]) -> None:
        """Let a step that did nothing to the page skip the wait for quiet: no input reached the page, it did not
        navigate, no tab opened (``touches``) and the server saw no request start or end since the agent was told
        to act (``network_unchanged``). Such a step (the agent read the page) cannot have started a request, and
        the page was settled when the step before it was recorded."""
        self.touches = touches
        self.network_unchanged = network_unchanged

    async def _tell(self, proc: asyncio.subprocess.Process, message: Start | Ack) -> None:
        assert proc.stdin is not None
        if self.touches is not None:
            await self.touches.mark()  # before the agent can act: its first input must come after the mark
        proc.stdin.write(encode(message))
        self.told = asyncio.get_running_loop().time()
        await proc.stdin.drain()

    async def _untouched(self) -> bool:
        return self.touches is not None and self.network_unchanged(self.told) and await self.touches.untouched()

    async def run(
        self, ready: Prepared, start: Start, limits: Limits
    ) -> tuple[EpisodeStatus, str | None, Answer | None]:
        proc = ready.proc
        self.stderr = ready.stderr
        assert proc.stdin is not None and proc.stdout is not None
        with contextlib.suppress(ConnectionError):  # the agent died before it was told anything: its output says so
            await self._tell(proc, start)
        outcome: tuple[EpisodeStatus, str | None, Answer | None]
        try:
            outcome = await asyncio.wait_for(self._talk(proc, limits), limits.timeout_s)
        except TimeoutError:
            reason = f"the episode ran out of time ({limits.timeout_s:g} s)"
            outcome = await self._stop(proc, "timeout", reason, limits.stop_grace_s)
        return outcome

    def _died(self, proc: asyncio.subprocess.Process) -> str:
        last = next((line for line in reversed(self.stderr) if line.strip()), "")
        code = proc.returncode
        return f"the agent exited (status {code}) without answering" + (f": {last}" if last else "")

    async def _talk(
        self, proc: asyncio.subprocess.Process, limits: Limits
    ) -> tuple[EpisodeStatus, str | None, Answer | None]:
        assert proc.stdin is not None and proc.stdout is not None
        while True:
            line = await proc.stdout.readline()
            if not line:
                await proc.wait()
                return "failed", self._died(proc), None
            try:
                message = FROM_AGENT.validate_json(line)
            except ValidationError as e:
                return "failed", f"the agent broke the protocol: {validation_reason(e)}: {line[:200]!r}", None
            if isinstance(message, Answer):
                return "answered", None, message
            if isinstance(message, AgentFailed):
                return "failed", message.message, None
            await self._record(message)
            if len(self.steps) >= limits.step_limit:
                return await self._stop(
                    proc, "step_limit", f"the agent reached the step limit ({limits.step_limit})", limits.stop_grace_s
                )
            await self._tell(proc, Ack(n=message.n))

    async def _record(self, step: Step) -> None:
        shot: str | None = None
        if self.quiet is not None:
            # Counted from when the agent was told to act, so a request the step started is seen however soon it
            # ended; a step that did nothing to the page needs no wait for the network, only for its rendering.
            if not await self._untouched():
                await self.quiet(self.told)
            elif self.context.pages:
                await rendered(_current(self.context))
        if self.context.pages:
            path = self.shots / f"step-{step.n:03d}.png"
            with contextlib.suppress(PlaywrightError):
                await _current(self.context).screenshot(path=self.run_dir / path)
                shot = path.as_posix()
        self.steps.append(
            StepRecord(
                n=step.n,
                action=step.action.name,
                args=step.action.args,
                url=step.url,
                thought=step.thought,
                screenshot=shot,
                at_s=round(time.monotonic() - self.clock, 3),
            )
        )
        self.on_step()

    async def _stop(
        self, proc: asyncio.subprocess.Process, status: EpisodeStatus, reason: str, grace_s: float
    ) -> tuple[EpisodeStatus, str | None, Answer | None]:
        """Tell the agent to stop; keep its answer if it gives one in time (it is still judged)."""
        assert proc.stdin is not None and proc.stdout is not None
        with contextlib.suppress(ConnectionError):
            proc.stdin.write(encode(Stop(reason=reason)))
            await proc.stdin.drain()
        deadline = time.monotonic() + grace_s
        with contextlib.suppress(TimeoutError):
            while (left := deadline - time.monotonic()) > 0:
                line = await asyncio.wait_for(proc.stdout.readline(), left)
                if not line:
                    break
                with contextlib.suppress(ValidationError):
                    message = FROM_AGENT.validate_json(line)
                    if isinstance(message, Answer):
                        return status, reason, message
        return status, reason, None
