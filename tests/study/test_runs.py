"""Study runs: the seeded call plan, append-only records, the executor, and resuming a run killed mid-way.

The model calls go through the real Anthropic SDK over real HTTP to :class:`FakeLLM`, whose request log
shows which cells were called, and how often. The killed run is a real subprocess (this file, run as a
script) killed with SIGKILL.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import signal
import sys
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import pytest

from capreplay.errors import InputError, UsageError
from capreplay.llm import make_client
from capreplay.llm.messages import ModelSettings
from capreplay.models.task import Representation, Study
from capreplay.runs.folder import run_dir, start_run
from capreplay.runs.registration import model_settings_data
from capreplay.runs.tasks_file import load_tasks_file
from capreplay.study.answers.prompt import build_request
from capreplay.study.records import Cell, RunInfo, RunRecord
from capreplay.study.run.cells import call_model, execute, plan_calls
from capreplay.study.run_files import CALLS_FILE, RecordLog, finished_cells, read_records
from capreplay.testing.fake_llm import FakeLLM, Received, Reply

REPO = Path(__file__).resolve().parents[2]
TEST_KEY = "sk-ant-test-runs"
CELL_MARK = re.compile(r"CELL\[([^\]]+)\]")


def _start(folder: Path, planned: RunInfo) -> RunInfo:
    return start_run(folder, planned, "a study run", "seed, tasks, settings or registration")


def study() -> Study:
    loaded = load_tasks_file(REPO / "tasks.json").study
    assert loaded is not None
    return loaded


STUDY = study()
PAGES = [p.id for p in STUDY.pages]
REPRESENTATIONS: list[Representation] = list(STUDY.protocol.representations)


# -------------------------------------------------------------------------------------------- planning


def test_the_plan_is_every_cell_once_in_page_sessions() -> None:
    plan = plan_calls(7, 3, PAGES, STUDY.tasks, REPRESENTATIONS)
    assert len(plan) == 3 * 80 * 7 == len(set(plan))
    expected = {
        Cell(repeat=r, page=t.page, task=t.id, representation=rep)
        for r in range(3)
        for t in STUDY.tasks
        for rep in REPRESENTATIONS
    }
    assert set(plan) == expected
    # Repeats run one after the other, and a page's calls are contiguous within a repeat: one page session.
    assert [c.repeat for c in plan] == sorted(c.repeat for c in plan)
    starts = [(c.repeat, c.page) for c in plan]
    sessions = [s for i, s in enumerate(starts) if i == 0 or starts[i - 1] != s]
    assert len(sessions) == 3 * 10 == len(set(sessions))


def test_the_plan_is_deterministic_for_a_seed_and_differs_between_seeds() -> None:
    # The five representations the order was first pinned with: the same seed must still give that order.
    five: list[Representation] = ["raw_html", "markdown", "accessibility_tree", "screenshot", "indexed_dom"]
    plan = plan_calls(20261130, 3, PAGES, STUDY.tasks, five)
    assert plan == plan_calls(20261130, 3, PAGES, STUDY.tasks, five)
    assert plan != plan_calls(20261131, 3, PAGES, STUDY.tasks, five)
    page_orders = [[c.page for c in plan if c.repeat == r] for r in range(3)]
    orders = [list(dict.fromkeys(o)) for o in page_orders]
    assert orders[0] != orders[1] != orders[2]  # each repeat draws its own page order
    assert all(order != PAGES for order in orders)
    first_session = [c for c in plan if c.repeat == 0 and c.page == orders[0][0]]
    task_ids = [t.id for t in STUDY.tasks]
    in_file_order = sorted(
        first_session, key=lambda c: (task_ids.index(c.task), five.index(c.representation))
    )
    assert first_session != in_file_order  # calls are shuffled within the session
    # The order is part of the registered protocol: pin it, so a change of the shuffle is seen.
    assert [c.key() for c in plan[:3]] == EXPECTED_FIRST_CELLS


EXPECTED_FIRST_CELLS = [
    "0/search/search.read.1/screenshot",
    "0/search/search.read.3/indexed_dom",
    "0/search/search.read.5/raw_html",
]


def test_a_plan_of_unknown_or_repeated_things_is_refused() -> None:
    with pytest.raises(UsageError, match=r"task 'article\.read\.1' is on a page that is not planned"):
        plan_calls(1, 1, ["docs"], STUDY.tasks, REPRESENTATIONS)
    with pytest.raises(UsageError, match="representation 'markdown' is given twice"):
        plan_calls(1, 1, PAGES, STUDY.tasks, ["markdown", "markdown"])
    with pytest.raises(UsageError, match="page 'docs' is given twice"):
        plan_calls(1, 1, ["docs", "docs"], STUDY.tasks, REPRESENTATIONS)


# -------------------------------------------------------------------------------------------- records


def record(cell: Cell, text: str = '{"answer": "x"}') -> RunRecord:
    return RunRecord(
        cell=cell, request_sha256="0" * 64, started_at=datetime(2026, 11, 30, tzinfo=UTC), latency_s=0.1,
        answer_text=text,
    )


CELLS = plan_calls(1, 1, ["article"], STUDY.page_tasks("article"), ["markdown"])


def test_records_are_lines_and_a_torn_last_line_is_ignored_reported_and_cut(tmp_path: Path) -> None:
    with RecordLog(tmp_path) as log:
        for cell in CELLS[:3]:
            log.append(record(cell))
    path = tmp_path / CALLS_FILE
    whole = path.read_bytes()
    assert whole.count(b"\n") == 3
    torn = record(CELLS[3]).model_dump_json().encode()[:40]
    path.write_bytes(whole + torn)  # a crash in the middle of writing the fourth line

    finished = finished_cells(tmp_path)
    assert finished.cells == frozenset(CELLS[:3])
    assert finished.torn_tail == torn
    with RecordLog(tmp_path) as log:
        assert log.torn_tail == torn
        assert log.finished == set(CELLS[:3])
        assert path.read_bytes() == whole  # cut off before anything is appended
        log.append(record(CELLS[3]))
        with pytest.raises(ValueError, match="is already recorded"):
            log.append(record(CELLS[0]))
    read = read_records(path)
    assert [r.cell for r in read.records] == CELLS[:4]
    assert read.torn_tail == b""


def test_a_damaged_complete_line_or_a_repeated_cell_stops_the_run(tmp_path: Path) -> None:
    path = tmp_path / CALLS_FILE
    good = record(CELLS[0]).model_dump_json().encode() + b"\n"
    path.write_bytes(good + b'{"cell": "broken"}\n' + record(CELLS[1]).model_dump_json().encode() + b"\n")
    with pytest.raises(InputError, match=r"calls\.jsonl: line 2 is not a run record"):
        RecordLog(tmp_path)
    path.write_bytes(good + good)
    with pytest.raises(InputError, match=rf"line 2 records cell {re.escape(CELLS[0].key())} again \(line 1\)"):
        finished_cells(tmp_path)


def info(seed: int, plan: list[Cell], settings: ModelSettings) -> RunInfo:
    return RunInfo(
        run_id="run-1", registration="reg-1", created_at=datetime.now(UTC), seed=seed, repeats=1,
        representations=sorted({c.representation for c in plan}), model_settings=model_settings_data(settings),
        planned=plan,
    )


def test_a_resumed_run_must_have_the_same_plan(tmp_path: Path) -> None:
    folder = run_dir(tmp_path, "run-1")
    first = _start(folder, info(1, CELLS, STUDY.protocol.model))
    again = _start(folder, info(1, CELLS, STUDY.protocol.model))
    assert again.created_at == first.created_at  # the stored file is kept, not rewritten
    with pytest.raises(InputError, match=r"run\.json: this run was started with another plan"):
        _start(folder, info(2, CELLS[::-1], STUDY.protocol.model))
    with pytest.raises(InputError, match="must be letters, digits"):
        run_dir(tmp_path, "../x")


# -------------------------------------------------------------------------------------------- executing


def marked_page(cell: Cell) -> str:
    """A stand-in page whose text names its cell, so the fake server's log says which cell each call was."""
    return f"<main>CELL[{cell.key()}]</main>"


def called_cells(received: list[Received]) -> list[str]:
    return [m.group(1) for r in received if r.api == "messages" and (m := CELL_MARK.search(r.prompt))]


def settings_for(fake: FakeLLM) -> ModelSettings:
    return STUDY.protocol.model.model_copy(update={"base_url": fake.base_url, "timeout_s": 5.0})


async def run_cells(
    settings: ModelSettings, folder: Path, plan: list[Cell], concurrency: int
) -> tuple[int, dict[str, int], int]:
    """Execute ``plan`` into ``folder`` with the real SDK; returns (called, errors, unparseable)."""
    client = make_client(settings)

    async def call(cell: Cell) -> RunRecord:
        task = STUDY.task(cell.task)
        request = build_request(STUDY.protocol, task, cell.representation, marked_page(cell))
        return await call_model(client, cell, request, STUDY.protocol.answer_format(task, cell.representation))

    try:
        with RecordLog(folder) as log:
            summary = await execute(plan, call, log, concurrency)
    finally:
        await client.aclose()
    assert summary.planned == len(plan) == summary.skipped + summary.called
    return summary.called, summary.errors, summary.unparseable


async def test_execute_bounds_concurrency_never_retries_and_counts_errors_apart(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", TEST_KEY)
    plan = plan_calls(3, 1, ["article", "docs"], STUDY.page_tasks("article") + STUDY.page_tasks("docs"),
                      ["raw_html", "markdown"])
    # Every reply takes as long, so the server sees how many calls the client has in flight.
    failing = {
        plan[2].key(): Reply(status=500, delay_s=0.05),
        plan[5].key(): Reply(status=429, delay_s=0.05),
        plan[7].key(): Reply(text="no json here", delay_s=0.05),
    }
    in_flight = 0
    most = 0

    def answer(received: Received) -> Reply:
        nonlocal in_flight, most
        in_flight += 1
        most = max(most, in_flight)
        # Registered before the reply's own delay starts, so it runs before the reply is sent.
        asyncio.get_running_loop().call_later(0.05, release)
        key = CELL_MARK.search(received.prompt)
        assert key is not None
        return failing.get(key.group(1), Reply(text='{"answer": "x", "text": "Share", "selector": "a"}', delay_s=0.05))

    def release() -> None:
        nonlocal in_flight
        in_flight -= 1

    async with FakeLLM(answer) as fake:
        called, errors, unparseable = await run_cells(settings_for(fake), tmp_path, plan, concurrency=3)
        assert (called, errors, unparseable) == (len(plan), {"api_status": 1, "rate_limit": 1}, 1)
        assert most == 3
        # Failed cells are finished too: running again calls nothing.
        assert await run_cells(settings_for(fake), tmp_path, plan, concurrency=3) == (0, {}, 0)
    counts = Counter(called_cells(fake.received))
    assert set(counts) == {c.key() for c in plan} and set(counts.values()) == {1}  # no retries, no second calls
    records = {r.cell.key(): r for r in read_records(tmp_path / CALLS_FILE).records}
    assert records[plan[2].key()].error_kind == "api_status" and records[plan[2].key()].answer is None
    assert records[plan[5].key()].error_kind == "rate_limit"
    assert records[plan[7].key()].unparseable == "no JSON object in the reply"
    good = records[plan[0].key()]
    assert good.usage is not None and good.usage.input_tokens > 0 and good.request_id is not None
    assert good.answer is not None and good.error_kind is None


async def test_an_exception_in_a_call_stops_the_run_and_is_raised(tmp_path: Path) -> None:
    async def call(cell: Cell) -> RunRecord:
        if cell == CELLS[1]:
            raise RuntimeError("resolver bug")
        await asyncio.sleep(0.01)
        return record(cell)

    with RecordLog(tmp_path) as log, pytest.raises(RuntimeError, match="resolver bug"):
        await execute(CELLS, call, log, 2)
    assert CELLS[1] not in finished_cells(tmp_path).cells


# -------------------------------------------------------------------------------------------- killed and resumed

KILL_PAGES = ["article", "docs", "form"]
KILL_REPRESENTATIONS: list[Representation] = ["markdown", "raw_html"]


def kill_plan(seed: int) -> list[Cell]:
    tasks = [t for t in STUDY.tasks if t.page in KILL_PAGES]
    return plan_calls(seed, 1, KILL_PAGES, tasks, KILL_REPRESENTATIONS)


async def worker_main(base_url: str, folder: Path, seed: int) -> None:
    """The run a test kills: plan, write run.json, execute with the protocol's settings against ``base_url``."""
    settings = STUDY.protocol.model.model_copy(update={"base_url": base_url, "timeout_s": 10.0})
    plan = kill_plan(seed)
    _start(folder, info(seed, plan, settings))
    await run_cells(settings, folder, plan, concurrency=2)


async def run_worker(base_url: str, folder: Path, seed: int) -> asyncio.subprocess.Process:
    env = dict(os.environ, ANTHROPIC_API_KEY=TEST_KEY)
    env.pop("ANTHROPIC_BASE_URL", None)
    return await asyncio.create_subprocess_exec(
        sys.executable, __file__, base_url, str(folder), str(seed), env=env, cwd=REPO,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )


def record_lines(folder: Path) -> int:
    try:
        return (folder / CALLS_FILE).read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0


@pytest.mark.slow  # two worker processes, one killed mid-way: 7 to 10 s
async def test_a_run_killed_mid_way_resumes_without_calling_a_finished_cell_twice(tmp_path: Path) -> None:
    folder = run_dir(tmp_path, "run-1")
    plan = kill_plan(11)
    async with FakeLLM(Reply(text='{"answer": "x", "text": "Submit", "selector": "button"}', delay_s=0.1)) as fake:
        process = await run_worker(fake.base_url, folder, 11)
        try:
            async with asyncio.timeout(60):
                while record_lines(folder) < 6:
                    assert process.returncode is None, "the run ended before it could be killed"
                    await asyncio.sleep(0.01)
        finally:
            process.send_signal(signal.SIGKILL)
            await process.wait()
        assert process.returncode == -signal.SIGKILL
        before_kill = finished_cells(folder).cells
        assert 6 <= len(before_kill) < len(plan)
        calls_before = len(fake.received)

        resumed = await run_worker(fake.base_url, folder, 11)
        _, stderr = await asyncio.wait_for(resumed.communicate(), 60)
        assert resumed.returncode == 0, stderr.decode()

    first_run = Counter(called_cells(fake.received[:calls_before]))
    second_run = Counter(called_cells(fake.received[calls_before:]))
    finished_keys = {c.key() for c in before_kill}
    assert finished_keys <= set(first_run)
    assert not finished_keys & set(second_run), "a finished cell was called again"
    # Only calls in flight at the kill (at most the concurrency) are made twice: they were never recorded.
    in_flight = set(first_run) - finished_keys
    assert len(in_flight) <= 2
    assert set(first_run + second_run) == {c.key() for c in plan}
    assert all(n == 1 for n in first_run.values()) and all(n == 1 for n in second_run.values())
    records = read_records(folder / CALLS_FILE).records
    assert sorted(r.cell.key() for r in records) == sorted(c.key() for c in plan)
    assert RunInfo.model_validate_json((folder / "run.json").read_bytes()).planned == plan


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="a study run for the kill-and-resume test")
    parser.add_argument("base_url")
    parser.add_argument("folder", type=Path)
    parser.add_argument("seed", type=int)
    arguments = parser.parse_args()
    asyncio.run(worker_main(arguments.base_url, arguments.folder, arguments.seed))
