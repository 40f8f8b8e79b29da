"""Adapter processes: another framework's own uv project, run as a subprocess that speaks JSON lines.

browser-use pins dozens of packages exactly, so it lives in its own uv project (``adapters/browser_use/``)
and runs as a subprocess (the protocol is in ``adapters/README.md``). The core never imports it: it starts
the adapter's own interpreter, with no API key in its environment. The study asks it for indexed DOMs,
the agents run its agent; both start it the same way, from here. Stagehand's adapter (``adapters/stagehand/``,
which needs a newer ``websockets`` than browser-use allows) is started the same way, by a subclass that names
its project.
"""

from __future__ import annotations

import asyncio
import collections
import json
import logging
import os
from pathlib import Path
from types import TracebackType
from typing import Any, Self

from pydantic import BaseModel, Field

from capreplay.errors import BrowserError, os_reason

log = logging.getLogger(__name__)

ADAPTER_PROJECT = Path(__file__).resolve().parents[3] / "adapters" / "browser_use"
"""The browser-use adapter's uv project in a checkout; ``$CAPREPLAY_BROWSER_USE_ADAPTER`` names another."""
ADAPTER_VARIABLE = "CAPREPLAY_BROWSER_USE_ADAPTER"
STAGEHAND_ADAPTER_PROJECT = ADAPTER_PROJECT.parent / "stagehand"
"""The Stagehand adapter's uv project in a checkout; ``$CAPREPLAY_STAGEHAND_ADAPTER`` names another."""
STAGEHAND_ADAPTER_VARIABLE = "CAPREPLAY_STAGEHAND_ADAPTER"
SETUP_HINT = "run scripts/setup.sh"
PROTOCOL = 1
"""The version of the JSON-lines protocol this client speaks (``adapters/README.md``)."""
# A page's text and selector map travel as one line: allow far more than the 64 KiB default.
_LINE_LIMIT = 1 << 28
_STDERR_TAIL = 20
# Variables that carry credentials. browser-use must never see a model key: the indexed DOM needs none,
# and an agent that gets one from the study's environment could spend it.
_SECRET_SUFFIXES = ("_API_KEY", "_AUTH_TOKEN", "_API_TOKEN", "_SECRET_KEY")
# Variables that would make the adapter's interpreter load the core's packages instead of its own.
_PYTHON_VARS = ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PYTHONSTARTUP")


class AdapterInfo(BaseModel):
    """What the adapter reports in answer to ``hello``."""

    adapter: str = Field(description="Version of the adapter package.")
    protocol: int = Field(description="Version of the JSON-lines protocol.")
    browser_use: str | None = Field(default=None, description="Installed browser-use version (its adapter only).")
    stagehand: str | None = Field(default=None, description="Installed Stagehand version (its adapter only).")
    python: str = Field(description="The adapter interpreter's Python version.")
    commands: list[str] = Field(description="Commands the adapter accepts.")


def adapter_project(default: Path = ADAPTER_PROJECT, variable: str = ADAPTER_VARIABLE) -> Path:
    """An adapter's project: the folder ``$variable`` names if set, else the checkout's (browser-use's unless told)."""
    return Path(os.environ.get(variable) or default)


def adapter_env(environ: dict[str, str] | None = None) -> dict[str, str]:
    """The adapter's environment: the caller's, less credentials and Python path settings, telemetry off."""
    source = os.environ if environ is None else environ
    env = {k: v for k, v in source.items() if not k.upper().endswith(_SECRET_SUFFIXES) and k not in _PYTHON_VARS}
    env.update(ANONYMIZED_TELEMETRY="false", BROWSER_USE_CLOUD_SYNC="false", BROWSER_USE_VERSION_CHECK="false")
    return env


def adapter_python(project: Path, label: str = "browser-use adapter") -> Path:
    """The interpreter of the adapter's installed environment, or a BrowserError saying how to install it."""
    if not (project / "pyproject.toml").is_file():
        raise BrowserError(f"the {label} project is missing ({SETUP_HINT} in a full checkout)", project)
    python = project / ".venv" / "bin" / "python"
    if not python.exists():
        raise BrowserError(f"the {label} is not installed: {SETUP_HINT}", project)
    return python


class AdapterProcess:
    """An adapter subprocess (``python -m MODULE`` in its project), one JSON request at a time.

    Use as ``async with Subclass() as adapter: ...``; ``start`` checks that it answers ``hello``.

    Requests are answered one at a time, in order; a request that gets no answer within ``timeout``
    seconds, or an adapter that exits, raises BrowserError and ends the subprocess.
    """

    module: str
    """The adapter's module, run with ``python -m``."""
    label = "browser-use adapter"
    """What error messages call it."""
    default_project = ADAPTER_PROJECT
    project_variable = ADAPTER_VARIABLE

    def __init__(self, project: Path | None = None, *, timeout: float = 120.0) -> None:
        self.project = project or adapter_project(self.default_project, self.project_variable)
        self.timeout = timeout
        self.info: AdapterInfo | None = None
        self._proc: asyncio.subprocess.Process | None = None
        self._stderr: collections.deque[str] = collections.deque(maxlen=_STDERR_TAIL)
        self._drain: asyncio.Task[None] | None = None
        self._next_id = 0

    async def start(self) -> AdapterInfo:
        """Start the subprocess and check that it answers ``hello`` (its library imports, protocol matches)."""
        python = adapter_python(self.project, self.label)
        try:
            self._proc = await asyncio.create_subprocess_exec(
                str(python), "-m", self.module,
                stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
                env=adapter_env(), cwd=self.project, limit=_LINE_LIMIT,
            )  # fmt: skip
        except OSError as e:
            raise BrowserError(f"cannot start the {self.label} ({os_reason(e)}): {SETUP_HINT}", python) from e
        assert self._proc.stderr is not None
        # The stream is handed over now: the task may first run after a failed start has cleared _proc.
        self._drain = asyncio.create_task(self._read_stderr(self._proc.stderr))
        self.info = AdapterInfo.model_validate(await self.request("hello"))
        if self.info.protocol != PROTOCOL:
            raise BrowserError(
                f"the {self.label} speaks protocol {self.info.protocol}, capreplay {PROTOCOL}: {SETUP_HINT}",
                self.project,
            )
        return self.info

    async def request(self, cmd: str, **params: Any) -> dict[str, Any]:
        """Send one command and return the fields of its ``ok`` response (progress lines are logged)."""
        proc = self._proc
        if proc is None:
            raise BrowserError(f"the {self.label} is not running")
        if proc.returncode is not None:
            # It may die before the first request is even sent (a missing module exits at once).
            raise BrowserError(await self._died(f"exited during '{cmd}'"), self.project)
        assert proc.stdin is not None and proc.stdout is not None
        self._next_id += 1
        rid = self._next_id
        try:
            proc.stdin.write(json.dumps({"id": rid, "cmd": cmd, **params}).encode() + b"\n")
            await proc.stdin.drain()
            async with asyncio.timeout(self.timeout):
                while True:
                    line = await proc.stdout.readline()
                    if not line:
                        raise BrowserError(await self._died(f"exited during '{cmd}'"), self.project)
                    message = json.loads(line)
                    if not isinstance(message, dict):
                        raise json.JSONDecodeError("not a JSON object", line.decode(errors="replace"), 0)
                    if message.get("id") == rid and "ok" in message:
                        break
                    log.debug("adapter: %s", message)
        except TimeoutError:
            await self._kill()  # it is stuck: asking it to shut down would only wait again
            raise BrowserError(f"the {self.label} did not answer '{cmd}' within {self.timeout:g} s") from None
        except (ConnectionError, json.JSONDecodeError) as e:
            raise BrowserError(await self._died(f"broke the protocol during '{cmd}' ({e})"), self.project) from e
        if not message["ok"]:
            raise BrowserError(f"{self.label}, '{cmd}': {message.get('error', 'unknown error')}")
        return {k: v for k, v in message.items() if k not in ("id", "ok")}

    async def close(self) -> None:
        """Ask the adapter to exit, and end it if it does not within a few seconds."""
        proc, self._proc = self._proc, None
        if proc is not None and proc.returncode is None:
            assert proc.stdin is not None
            try:
                proc.stdin.write(b'{"cmd": "shutdown"}\n')
                await proc.stdin.drain()
                proc.stdin.close()
                await asyncio.wait_for(proc.wait(), 5)
            except (ConnectionError, TimeoutError):
                if proc.returncode is None:
                    log.warning("%s did not exit on shutdown; killing it", self.label)
                    proc.kill()
                    await proc.wait()
        if self._drain is not None:
            await self._drain
            self._drain = None

    async def __aenter__(self) -> Self:
        try:
            await self.start()
        except BaseException:
            await self.close()
            raise
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    @property
    def pid(self) -> int | None:
        """The adapter's process id while it runs."""
        return self._proc.pid if self._proc is not None and self._proc.returncode is None else None

    async def _kill(self) -> None:
        if self._proc is not None and self._proc.returncode is None:
            self._proc.kill()
            await self._proc.wait()
        await self.close()

    async def _read_stderr(self, stderr: asyncio.StreamReader) -> None:
        # Always drained, or a chatty adapter would block on a full pipe; the tail explains a crash.
        async for raw in stderr:
            line = raw.decode(errors="replace").rstrip()
            self._stderr.append(line)
            log.debug("adapter stderr: %s", line)

    async def _died(self, what: str) -> str:
        """A message naming how the adapter failed, with the last line it wrote on stderr."""
        proc = self._proc
        if proc is not None:
            try:
                await asyncio.wait_for(proc.wait(), 5)
            except TimeoutError:
                log.warning("%s broke the protocol and did not exit; killing it", self.label)
        await self._kill()
        last = next((line for line in reversed(self._stderr) if line.strip()), "")
        hint = f"; it said: {last}" if last else ""
        if "No module named" in last:
            hint += f" ({SETUP_HINT})"
        return f"the {self.label} {what}, exit status {proc.returncode if proc else '?'}{hint}"
