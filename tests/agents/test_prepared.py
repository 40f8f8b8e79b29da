"""Episodes that do not wait for a launch: the next episode's fresh browser and agent are made ready while the
current one runs, every episode still has its own; the settling is part of a run's plan and of its registration."""

from __future__ import annotations

import asyncio
import itertools
import json
import os
from pathlib import Path

import pytest

from capreplay.agents.gold import SETTLINGS, settling_of
from capreplay.agents.harness import AgentSpec, prepare
from capreplay.agents.run import agent_spec, execute_run, new_run_info, read_agent_run, start_agent_run
from capreplay.models.episode import DEFAULT_SETTLING, SETTLING_VARIABLE
from capreplay.replay.server import ReplayServer
from capreplay.runs.episode_log import read_episodes
from capreplay.runs.registration import collect_inputs, differences
from capreplay.runs.registration_file import RegisteredInputs
from capreplay.runs.tasks_file import load_tasks_file
from tests.support.processes import command_line, descendants
from tests.support.world_sample import FIXTURES, GOOD_PATH, HOME, sample_task, write_tasks


def _chromium_profiles() -> set[str]:
    """The throw-away profiles of the Chromium browsers this test process runs now (another test process on the
    machine, such as a second worker of the suite, launches and closes its own)."""
    found = set()
    for pid in descendants(os.getpid()):
        found |= {a.split("=", 1)[1] for a in command_line(pid).split() if a.startswith("--user-data-dir=")}
    return {p for p in found if "capreplay-profile-" in p}


@pytest.mark.browser
def test_a_run_launches_the_next_episodes_browser_while_the_current_one_runs(tmp_path: Path) -> None:
    tasks_file = write_tasks(tmp_path, [sample_task("a", GOOD_PATH), sample_task("b", GOOD_PATH)], repeats=2)
    workflows = load_tasks_file(tasks_file).workflows
    assert workflows is not None
    specs = {"gold": agent_spec("gold", workflows, tasks_file)}
    run_dir = tmp_path / "results" / "runs" / "r1"
    info = start_agent_run(run_dir, new_run_info("r1", None, tasks_file, workflows, FIXTURES, ["gold"], specs))
    assert info.settling == DEFAULT_SETTLING == "server-quiet"
    before = _chromium_profiles()
    summary = asyncio.run(execute_run(FIXTURES, info, workflows, specs, run_dir))
    assert summary.statuses == {"answered": 4}
    assert _chromium_profiles() <= before  # every browser, the ones made ready ahead too, is closed
    records = read_episodes(run_dir)
    assert [r.key for r in records] == info.planned
    for record in records:
        assert json.loads(record.answer or "") == {"product": "Fixture Mug", "product_url": HOME}
        # Each episode's own fresh browser: its start page was requested by that browser, not found in a cache.
        assert any(q.url == HOME and q.step == 0 for q in record.requests)
        assert record.launch_s is not None and record.launch_s > 0
    for earlier, later in itertools.pairwise(records):
        ended = earlier.started_at.timestamp() + earlier.duration_s
        launched = later.started_at.timestamp() - (later.launch_s or 0)
        assert launched < ended, "the next browser was launched only after the episode before it had ended"


@pytest.mark.browser
def test_a_prepared_browser_and_agent_are_closed_when_released_unused(tmp_path: Path) -> None:
    async def scenario() -> tuple[int | None, set[str]]:
        server = ReplayServer(FIXTURES, keep_log=True)
        await server.start()
        try:
            before = _chromium_profiles()
            ready = await prepare(server, AgentSpec("idle", ["sleep", "60"]), "server-quiet")
            opened = _chromium_profiles() - before
            assert len(opened) == 1 and ready.proc.returncode is None
            await ready.release()
            assert not (_chromium_profiles() & opened)
            return ready.proc.returncode, opened
        finally:
            await server.stop()

    code, _ = asyncio.run(scenario())
    assert code is not None


def test_the_gold_agent_leaves_its_waits_to_the_harness_when_the_harness_settles_on_the_server() -> None:
    assert settling_of("auto", {SETTLING_VARIABLE: "server-quiet"}) is SETTLINGS["harness"]
    assert settling_of("auto", {SETTLING_VARIABLE: "network-idle"}) is None
    assert settling_of("auto", {}) is None
    assert settling_of("network-idle", {SETTLING_VARIABLE: "server-quiet"}) is None


def test_a_resumed_run_settles_as_its_run_json_says(tmp_path: Path) -> None:
    tasks_file = write_tasks(tmp_path, [sample_task("a", GOOD_PATH)])
    workflows = load_tasks_file(tasks_file).workflows
    assert workflows is not None
    specs = {"gold": agent_spec("gold", workflows, tasks_file)}
    run_dir = tmp_path / "r1"
    old = new_run_info("r1", None, tasks_file, workflows, FIXTURES, ["gold"], specs)
    data = json.loads(old.model_dump_json())
    del data["settling"]  # a run.json written before the settling was recorded
    run_dir.mkdir()
    (run_dir / "run.json").write_text(json.dumps(data))
    assert read_agent_run(run_dir).settling == "network-idle"
    resumed = start_agent_run(run_dir, new_run_info("r1", None, tasks_file, workflows, FIXTURES, ["gold"], specs))
    assert resumed.settling == "network-idle"
    assert "settling" not in json.loads((run_dir / "run.json").read_text())  # left as it was written


def test_the_registration_holds_the_agents_settling(tmp_path: Path) -> None:
    tasks_file = write_tasks(tmp_path, [sample_task("a", GOOD_PATH)])
    current = collect_inputs(tasks_file)
    assert current.agent_settling == DEFAULT_SETTLING
    older = RegisteredInputs.model_validate(current.model_dump(exclude={"agent_settling"}))
    assert older.agent_settling is None
    assert differences(older, current) == [f"agent settling changed (network-idle -> {DEFAULT_SETTLING})"]
    assert differences(current, current) == []
