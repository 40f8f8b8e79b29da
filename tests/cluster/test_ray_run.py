"""``capreplay run --backend ray`` on a real Ray cluster on this machine: a head node and a second node, each
with one core for episodes, every server bound to 127.0.0.1, the dashboard's web server off, a bounded object store.

The world's gold run goes through the cluster while one worker process is killed in the middle of an
episode: Ray runs that episode again, and the log ends complete, each episode once, with the same answers,
screenshots and verdicts as the same run on this machine (the session's local gold run); resumed, it runs
nothing again. The cluster is tests/cluster/conftest.py's.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from capreplay.archive.snapshot.manifest import checked_manifest
from capreplay.cluster.connect import LOOPBACK_SWITCH
from capreplay.cluster.episodes import execute_run_ray
from capreplay.cluster.snapshot_copy import COPIES_DIR
from capreplay.judge.verdict import EpisodeVerdict
from capreplay.models.episode import EpisodeRecord
from capreplay.runs.episode_log import read_episodes
from tests.support.processes import command_line, descendants, listening
from tests.support.world_gold import TASKS_FILE, TRUE_CLAIMS, WorldJudge, gold_run_info, world_workflows

pytestmark = [pytest.mark.browser, pytest.mark.slow]

EPISODE_TITLE = "ray::episode "
DASHBOARD_PORT = 8265
KILL_WITHIN_S = 240.0


def test_every_process_of_the_cluster_listens_on_loopback_only(cluster: Any) -> None:
    sockets = listening(descendants(os.getpid()))
    assert sockets, "the cluster's processes listen nowhere: they were not found"
    outside = [(address, port, command_line(pid)[:60]) for address, port, pid in sockets
               if address not in ("127.0.0.1", "::1")]  # fmt: skip
    assert outside == []
    assert DASHBOARD_PORT not in {port for _, port, _ in sockets}, "the dashboard's web server is on"


class Killer(threading.Thread):
    """Waits for a worker running an episode for a second, then kills it (SIGKILL) and notes when and which."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.killed: str | None = None
        self.at: datetime | None = None

    def run(self) -> None:
        seen: dict[int, float] = {}
        deadline = time.monotonic() + KILL_WITHIN_S
        while time.monotonic() < deadline:
            for pid in descendants(os.getpid()):
                title = command_line(pid)
                if not title.startswith(EPISODE_TITLE):
                    continue
                first = seen.setdefault(pid, time.monotonic())
                if time.monotonic() - first >= 1.0:
                    self.at = datetime.now(UTC)
                    os.kill(pid, signal.SIGKILL)
                    self.killed = title.removeprefix(EPISODE_TITLE).strip()
                    return
            time.sleep(0.1)


def _by_id(records: list[EpisodeRecord]) -> dict[str, EpisodeRecord]:
    return {r.key.id(): r for r in records}


def test_a_gold_run_on_ray_with_a_worker_killed_equals_the_local_run(
    cluster: Any,
    world_gold_run: Path,
    world_gold_verdicts: dict[str, EpisodeVerdict],
    world_judge: WorldJudge,
    tmp_path: Path,
    private_cache: Path,
) -> None:
    workflows, snapshot = world_workflows()
    run_dir = tmp_path / "runs" / "gold"
    info = gold_run_info(run_dir)
    killer = Killer()
    killer.start()
    summary = execute_run_ray(snapshot, info, workflows, TASKS_FILE, run_dir, address=cluster.address)
    killer.join(timeout=5)

    assert killer.killed is not None and killer.at is not None, "no episode's worker was seen to kill"
    records = read_episodes(run_dir)
    assert len({r.key for r in records}) == len(records) == len(info.planned)
    assert (summary.ran, summary.skipped) == (len(info.planned), 0)
    assert summary.statuses == {"answered": len(info.planned)}
    ray_run, local_run = _by_id(records), _by_id(read_episodes(world_gold_run))
    assert set(ray_run) == set(local_run)
    # The killed episode was run again from its start, after the kill.
    assert ray_run[killer.killed].started_at > killer.at

    for name, record in ray_run.items():
        local = local_run[name]
        assert (record.status, record.answer, record.final_url) == (local.status, local.answer, local.final_url)
        assert [(s.action, s.args, s.url) for s in record.steps] == [(s.action, s.args, s.url) for s in local.steps]
        for step, local_step in zip(record.steps, local.steps, strict=True):
            assert step.screenshot is not None and local_step.screenshot is not None
            shot = (run_dir / step.screenshot).read_bytes()
            assert shot == (world_gold_run / local_step.screenshot).read_bytes(), f"{name} step {step.n}"

    tasks = {t.id: t for t in workflows.tasks}
    # Judged in the session's judging session, as the local run was: the cited pages are rendered once for both.
    on_ray = world_judge.judge([(r, tasks[r.key.task]) for r in records], TRUE_CLAIMS, tmp_path / "judge")
    for record, verdict in zip(records, on_ray, strict=True):
        local_verdict = world_gold_verdicts[record.key.task]
        assert verdict.model_dump(exclude={"judge_s"}) == local_verdict.model_dump(exclude={"judge_s"}), record.key.id()
        assert verdict.score == 1.0

    # Both nodes share this machine's cache folder: the snapshot was copied there once, and nothing half-made.
    copies = private_cache / COPIES_DIR
    assert (copies / info.snapshot_id).is_dir() and not list(copies.glob("*.part"))

    # The same run resumed runs nothing again: every episode is recorded, once.
    again = execute_run_ray(snapshot, info, workflows, TASKS_FILE, run_dir, address=cluster.address)
    assert (again.ran, again.skipped) == (0, len(info.planned))
    assert read_episodes(run_dir) == records


def test_the_command_line_starts_a_loopback_ray_of_its_own(tmp_path: Path) -> None:
    workflows, _ = world_workflows()
    task = workflows.tasks[0].id
    env = {k: v for k, v in os.environ.items() if k not in ("RAY_ADDRESS", LOOPBACK_SWITCH)}
    command = [sys.executable, "-m", "capreplay", "run", "--backend", "ray", "--agent", "gold", "--tasks",
               str(TASKS_FILE), "--task", task, "--repeats", "1", "--results", str(tmp_path)]  # fmt: skip
    seen: set[str] = set()
    with subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as proc:
        deadline = time.monotonic() + 300
        while proc.poll() is None and time.monotonic() < deadline:
            seen |= {address for address, _, _ in listening(descendants(proc.pid))}
            time.sleep(0.5)
        if proc.poll() is None:
            proc.kill()
        out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err[-2000:]
    assert seen and seen <= {"127.0.0.1", "::1"}, seen
    assert "run gold: 1 episodes planned, 0 already recorded, 1 run" in out
    [record] = read_episodes(tmp_path / "runs" / "gold")
    assert record.status == "answered" and record.key.task == task
    for step in record.steps:
        assert step.screenshot is not None and (tmp_path / "runs" / "gold" / step.screenshot).stat().st_size > 0


def test_a_node_copy_that_no_longer_matches_its_manifest_is_copied_again(
    cluster: Any, tmp_path: Path, private_cache: Path
) -> None:
    workflows, snapshot = world_workflows()
    info = gold_run_info(tmp_path / "runs" / "first")
    copy = private_cache / COPIES_DIR / info.snapshot_id
    if not copy.is_dir():  # the nodes' copy is made by the session's first Ray run: this one when run alone
        first = info.model_copy(update={"planned": info.planned[:1]})
        execute_run_ray(snapshot, first, workflows, TASKS_FILE, tmp_path / "runs" / "first", address=cluster.address)
    checked_manifest(copy)  # whole before it is damaged
    warc = next((copy / "archive").glob("*.warc.gz"))
    original = (snapshot / "archive" / warc.name).read_bytes()
    warc.write_bytes(original[:-1] + bytes([original[-1] ^ 1]))  # same size, one bit changed

    second = info.model_copy(update={"planned": info.planned[1:2]})
    done = execute_run_ray(snapshot, second, workflows, TASKS_FILE, tmp_path / "runs" / "second",
                           address=cluster.address)  # fmt: skip
    assert done.statuses == {"answered": 1}
    assert warc.read_bytes() == original
    checked_manifest(copy)


def test_the_benchmark_runs_on_the_cluster_and_the_judge_scores_every_episode(cluster: Any, tmp_path: Path) -> None:
    """The benchmark's own command on Ray: a task spanning two applications, one replayed strictly, on the committed
    snapshot (the local backend runs the same command in tests/benchmark/test_frozen_benchmark.py)."""
    benchmark = Path(__file__).resolve().parents[2] / "benchmark"
    tasks = ("cross-india-currency-code",)
    ran = subprocess.run([sys.executable, "-m", "capreplay", "run", "--benchmark", str(benchmark), "--agent", "gold",
                          *(a for t in tasks for a in ("--task", t)), "--backend", "ray", "--ray-address",
                          cluster.address, "--results", str(tmp_path)],
                         capture_output=True, text=True, timeout=900, check=False)  # fmt: skip
    assert ran.returncode == 0, ran.stdout + ran.stderr[-3000:]
    assert "0 left the snapshot" in ran.stdout
    run_dir = tmp_path / "runs" / "gold"
    assert sorted((r.key.task, r.status) for r in read_episodes(run_dir)) == [(t, "answered") for t in sorted(tasks)]
    judge = [sys.executable, "-m", "capreplay", "judge", str(run_dir), "--cache", str(tmp_path / "judge-cache")]
    judged = subprocess.run(judge, capture_output=True, text=True, timeout=600, check=False)
    assert judged.returncode == 0, judged.stdout + judged.stderr
    lines = (run_dir / "verdicts.jsonl").read_text().splitlines()
    verdicts = [EpisodeVerdict.model_validate_json(line) for line in lines]
    assert sorted((v.task, v.score) for v in verdicts) == [(t, 1.0) for t in sorted(tasks)]
