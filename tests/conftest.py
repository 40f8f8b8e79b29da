"""Shared fixtures: the repository's paths, one fresh capture of the fixture sites per test session; and the
guard that keeps ``-m "not browser"`` free of Chromium.

A test that launches Chromium, directly or through a fixture, a ``capreplay`` verb or a subprocess, must be
marked ``browser``. Every other test runs with ``CAPREPLAY_CHROMIUM`` (and Playwright's browser folder) set to
paths that do not exist, inherited by its subprocesses: :func:`capreplay.browser.launch.find_chromium` then
finds none and the launch fails, and the failure report says the marker is missing.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Generator, Iterator
from pathlib import Path

import pytest
from hypothesis import settings

from capreplay.judge.verdict import EpisodeVerdict
from capreplay.runs.episode_log import read_episodes
from tests.support.captured import Captured, capture_fixture_sites
from tests.support.no_chromium import BLOCKED_ENV
from tests.support.paths import ROOT
from tests.support.study_run import registered_results
from tests.support.worker_groups import heaviest_first, worker_groups
from tests.support.world_gold import TRUE_CLAIMS, WorldJudge, local_gold_run, world_workflows

# Property tests check what holds, never how long it took: on a shared machine under two workers one example can
# take 400 ms, and hypothesis's default 200 ms deadline then fails a correct test.
settings.register_profile("capreplay", deadline=None)
settings.load_profile("capreplay")


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist's own, which turns the groups into node ids on each worker
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under ``--dist loadgroup``, tests that share a module or a session or package fixture go to one worker, and the
    groups that cost the most (browser tests, slow ones most) are handed out first."""
    if not _loadgroup(config):
        return
    functions = [item for item in items if isinstance(item, pytest.Function)]
    shared = [(item.nodeid.split("::")[0], _shared_fixtures(item)) for item in functions]
    groups = worker_groups(shared)
    for item, group in zip(functions, groups, strict=True):
        item.add_marker(pytest.mark.xdist_group(group))
    others = [item for item in items if not isinstance(item, pytest.Function)]
    items[:] = [functions[i] for i in heaviest_first(groups, [_cost(item) for item in functions])] + others


def _loadgroup(config: pytest.Config) -> bool:
    """Whether the tests run under ``--dist loadgroup``: on a worker, pytest-xdist turns ``dist`` into ``no`` and
    keeps the distribution in its ``loadgroup`` option; the collection that counts is the workers'."""
    return bool(config.getoption("dist", None) == "loadgroup" or config.getoption("loadgroup", False))


def _cost(item: pytest.Function) -> int:
    """A rough cost, to order the groups by: a browser test costs seconds, a slow one tens, any other nothing."""
    return (item.get_closest_marker("browser") is not None) + 10 * (item.get_closest_marker("slow") is not None)


def _shared_fixtures(item: pytest.Function) -> list[str]:
    """The suite's own fixtures made once per session or package that ``item`` uses (pytest's and plugins' aside)."""
    return [
        name
        for name, defs in item._fixtureinfo.name2fixturedefs.items()
        if defs[-1].scope in ("session", "package") and defs[-1].func.__module__.startswith("tests.")
    ]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, object, object]:
    """Setup, call and teardown of a test not marked ``browser`` see no Chromium."""
    if item.get_closest_marker("browser") is not None:
        return (yield)
    before = {name: os.environ.get(name) for name in BLOCKED_ENV}
    os.environ.update(BLOCKED_ENV)
    try:
        return (yield)
    finally:
        for name, value in before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """A test not marked ``browser`` that failed for want of Chromium is told why."""
    report: pytest.TestReport = yield
    if report.failed and item.get_closest_marker("browser") is None and "no Chromium found" in report.longreprtext:
        advice = "it launched Chromium: mark it @pytest.mark.browser (or its module pytestmark = pytest.mark.browser)"
        report.sections.append(("not marked browser", advice))
    return report


@pytest.fixture(scope="session", autouse=True)
def private_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A cache folder of this session's own (verification records), so no test reads or fills the user's;
    in the environment, so command-line runs in subprocesses use it too."""
    folder = tmp_path_factory.mktemp("cache")
    before = os.environ.get("CAPREPLAY_CACHE_DIR")
    os.environ["CAPREPLAY_CACHE_DIR"] = str(folder)
    yield folder
    if before is None:
        del os.environ["CAPREPLAY_CACHE_DIR"]
    else:
        os.environ["CAPREPLAY_CACHE_DIR"] = before


@pytest.fixture(scope="session")
def captured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Captured]:
    """The fixture sites captured once (real mitmproxy, real Chromium); the origin is stopped afterwards."""
    yield asyncio.run(capture_fixture_sites(tmp_path_factory.mktemp("capture") / "snapshot"))


@pytest.fixture(scope="session")
def world_gold_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder of a gold run of every world task, one repeat, two browsers on this machine (made once)."""
    run_dir = tmp_path_factory.mktemp("world-gold") / "runs" / "gold"
    local_gold_run(run_dir)
    return run_dir


@pytest.fixture(scope="session")
def world_judge() -> Iterator[WorldJudge]:
    """One judging session on the world snapshot for every judging of the test session: each cited page is
    rendered once, whichever run or perturbed answer cites it."""
    with WorldJudge(world_workflows()[1]) as judge:
        yield judge


@pytest.fixture(scope="session")
def world_gold_verdicts(
    world_gold_run: Path, world_judge: WorldJudge, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, EpisodeVerdict]:
    """Each world task's verdict on the session's gold run, by task id (judged once)."""
    records = {r.key.task: r for r in read_episodes(world_gold_run)}
    workflows, _ = world_workflows()
    items = [(records[t.id], t) for t in workflows.tasks]
    verdicts = world_judge.judge(items, TRUE_CLAIMS, tmp_path_factory.mktemp("judge-gold"))
    return {t.id: v for t, v in zip(workflows.tasks, verdicts, strict=True)}


@pytest.fixture(scope="session")
def committed_snapshot() -> Path:
    """The snapshot of the fixture sites committed in the repository."""
    return ROOT / "snapshots" / "fixtures"


@pytest.fixture
def results(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A study results folder with a fresh registration of a copy of tasks.json, and a dummy Anthropic key
    (for the study-run and report tests, which call :class:`~capreplay.testing.fake_llm.FakeLLM`)."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-dummy-for-the-fake")
    return registered_results(tmp_path)
