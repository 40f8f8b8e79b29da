"""Every shell and Python example of the README and ``docs/`` runs, so an example that stops working fails here.

Each page's examples run in order in one ``bash -euo pipefail`` session (a later block uses what an earlier one
made, a server started with ``&`` is stopped with ``kill %1``), in a fresh folder laid out as the project's: the
committed ``snapshots/``, ``benchmark/``, ``adapters/`` and ``scripts/`` linked in, a copy of ``tasks.json``, and
nothing else, so every output lands in that folder. The environment's ``capreplay`` comes first on ``PATH``, and
every model role's key and endpoint (``CAPREPLAY_<ROLE>_API_KEY``, ``CAPREPLAY_<ROLE>_BASE_URL``) point at the fake
model server, so nothing leaves the machine.

What is shown and not run (``text`` blocks, saved files, YAML: synopses and commands too long for the suite or
needing other machines) is not run here; its command lines are parsed in ``test_command_lines.py``.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from capreplay.testing.fake_llm import FakeLLM
from tests.docs.examples import SETUP_COMMANDS, blocks, misfiled, pages, script
from tests.support.paths import ROOT

LINKED = ("snapshots", "benchmark", "adapters", "scripts")
"""What the examples' folder links to the project's own (read, never written: outputs go elsewhere)."""
COPIED = ("tasks.json",)
ROLES = ("AGENT", "JUDGE", "TASKS", "STUDY")
NO_CHROMIUM = frozenset(
    {"docs/verbs/import.md", "docs/verbs/export.md", "docs/verbs/serve.md", "docs/verbs/register.md",
     "docs/benchmark.md", "docs/snapshot-format.md", "docs/fixture-sites.md", "docs/integrations/proxy.md"}
)  # fmt: skip
"""Pages whose examples launch no Chromium (the rest are marked ``browser``)."""
TIMEOUT_S = 600


def _name(page: Path) -> str:
    return page.relative_to(ROOT).as_posix()


RUNNABLE = [p for p in pages() if any(b.runs for b in blocks(p))]
PAGES = [
    pytest.param(p, id=_name(p), marks=() if _name(p) in NO_CHROMIUM else (pytest.mark.browser,)) for p in RUNNABLE
]


@pytest.fixture(scope="module")
def fake_model() -> Iterator[FakeLLM]:
    """The fake model API, answering every call with one sentence, on its own event loop."""
    fake = FakeLLM(default="I cannot tell from this page.")
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    asyncio.run_coroutine_threadsafe(fake.start(), loop).result(timeout=30)
    yield fake
    asyncio.run_coroutine_threadsafe(fake.stop(), loop).result(timeout=30)
    loop.call_soon_threadsafe(loop.stop)
    thread.join(timeout=30)


def _folder(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    for name in LINKED:
        (work / name).symlink_to(ROOT / name)
    for name in COPIED:
        shutil.copy2(ROOT / name, work / name)
    return work


def _environment(fake: FakeLLM) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "VIRTUAL_ENV")}
    uv = shutil.which("uv") or os.environ.get("UV", "")
    path = [str(ROOT / ".venv" / "bin"), *([str(Path(uv).parent)] if uv else []), env.get("PATH", "")]
    env["PATH"] = os.pathsep.join(path)
    for role in ROLES:
        env[f"CAPREPLAY_{role}_API_KEY"] = "sk-docs-example-fake"
        env[f"CAPREPLAY_{role}_BASE_URL"] = fake.base_url
    return env


@pytest.mark.parametrize("page", PAGES)
def test_the_examples_of_a_page_run(page: Path, tmp_path: Path, fake_model: FakeLLM) -> None:
    page_blocks = blocks(page)
    marker = tmp_path / "block"
    work = _folder(tmp_path)
    run = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script(page_blocks, marker)],
        cwd=work, env=_environment(fake_model), capture_output=True, text=True, timeout=TIMEOUT_S, check=False,
    )  # fmt: skip
    if run.returncode != 0:
        line = int(marker.read_text()) if marker.exists() else 0
        failed = next((b for b in page_blocks if b.line == line), None)
        source = failed.source if failed else "(before the first block)"
        pytest.fail(
            f"{_name(page)}:{line}: the example failed (exit {run.returncode})\n{source}\n"
            f"--- stdout\n{run.stdout[-3000:]}\n--- stderr\n{run.stderr[-3000:]}"
        )


def test_examples_are_found_on_the_pages_that_teach_the_verbs() -> None:
    """The collection itself works: a parser that found nothing would leave the suite above empty."""
    runnable = [b for p in pages() for b in blocks(p) if b.runs]
    assert len(runnable) >= 30, [b.where for b in runnable]
    names = {_name(p) for p in RUNNABLE}
    assert {"README.md", "docs/verbs/capture.md", "docs/verbs/serve.md", "docs/verbs/run.md"} <= names, names


def test_no_block_that_looks_like_code_escapes_the_suite() -> None:
    problems = [why for p in pages() for b in blocks(p) if (why := misfiled(b))]
    assert not problems, "\n".join(problems)


def test_the_readme_opens_with_the_two_commands_ci_runs() -> None:
    """The README's first block is the two set-up commands, exactly; CI runs the second (``.ci/run``)."""
    first = blocks(ROOT / "README.md")[0]
    assert first.source.strip() == SETUP_COMMANDS
    assert "exec bash scripts/test.sh" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    for command in SETUP_COMMANDS.splitlines():
        assert subprocess.run(["bash", "-n", command.split()[1]], cwd=ROOT, check=False).returncode == 0
